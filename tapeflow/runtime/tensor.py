"""Tensor, Variable, TensorShape and conversion of Python/NumPy values to tensors.

A Tensor is an immutable NumPy value (0-d values are NumPy scalars, as
``Tensor.numpy()`` returns in TensorFlow) with a process-unique id that tapes
use to track it. A Variable is mutable state with an id of its own; reading it
yields a fresh Tensor, recorded on the tapes that watch the variable.
"""
from __future__ import annotations

import inspect
import itertools
from collections.abc import Sequence

import numpy as np

from ..errors import InvalidArgumentError, user_line
from ..ir import dtypes as D
from ..ir.opdef import AVal
from .recorder import STATE, Entry, current_trace, init_scope
from . import conversions as _conversions
from . import variable_policy as _policy
from .registry import GRADS
from .stack import current_name_scope
from . import placement_log
from .placement_log import ENABLED as LOG_PLACEMENT
from .tensor_shape import TensorShape

_next_id = itertools.count(1).__next__


# ``tf.stack``, for converting a list that holds tensors; installed by ``ops.operators``.
STACK = None


class _Operators:
    """Python operators shared by Tensor, Variable and SymbolicTensor.

    Each operator is a tapeflow op, so ``ops.operators`` installs them (as TensorFlow's
    math_ops overloads its Tensor): the core defines the class, never the ops.
    """

    __slots__ = ()
    __array_priority__ = 100

    def __pos__(self): return self

    def __hash__(self):
        raise TypeError(f"{type(self).__name__} is unhashable. Instead, use .ref() as the key.")

    def ref(self):
        return _Ref(self)

    experimental_ref = ref


class _Ref:
    """Hashable reference to a Tensor or Variable (TensorFlow's ``.ref()``)."""

    __slots__ = ("_obj",)

    def __init__(self, obj):
        self._obj = obj

    def deref(self):
        return self._obj

    def __hash__(self):
        return self._obj._id

    def __eq__(self, other):
        return isinstance(other, _Ref) and other._obj is self._obj


def _note_numpy_exit(tid):
    """A tracked tensor left tapeflow (became a NumPy array): remember where, for explain()."""
    for rec in STATE.tapes:
        if rec.tracks(tid):
            rec.events.append(("numpy", (tid,), None, user_line()))


def _format_value(v, is_repr):
    """The value as TensorFlow shows it in a repr (``numpy=``) or str (``tf.Tensor(``): text
    over several lines starts on a line of its own."""
    if isinstance(v, np.generic):
        return str(v)
    text = repr(v) if is_repr else str(v)
    return "\n" + text if "\n" in text else text


class Tensor(_Operators):
    """An immutable multi-dimensional array with a dtype (TensorFlow's EagerTensor).

    Made by ops and ``tf.constant``; NumPy arrays and Python values convert to tensors where
    an op needs one.

    >>> t = tf.constant([[1.0, 2.0]])
    >>> t.shape, t.dtype
    (TensorShape([1, 2]), tf.float32)
    >>> (t * 2 + 1).numpy()
    array([[3., 5.]], dtype=float32)
    """

    __slots__ = ("_value", "_id", "__weakref__")

    def __init__(self, value) -> None:
        self._value = value
        self._id = _next_id()

    # -- metadata --------------------------------------------------------------
    @property
    def shape(self):
        return TensorShape(self._value.shape)

    def get_shape(self):
        return self.shape

    @property
    def dtype(self):
        return D.as_dtype(self._value.dtype)

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def aval(self):
        return AVal(self._value.shape, D.as_dtype(self._value.dtype))

    @property
    def device(self):
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    # -- leaving tapeflow --------------------------------------------------------
    def numpy(self) -> np.ndarray | np.generic:
        """The value as NumPy (a NumPy scalar for 0-d tensors); a copy the caller may mutate.

        >>> tf.constant([1, 2]).numpy()
        array([1, 2], dtype=int32)
        """
        if STATE.tapes:
            _note_numpy_exit(self._id)
        v = self._value
        return v.copy() if isinstance(v, np.ndarray) else v

    def __array__(self, dtype=None, copy=None):
        if STATE.tapes:
            _note_numpy_exit(self._id)
        a = np.asarray(self._value)
        if dtype is not None and a.dtype != dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def __bool__(self):
        if self._value.size != 1 or self._value.ndim:
            if self._value.ndim == 0:
                return bool(self._value)
            raise ValueError("The truth value of an array with more than one element is ambiguous. "
                             "Use a.any() or a.all()")
        return bool(self._value)

    def __float__(self):
        return float(self._value)

    def __int__(self):
        return int(self._value)

    def __index__(self):
        if self.dtype.is_integer and self._value.ndim == 0:
            return int(self._value)
        raise TypeError(f"Only integer scalar tensors can be used as an index, got {self.dtype.name} "
                        f"with shape {self.shape}")

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return self._value.shape[0]

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        return (self[i] for i in range(self._value.shape[0]))

    def __format__(self, spec):
        if self._value.ndim == 0 and spec:
            return format(self._value.item(), spec)
        return str(self)

    def __repr__(self):
        return (f"<tf.Tensor: shape={self.shape}, dtype={self.dtype.name}, "
                f"numpy={_format_value(self._value, True)}>")

    def __str__(self):
        return f"tf.Tensor({_format_value(self._value, False)}, shape={self.shape}, dtype={self.dtype.name})"


def wrap(array):
    """A Tensor owning ``array`` (0-d becomes a NumPy scalar, arrays become read-only)."""
    if isinstance(array, np.ndarray):
        if array.ndim == 0:
            array = array[()]
        else:
            array.flags.writeable = False
    return Tensor(array)


class _VariableType(type):
    """``tf.Variable(...)`` runs through the creators of the enclosing
    ``tf.variable_creator_scope``s (none: straight to ``__init__``)."""

    def __call__(cls, *args, **kwargs):
        if cls is not Variable or not _policy.creators():
            return super().__call__(*args, **kwargs)
        bound = _VARIABLE_ARGS.bind(None, *args, **kwargs)
        bound.apply_defaults()
        kw = dict(_policy.TF_ONLY_DEFAULTS)
        kw.update((k, v) for k, v in bound.arguments.items() if k != "self")
        return _policy.run_creators(lambda **k: type.__call__(cls, **k), kw)


# The op TensorFlow runs for each kind of write (its device-placement log names it).
_ASSIGN_OPS = {"assign to": "AssignVariableOp", "assign_add to": "AssignAddVariableOp",
               "assign_sub to": "AssignSubVariableOp"}


class Variable(_Operators, metaclass=_VariableType):
    """Mutable state; trainable variables are watched automatically by tapes that read them.

    Args:
      initial_value: a value convertible to a tensor (or a callable returning one).
      trainable: watched by tapes that read it (and listed in ``trainable_variables``); by
        default True, False for ``synchronization=ON_READ``.
      name: its name (TensorFlow's ``name:0`` form).
      dtype: convert ``initial_value`` to this dtype.
      shape: the variable's shape (checked against the initial value).
      aggregation, synchronization: TensorFlow's distribution policy
        (``tf.VariableAggregation``, ``tf.VariableSynchronization``), recorded on the variable.

    >>> v = tf.Variable([1.0, 2.0], name="v")
    >>> v
    <tf.Variable 'v:0' shape=(2,) dtype=float32, numpy=array([1., 2.], dtype=float32)>
    >>> v.assign_add([1.0, 1.0]).numpy()
    array([2., 3.], dtype=float32)
    >>> with tf.GradientTape() as tape:
    ...     y = tf.reduce_sum(v * v)
    >>> tape.gradient(y, v)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([4., 6.], dtype=float32)>
    """

    __slots__ = ("_value", "_id", "_trainable", "_name", "_aggregation", "_synchronization",
                 "__weakref__")

    def __init__(self, initial_value=None, trainable: bool | None = None, name: str | None = None,
                 dtype: D.DType | str | None = None,
                 shape: Sequence[int | None] | None = None,
                 aggregation=_policy.VariableAggregation.NONE,
                 synchronization=_policy.VariableSynchronization.AUTO) -> None:
        synchronization = _policy.as_synchronization(synchronization)
        aggregation = _policy.as_aggregation(aggregation)
        if trainable is None:
            trainable = synchronization is not _policy.VariableSynchronization.ON_READ
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if callable(initial_value):
            with init_scope():      # as TensorFlow: an initializer runs outside any function
                initial_value = initial_value()
        with STATE_paused():
            t = convert_to_tensor(initial_value, dtype=dtype)
        if not isinstance(t, Tensor):
            raise ValueError(f"A Variable's initial value must not depend on the inputs of a traced "
                             f"function (at {user_line()}); create variables from concrete values.")
        self._value = np.array(t._value, copy=True)
        if self._value.ndim == 0:
            self._value = self._value[()]
        else:
            self._value.flags.writeable = False
        self._id = _next_id()
        self._trainable = bool(trainable)
        self._aggregation, self._synchronization = aggregation, synchronization
        self._name = current_name_scope() + (name or "Variable")
        ctx = current_trace()
        if ctx is not None:
            ctx.on_variable_created(self)
        elif LOG_PLACEMENT[0]:   # tf.debugging.set_log_device_placement: TF's two ops
            placement_log.executed("VarHandleOp")
            placement_log.executed("AssignVariableOp")

    @property
    def name(self):
        return f"{self._name}:0"

    @property
    def trainable(self):
        return self._trainable

    @property
    def aggregation(self):
        return self._aggregation

    @property
    def synchronization(self):
        return self._synchronization

    @property
    def shape(self):
        return TensorShape(self._value.shape)

    def get_shape(self):
        return self.shape

    @property
    def dtype(self):
        return D.as_dtype(self._value.dtype)

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def aval(self):
        return AVal(self._value.shape, self.dtype)

    def read(self):
        """A Tensor holding the current value; watched/recorded on the tapes that see this variable."""
        ctx = current_trace()
        t = Tensor(self._value) if ctx is None else ctx.read_variable(self)
        if LOG_PLACEMENT[0] and ctx is None:   # tf.debugging.set_log_device_placement
            placement_log.executed("ReadVariableOp")
        if STATE.var_watchers:
            for w in STATE.var_watchers:
                w.setdefault(self._id, self)
        if STATE.tapes:
            entry = None
            for rec in STATE.tapes:
                if rec.watch_accessed and self._trainable:
                    rec.watch_variable(self)
                if self._id in rec.tensor_op and self.dtype.is_floating:
                    if entry is None:
                        av = (self.aval,)
                        entry = Entry("Identity", {}, GRADS["Identity"], (self._id,), (t._id,),
                                      (None,), (None,), av, av)
                    rec.record(entry)
        return t

    value = read
    read_value = read

    def _check_update(self, d, op):
        """TensorFlow's Assign{Add,Sub}VariableOp takes a delta of the variable's own shape (no
        broadcasting): InvalidArgumentError when it runs eagerly, ValueError from shape
        inference in a function."""
        shape = tuple(d.shape)
        if len(shape) == self._value.ndim and all(
                a is None or a == b for a, b in zip(shape, self._value.shape)):
            return
        if current_trace() is not None:
            raise ValueError(f"Shapes must be equal: cannot update variable {self.name} of shape "
                             f"{list(self._value.shape)} with a value of shape {list(d.shape)} "
                             f"[at {user_line()}]")
        raise InvalidArgumentError(f"{op}: Cannot update variable with shape "
                                   f"{list(self._value.shape)} using a Tensor with shape "
                                   f"{list(d.shape)}, shapes must be equal. [at {user_line()}]")

    def _current(self):
        """The value an assign_add/assign_sub updates: not a read (TensorFlow's
        AssignAddVariableOp reads nothing a tape or a gradient sees)."""
        ctx = current_trace()
        return Tensor(self._value) if ctx is None else ctx.variable_value(self)

    def numpy(self) -> np.ndarray | np.generic:
        v = self._value
        return v.copy() if isinstance(v, np.ndarray) else v

    def __array__(self, dtype=None, copy=None):
        a = np.array(self._value, dtype=dtype, copy=True)
        return a

    def _set(self, t, what):
        if tuple(t.shape) != tuple(self._value.shape):
            raise ValueError(f"Cannot {what} variable {self.name}: its shape {self.shape} and the "
                             f"value's shape {t.shape} are incompatible [at {user_line()}]")
        ctx = current_trace()
        if ctx is not None:
            ctx.assign_variable(self, t)  # written back after each call of the compiled function
            return self
        v = t._value
        if isinstance(v, np.ndarray):
            v = np.array(v, copy=True)
            v.flags.writeable = False
        self._value = v
        if LOG_PLACEMENT[0]:   # tf.debugging.set_log_device_placement
            placement_log.executed(_ASSIGN_OPS.get(what, "AssignVariableOp"))
        return self

    # TensorFlow's assigns return the variable as an ``_UnreadVariable`` (its repr says
    # 'UnreadVariable'), or None with ``read_value=False``.
    def assign(self, value, use_locking: bool = False, name: str | None = None,
               read_value: bool = True) -> Variable | None:
        """Set the variable to ``value`` (same shape and dtype); returns the variable.

        Args:
          value: a tensor or a value convertible to one.
          read_value: accepted for TensorFlow's signature.

        Raises:
          ValueError: ``value``'s shape differs from the variable's.

        >>> v = tf.Variable(1.0)
        >>> _ = v.assign(5.0)
        >>> float(v.numpy())
        5.0
        """
        self._set(convert_to_tensor(value, dtype=self.dtype), "assign to")
        return _UnreadVariable(self) if read_value else None

    def assign_add(self, delta, use_locking: bool = False, name: str | None = None,
                   read_value: bool = True) -> Variable | None:
        """Add ``delta`` to the variable in place; returns the variable.

        >>> v = tf.Variable([1.0, 2.0])
        >>> _ = v.assign_add([10.0, 10.0])
        >>> v.numpy()
        array([11., 12.], dtype=float32)
        """
        d = convert_to_tensor(delta, dtype=self.dtype)
        self._check_update(d, "AssignAddVariableOp")
        if current_trace() is not None or not isinstance(d, Tensor):
            with STATE_paused():
                self._set(self._current() + d, "assign_add to")
        else:
            self._set(wrap(np.asarray(self._value + d._value, dtype=self._value.dtype)), "assign_add to")
        return _UnreadVariable(self) if read_value else None

    def assign_sub(self, delta, use_locking: bool = False, name: str | None = None,
                   read_value: bool = True) -> Variable | None:
        """Subtract ``delta`` from the variable in place; returns the variable.

        >>> v = tf.Variable([1.0, 2.0])
        >>> _ = v.assign_sub([1.0, 1.0])
        >>> v.numpy()
        array([0., 1.], dtype=float32)
        """
        d = convert_to_tensor(delta, dtype=self.dtype)
        self._check_update(d, "AssignSubVariableOp")
        if current_trace() is not None or not isinstance(d, Tensor):
            with STATE_paused():
                self._set(self._current() - d, "assign_sub to")
        else:
            self._set(wrap(np.asarray(self._value - d._value, dtype=self._value.dtype)), "assign_sub to")
        return _UnreadVariable(self) if read_value else None

    def __bool__(self):
        return bool(self.read())

    def __float__(self):
        return float(self._value)

    def __int__(self):
        return int(self._value)

    def __len__(self):
        return len(self.read())

    def __iter__(self):
        return iter(self.read())

    def __repr__(self):
        return (f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}, "
                f"numpy={_format_value(self._value, True)}>")

    __str__ = __repr__


class _UnreadVariable(Variable):
    """What ``assign`` returns: the same variable (its state is the variable's own, so it reads,
    assigns and is watched as the variable), shown as TensorFlow shows it."""

    __slots__ = ("_var",)

    def __init__(self, var):
        self._var = var

    _value = property(lambda self: self._var._value,
                      lambda self, v: setattr(self._var, "_value", v))
    _id = property(lambda self: self._var._id)
    _trainable = property(lambda self: self._var._trainable)
    _aggregation = property(lambda self: self._var._aggregation)
    _synchronization = property(lambda self: self._var._synchronization)
    _name = property(lambda self: self._var._name)

    def __repr__(self):
        return (f"<tf.Variable 'UnreadVariable' shape={self.shape} dtype={self.dtype.name}, "
                f"numpy={_format_value(self._value, True)}>")

    __str__ = __repr__


class _PublicTensorType(type):
    """``isinstance(x, tf.Tensor)`` as TensorFlow answers it: True for eager tensors and for
    the symbolic tensors of a trace, False for variables (TensorFlow's are not Tensors)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, _Operators) and not isinstance(obj, Variable)

    def __subclasscheck__(cls, sub):
        return isinstance(sub, type) and issubclass(sub, _Operators) and not issubclass(
            sub, Variable)


class PublicTensor(Tensor, metaclass=_PublicTensorType):
    """``tf.Tensor``: the eager Tensor class for users, whose ``isinstance`` also accepts a
    traced tensor, as TensorFlow's does inside ``tf.function``.

    A separate class so that tapeflow's own ``isinstance(x, Tensor)`` checks keep meaning
    "an eager tensor" and keep CPython's fast path (a metaclass ``__instancecheck__`` costs a
    Python call on every check of a non-Tensor).

    >>> isinstance(tf.constant(1.0), tf.Tensor), isinstance(tf.Variable(1.0), tf.Tensor)
    (True, False)
    """

    __slots__ = ()


PublicTensor.__name__ = PublicTensor.__qualname__ = "Tensor"
PublicTensor.__module__ = "tapeflow"


class STATE_paused:
    """Suspend all tapes of this thread (creating a variable is not a differentiable op)."""

    def __enter__(self):
        self._saved, STATE.tapes = STATE.tapes, []

    def __exit__(self, *exc):
        STATE.tapes = self._saved


# -- conversion ---------------------------------------------------------------------

def _python_array(value, dtype):
    """NumPy array for a Python scalar or (nested) list, with TensorFlow's default dtypes."""
    try:
        a = np.asarray(value)
    except ValueError as e:
        raise ValueError(f"Can't convert non-rectangular Python sequence to Tensor: {value!r}") from e
    if a.dtype == object:
        raise TypeError(f"Attempt to convert a value ({value!r}) with an unsupported type "
                        f"({type(value).__name__}) to a Tensor.")
    if dtype is not None:
        dt = D.as_dtype(dtype)
        if dt.is_integer and a.dtype.kind == "f" and not np.all(np.equal(np.mod(a, 1), 0)):
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dt.name}")
        if dt.is_bool != (a.dtype.kind == "b") and a.size:
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dt.name}")
        return a.astype(dt.np)
    if a.dtype.kind == "f":
        return a.astype(np.float32)
    if a.dtype.kind in "iu":
        if a.size and (a.max() > 2**31 - 1 or a.min() < -2**31):
            return a.astype(np.int64)
        return a.astype(np.int32)
    if a.dtype.kind == "b":
        return a
    raise TypeError(f"Cannot convert {value!r} to a Tensor (unsupported dtype {a.dtype})")


def _contains_tensor(seq):
    return any(isinstance(x, (Tensor, Variable)) or hasattr(x, "aval")   # aval: a traced tensor
               or (isinstance(x, (list, tuple)) and _contains_tensor(x))
               for x in seq)


def convert_to_tensor(value, dtype: D.DType | str | None = None,
                      dtype_hint: D.DType | str | None = None, name: str | None = None) -> Tensor:
    """Tensor for a Tensor, Variable (read), NumPy value, Python scalar or nested list.

    ``dtype`` is a requirement (Python values are converted to it, tensors must have it);
    ``dtype_hint`` is a preference used only for Python values.

    Args:
      value: a Tensor, Variable, NumPy array, Python number or nested list.
      dtype: the dtype the result must have.
      dtype_hint: the dtype for a Python value, if it converts to it.

    Raises:
      TypeError or ValueError: ``value`` cannot be converted (or not to ``dtype``).

    >>> tf.convert_to_tensor([1.0, 2.0])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
    >>> tf.convert_to_tensor(np.arange(3))
    <tf.Tensor: shape=(3,), dtype=int64, numpy=array([0, 1, 2])>
    >>> tf.convert_to_tensor(1, dtype_hint=tf.float32)
    <tf.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    if isinstance(value, Tensor):
        if dtype is not None and D.as_dtype(dtype) != value.dtype:
            raise ValueError(f"Tensor conversion requested dtype {D.as_dtype(dtype).name} for Tensor "
                             f"with dtype {value.dtype.name}: {value!r}")
        return value
    if hasattr(value, "aval") and not isinstance(value, Variable):  # a symbolic tensor
        if dtype is not None and D.as_dtype(dtype) != value.dtype:
            raise ValueError(f"Tensor conversion requested dtype {D.as_dtype(dtype).name} for Tensor "
                             f"with dtype {value.dtype.name}")
        return value
    if isinstance(value, Variable):
        if dtype is not None and D.as_dtype(dtype) != value.dtype:
            raise ValueError(f"Tensor conversion requested dtype {D.as_dtype(dtype).name} for Variable "
                             f"with dtype {value.dtype.name}: {value!r}")
        return value.read()
    if _conversions._REGISTRY:
        fns = _conversions.conversion_functions(value)
        if fns:
            return _registered(fns, value, dtype, dtype_hint, name)
    if isinstance(value, (np.ndarray, np.generic)):
        if value.dtype.kind not in "fiub":
            raise TypeError(f"Cannot convert a NumPy array of dtype {value.dtype} to a Tensor")
        D.as_dtype(value.dtype)
        a = np.array(value, dtype=None if dtype is None else D.as_dtype(dtype).np, copy=True)
        return wrap(a)
    if isinstance(value, (list, tuple)) and value and _contains_tensor(value):
        return STACK([convert_to_tensor(v, dtype, dtype_hint) for v in value])
    if value is None or not isinstance(value, (bool, int, float, list, tuple, np.number)):
        raise TypeError(f"Attempt to convert a value ({value!r}) with an unsupported type "
                        f"({type(value).__name__}) to a Tensor.")
    if dtype is None and dtype_hint is not None:
        try:
            return wrap(_python_array(value, dtype_hint))
        except TypeError:
            pass
    return wrap(_python_array(value, dtype))


_VARIABLE_ARGS = inspect.signature(Variable.__init__)


def _registered(fns, value, dtype, dtype_hint, name):
    """``value`` converted by the first registered function that does not decline, checked as
    TensorFlow checks it (a Tensor, of ``dtype``); ``dtype_hint`` is tried first and dropped
    if the function refuses it."""
    want = None if dtype is None else D.as_dtype(dtype)
    hint = None if dtype_hint is None else D.as_dtype(dtype_hint)
    for fn in fns:
        ret = None
        if want is None and hint is not None:
            try:
                ret = fn(value, dtype=hint, name=name, as_ref=False)
            except (TypeError, ValueError):
                ret = None
        if ret is None:
            ret = fn(value, dtype=want, name=name, as_ref=False)
        if ret is NotImplemented:
            continue
        if not isinstance(ret, Tensor) and not hasattr(ret, "aval"):
            raise RuntimeError(f"Conversion function {fn!r} for type {type(value)} returned "
                               f"non-Tensor: {ret!r}")
        if want is not None and ret.dtype != want:
            raise RuntimeError(f"Conversion function {fn!r} for type {type(value)} returned "
                               f"incompatible dtype: requested = {want.name}, actual = "
                               f"{ret.dtype.name}")
        return ret
    raise ValueError(f"Attempt to convert a value ({value!r}) with an unsupported type "
                     f"({type(value)}) to a Tensor.")


def constant(value, dtype: D.DType | str | None = None, shape: Sequence[int] | None = None,
             name: str | None = None) -> Tensor:
    """A new Tensor from a value (never recorded on a tape).

    Args:
      value: a Python number, nested list or NumPy array.
      dtype: the dtype (inferred from ``value`` otherwise; Python floats give float32).
      shape: reshape (or broadcast a scalar) to this shape.

    >>> tf.constant([1, 2, 3])
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([1, 2, 3], dtype=int32)>
    >>> tf.constant(0.5, shape=[2, 2])
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[0.5, 0.5],
           [0.5, 0.5]], dtype=float32)>
    >>> tf.constant([1, 2], dtype=tf.float64)
    <tf.Tensor: shape=(2,), dtype=float64, numpy=array([1., 2.])>
    """
    if isinstance(value, (Tensor, Variable)):
        a = np.asarray(value._value)
        t = wrap(np.array(a, dtype=None if dtype is None else D.as_dtype(dtype).np, copy=True))
    else:
        t = convert_to_tensor(value, dtype=dtype)
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        a = np.asarray(t._value)
        if a.size == 1:
            a = np.full(shape, a.reshape(()), dtype=a.dtype)
        elif int(np.prod(shape)) == a.size:
            a = a.reshape(shape)
        else:
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tensor {a} "
                            f"(converted from {value!r}) has {a.size} elements, but got `shape` {shape}.")
        t = wrap(np.array(a, copy=True))
    return t
