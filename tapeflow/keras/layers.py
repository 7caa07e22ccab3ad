"""Keras layers: the base ``Layer`` and ``Dense`` (the others: core_layers.py, normalization.py).

A layer makes its weights on first call, from the input's shape, inside a name
scope of its own name, so variables are called 'dense/kernel:0' as in
TensorFlow. Layer names are made unique per process ('dense', 'dense_1', ...)
until ``keras.backend.clear_session()``. All math is done with tapeflow ops,
so gradients (and jacobians, and higher orders) flow through layers as through
any other code. ``keras.layers`` also holds the classes of core_layers.py and
normalization.py (keras/__init__.py puts them there).
"""
import collections
import inspect
import re
import threading

import numpy as np

from .. import _nest
from ..ir import dtypes as D
from ..ops import linalg as L
from ..ops import math as M
from ..ops import nn as N
from ..runtime import stack
from . import initializers
from . import constraints as constraints_module
from . import masking
from . import regularizers as regularizers_module
from . import settings
from .auto_config import OWN_INITS, init_config
from .node import any_keras_tensor, check_creation, symbolic_call
from ..runtime.module import Module
from ..runtime.tensor import STATE_paused, Tensor, TensorShape, Variable, convert_to_tensor
from ..runtime.traceback_filter import drop_internal_frames

# -- names ----------------------------------------------------------------------------

_name_uids = collections.defaultdict(int)


def to_snake_case(name):
    """Keras's default layer name: 'BatchNormalization' -> 'batch_normalization'.

    Not ``module.camel_to_snake``: Keras and tf.Module name differently ('_Foo' is
    'private__foo' here, '__foo' there), and each follows its own library."""
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    insecure = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return insecure if insecure[0] != "_" else "private" + insecure


def unique_object_name(name):
    """'dense', then 'dense_1', 'dense_2', ... (Keras's zero-based uniquifying)."""
    number = _name_uids[name]
    _name_uids[name] += 1
    return f"{name}_{number}" if number else name


def reset_uids():
    """Forget every generated layer name (``keras.backend.clear_session``)."""
    _name_uids.clear()


# -- input specs ----------------------------------------------------------------------

class InputSpec:
    """What a layer accepts: a rank and fixed dimensions.

    What a layer accepts: rank (``ndim``/``min_ndim``) and fixed dims (``axes``).

    >>> layer = tf.keras.layers.Dense(2)
    >>> layer.input_spec.min_ndim
    2
    """

    def __init__(self, ndim=None, min_ndim=None, axes=None):
        self.ndim, self.min_ndim, self.axes = ndim, min_ndim, dict(axes or {})

    def check(self, layer_name, inputs):
        flat = _nest.flatten(inputs)
        if len(flat) != 1:
            raise ValueError(f'Layer "{layer_name}" expects 1 input(s), but it received {len(flat)} '
                             f"input tensors. Inputs received: {inputs}")
        shape = TensorShape(flat[0].shape)
        head = f'Input 0 of layer "{layer_name}" is incompatible with the layer: '
        if self.ndim is not None and len(shape) != self.ndim:
            raise ValueError(head + f"expected ndim={self.ndim}, found ndim={len(shape)}. "
                                    f"Full shape received: {tuple(shape)}")
        if self.min_ndim is not None and len(shape) < self.min_ndim:
            raise ValueError(head + f"expected min_ndim={self.min_ndim}, found ndim={len(shape)}. "
                                    f"Full shape received: {tuple(shape)}")
        for axis, value in self.axes.items():
            if value is not None and shape[axis] not in (value, None):
                raise ValueError(head + f"expected axis {axis} of input shape to have value {value}, "
                                        f"but received input with shape {tuple(shape)}")


# -- activations ----------------------------------------------------------------------

def _op(name):
    """A tapeflow op by name, looked up when first used (nn first, then math)."""
    fn = getattr(N, name, None) or getattr(M, name, None)
    if fn is None:
        raise NotImplementedError(f"activation needs tapeflow op {name!r}, which does not exist yet")
    return fn


def linear(x):
    return x


def softmax(x, axis=-1):
    if x.shape.rank <= 1:
        raise ValueError(f"Cannot apply softmax to a tensor that is 1D. Received input: {x}")
    return _op("softmax")(x, axis=axis)


def _by_op(op_name, **kwargs):
    def activation(x):
        return _op(op_name)(x, **kwargs)
    activation.__name__ = op_name
    return activation


ACTIVATIONS = {
    "linear": linear, "softmax": softmax, "relu": _by_op("relu"), "relu6": _by_op("relu6"),
    "elu": _by_op("elu"), "selu": _by_op("selu"), "sigmoid": _by_op("sigmoid"),
    "tanh": _by_op("tanh"), "softplus": _by_op("softplus"), "softsign": _by_op("softsign"),
    "gelu": _by_op("gelu", approximate=False), "swish": _by_op("silu"), "silu": _by_op("silu"),
    "exponential": _by_op("exp"), "log_softmax": _by_op("log_softmax"),
}


def get_activation(identifier):
    """The activation function for an ``activation=`` argument.

    A callable for ``activation=``: None means linear, strings name Keras activations.

    >>> relu = tf.keras.layers.get_activation("relu")
    >>> relu(tf.constant([-1.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 1.], dtype=float32)>
    """
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        if identifier not in ACTIVATIONS:
            raise ValueError(f"Unknown activation function: '{identifier}'. Please ensure you are "
                             f"using a `keras.utils.custom_object_scope` and that this object is "
                             f"included in the scope.")
        return ACTIVATIONS[identifier]
    if callable(identifier):
        return identifier
    raise TypeError(f"Could not interpret activation function identifier: {identifier!r}")


def weight_settings_config(layer, prefix="", activity=False):
    """The get_config entries of a layer's kernel and bias settings (initializers,
    regularizers, constraints; the activity regularizer too if ``activity``), in Keras' order,
    read from ``layer``'s attributes named ``prefix + "kernel_initializer"`` and so on."""
    def get(name):
        return getattr(layer, prefix + name)
    out = {"kernel_initializer": initializers.serialize(get("kernel_initializer")),
           "bias_initializer": initializers.serialize(get("bias_initializer")),
           "kernel_regularizer": regularizers_module.serialize(get("kernel_regularizer")),
           "bias_regularizer": regularizers_module.serialize(get("bias_regularizer"))}
    if activity:
        out["activity_regularizer"] = regularizers_module.serialize(layer.activity_regularizer)
    out["kernel_constraint"] = constraints_module.serialize(get("kernel_constraint"))
    out["bias_constraint"] = constraints_module.serialize(get("bias_constraint"))
    return out


def serialize_activation(identifier):
    """The name ``get_activation`` takes back: a Keras name as given, else the function's name."""
    if identifier is None:
        return "linear"
    if isinstance(identifier, str):
        return identifier
    name = getattr(identifier, "__name__", None)
    for key, fn in ACTIVATIONS.items():
        if fn is identifier or key == name:
            return key
    return name


# -- call context: the `training` mode inner layers inherit ------------------------------

_context = threading.local()


def _outer_training():
    modes = getattr(_context, "training", None)
    return modes[-1] if modes else None


class _TrainingScope:
    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        if not hasattr(_context, "training"):
            _context.training = []
        _context.training.append(self.mode)

    def __exit__(self, *exc):
        _context.training.pop()


def _check_no_python_numbers(inputs):
    """Keras 3 refuses Python numbers in a layer's inputs (``layer([[1., 2.]])``): it would
    take each number as a separate input."""
    for leaf in _nest.flatten(inputs):
        if isinstance(leaf, (float, int)) and not isinstance(leaf, bool):
            raise ValueError(
                f"Only input tensors may be passed as positional arguments. The following "
                f"argument value should be passed as a keyword argument: {leaf!r} (of type "
                f"{type(leaf)})")


def _convert_inputs(inputs):
    """NumPy arrays and Python numbers become tensors; structures stay structures (as Keras)."""
    def convert(x):
        if isinstance(x, (np.ndarray, np.generic, float, int, Variable)) and not isinstance(x, bool):
            return convert_to_tensor(x)
        return x
    return _nest.map_structure(convert, inputs)


def _dedup(variables):
    out, seen = [], set()
    for v in variables:
        if id(v) not in seen:
            seen.add(id(v))
            out.append(v)
    return out


_CALL_SIGNATURES = {}  # layer class -> Layer._inspect_call()

_ALLOWED_KWARGS = {"input_dim", "input_shape", "batch_input_shape", "batch_size", "weights",
                   "activity_regularizer", "autocast", "implementation"}


class Layer(Module):
    """The base class of Keras layers.

    Keras's base layer: weights made in ``build`` on first ``__call__``, math in ``call``.

    Attributes holding variables or layers (directly or in lists/dicts) are
    tracked when assigned, so ``trainable_weights`` lists own weights in
    creation order and then each sublayer's, as Keras does.

    Subclass it: make weights in ``build(input_shape)`` with ``add_weight``, compute in
    ``call(inputs)``; calling the layer builds it on first use.

    >>> class Scale(tf.keras.layers.Layer):
    ...     def build(self, input_shape):
    ...         self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")
    ...     def call(self, inputs):
    ...         return inputs * self.w
    >>> layer = Scale()
    >>> layer(tf.constant([[1.0, 2.0]]))
    <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[1., 2.]], dtype=float32)>
    >>> [w.shape for w in layer.trainable_weights]
    [TensorShape([2])]
    """

    _UNTRACKED = frozenset({"_trainable_weights", "_non_trainable_weights", "_self_tracked_trackables"})

    def __new__(cls, *args, **kwargs):
        obj = object.__new__(cls)
        obj._record_init_args(args, kwargs)
        return obj

    def _record_init_args(self, args, kwargs):
        """Keep the constructor's arguments: ``get_config`` of a user's class returns them."""
        object.__setattr__(self, "_init_args", (args, kwargs))

    def __init__(self, trainable=True, name=None, dtype=None, dynamic=False, **kwargs):
        for kwarg in kwargs:
            if kwarg not in _ALLOWED_KWARGS:
                raise TypeError(f"Keyword argument not understood: {kwarg}")
        if not isinstance(trainable, bool):
            raise TypeError(f"Expected `trainable` argument to be a boolean, but got: {trainable}")
        self._ensure_tracking()
        if name is None:
            name = unique_object_name(to_snake_case(type(self).__name__))
        elif not isinstance(name, str):
            raise TypeError(f"Expected `name` argument to be a string, but got: {name}")
        self._name = name
        self._trainable = trainable
        self._dtype = D.as_dtype(dtype or settings.floatx_dtype())
        self._autocast = kwargs.get("autocast", True)
        self._input_spec = None
        # Keras 3 still accepts these on a Sequential's first layer (with a warning).
        shape = kwargs.get("input_shape")
        if kwargs.get("input_dim") is not None:
            shape = (kwargs["input_dim"],)
        if kwargs.get("batch_input_shape") is not None:
            shape = tuple(kwargs["batch_input_shape"])[1:]
        self._input_shape_arg = tuple(shape) if shape is not None else None
        object.__setattr__(self, "_activity_regularizer",
                           regularizers_module.get(kwargs.get("activity_regularizer")))
        object.__setattr__(self, "_losses", [])
        object.__setattr__(self, "_weight_regularizers", [])
        self.built = False

    # -- tracking ------------------------------------------------------------------------
    def _ensure_tracking(self):
        for attr in self._UNTRACKED:
            if attr not in self.__dict__:
                object.__setattr__(self, attr, [])

    def __setattr__(self, name, value):
        if name in self._UNTRACKED or hasattr(type(self), name):
            object.__setattr__(self, name, value)
            return
        self._ensure_tracking()
        old = self.__dict__.get(name)
        object.__setattr__(self, name, value)
        new_leaves = _nest.flatten(value)
        self._untrack(old, keep=new_leaves)
        for leaf in new_leaves:
            if isinstance(leaf, Variable):
                weights = self._trainable_weights if leaf.trainable else self._non_trainable_weights
                if not any(w is leaf for w in weights):
                    weights.append(leaf)
            elif isinstance(leaf, Module) and leaf is not self:
                if not any(m is leaf for m in self._self_tracked_trackables):
                    self._self_tracked_trackables.append(leaf)

    def __delattr__(self, name):
        old = self.__dict__.get(name)
        object.__delattr__(self, name)
        if name not in self._UNTRACKED:
            self._untrack(old)

    def _untrack(self, old, keep=()):
        """Stop tracking what ``old`` held unless another attribute (or ``keep``) still holds it."""
        gone = {id(leaf) for leaf in _nest.flatten(old)} - {id(leaf) for leaf in keep}
        if not gone:
            return
        gone -= {id(leaf) for key, value in self.__dict__.items() if key not in self._UNTRACKED
                 for leaf in _nest.flatten(value)}
        for tracked in (self._trainable_weights, self._non_trainable_weights, self._self_tracked_trackables):
            tracked[:] = [x for x in tracked if id(x) not in gone]

    def _child_layers(self):
        return [m for m in self._self_tracked_trackables if isinstance(m, Layer)]

    def _flatten_layers(self):
        yield self
        for child in self._child_layers():
            yield from child._flatten_layers()

    # -- properties ----------------------------------------------------------------------
    @property
    def name_scope(self):
        """The layer's scope, relative to where it is called (as Keras, unlike tf.Module)."""
        return stack.name_scope(self._name)

    @property
    def dtype(self):
        return self._dtype.name

    @property
    def compute_dtype(self):
        return self._dtype.name

    variable_dtype = dtype

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        for layer in self._flatten_layers():
            layer._trainable = bool(value)

    @property
    def input_spec(self):
        return self._input_spec

    @input_spec.setter
    def input_spec(self, value):
        self._input_spec = value

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        children = [w for c in self._child_layers() for w in c.trainable_weights]
        return _dedup(self._trainable_weights + children)

    @property
    def non_trainable_weights(self):
        if self.trainable:
            children = [w for c in self._child_layers() for w in c.non_trainable_weights]
            return _dedup(self._non_trainable_weights + children)
        children = [w for c in self._child_layers() for w in c.weights]
        return _dedup(self._trainable_weights + self._non_trainable_weights + children)

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    # Keras returns lists here (tf.Module returns tuples).
    variables = weights
    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    def get_weights(self):
        return [w.numpy() for w in self.weights]

    def set_weights(self, weights):
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(f"Layer {self.name} expects {len(params)} weight(s), but it received "
                             f"{len(weights)} input weight(s).")
        for p, w in zip(params, weights, strict=True):
            if tuple(p.shape) != tuple(np.shape(w)):
                raise ValueError(f"Layer {self.name} weight shape {tuple(p.shape)} is not compatible "
                                 f"with provided weight shape {tuple(np.shape(w))}.")
            p.assign(np.asarray(w, dtype=p.dtype.np))

    # -- config ----------------------------------------------------------------------------
    def get_config(self):
        """``name``, ``trainable``, ``dtype``; for a user's subclass also its ``__init__``
        arguments when they are plain data (Keras 3's rule), else NotImplementedError."""
        config = {"name": self.name, "trainable": self.trainable, "dtype": self.dtype}
        if self.activity_regularizer is not None:
            config["activity_regularizer"] = regularizers_module.serialize(self.activity_regularizer)
        if type(self).__init__ in OWN_INITS:
            return config
        return {**config, **init_config(self)}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_build_config(self):
        shape = getattr(self, "_build_input_shape", None)
        if shape is None:
            return None
        if isinstance(shape, (list, tuple)) and shape and isinstance(shape[0], (list, tuple)):
            return {"input_shape": [list(s) for s in shape]}  # several inputs (a merge layer)
        return {"input_shape": list(shape)}

    def build_from_config(self, config):
        shape = config["input_shape"]
        if shape is None or self.built:
            return
        if shape and isinstance(shape[0], list):
            shape = [TensorShape(s) for s in shape]
        else:
            shape = TensorShape(shape)
        with STATE_paused(), stack.name_scope(self.name):
            self._build_input_shape = shape
            self.build(shape)
        self.built = True

    # -- weights ---------------------------------------------------------------------------
    _KERAS3_ADD_WEIGHT = ("shape", "initializer", "dtype", "trainable", "autocast", "regularizer",
                          "constraint")

    def add_weight(self, *args, **kwargs):
        """A new variable of this layer, named in the current scope ('dense/kernel:0' inside call).

        Keras 3 takes ``shape`` first (``add_weight((3, 4), "zeros")``), Keras 2 ``name``
        first (``add_weight("kernel", (3, 4))``); a string first argument means the latter.
        """
        if args and args[0] is not None and not isinstance(args[0], str):
            kwargs.update(zip(self._KERAS3_ADD_WEIGHT, args))
            args = ()
        kwargs.pop("autocast", None)
        kwargs.pop("aggregation", None)
        return self._add_weight(*args, **kwargs)

    def _add_weight(self, name=None, shape=None, dtype=None, initializer=None, regularizer=None,
                    trainable=None, constraint=None):
        dtype = D.as_dtype(dtype or self._dtype)
        init = initializers.get(initializer)
        if init is None:
            init = initializers.get("glorot_uniform" if dtype.is_floating else "zeros")
        trainable = True if trainable is None else bool(trainable)
        shape = () if shape is None else tuple(shape)
        check_creation(shape, dtype, f"weight {name or ''} of layer {self.name}")
        with STATE_paused():
            variable = Variable(lambda: init(shape, dtype=dtype), trainable=trainable, name=name,
                                dtype=dtype)
        (self._trainable_weights if trainable else self._non_trainable_weights).append(variable)
        if regularizer is not None:
            self.__dict__.setdefault("_weight_regularizers", []).append(
                (variable, regularizers_module.get(regularizer)))
        if constraint is not None:
            constraints_module.attach(variable, constraints_module.get(constraint))
        return variable

    # -- losses (add_loss, regularizers) ----------------------------------------------------
    @property
    def activity_regularizer(self):
        return self.__dict__.get("_activity_regularizer")

    @activity_regularizer.setter
    def activity_regularizer(self, value):
        object.__setattr__(self, "_activity_regularizer", regularizers_module.get(value))

    def add_loss(self, loss):
        """Add a scalar (or tensor, summed) to ``losses``: kept until the next outermost call."""
        self.__dict__.setdefault("_losses", []).append(loss)

    @property
    def losses(self):
        """Losses of the last call (``add_loss``, activity regularizers) of this layer and its
        sublayers, then the weight regularizers' penalties computed now, as Keras 3 lists them."""
        out, weights = [], []
        for layer in self._flatten_layers():
            out.extend(layer.__dict__.get("_losses", ()))
            weights.extend(layer.__dict__.get("_weight_regularizers", ()))
        for variable, regularizer in weights:
            if variable.trainable:
                out.append(regularizer(variable))
        return out

    def _clear_losses(self):
        for layer in self._flatten_layers():
            if layer.__dict__.get("_losses"):
                layer.__dict__["_losses"] = []

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, *args, **kwargs):
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape

    # -- calling ---------------------------------------------------------------------------
    def _call_signature(self):
        """(accepts `training`, its position among the extra positional args, its default)."""
        cls = type(self)
        if cls not in _CALL_SIGNATURES:
            _CALL_SIGNATURES[cls] = self._inspect_call()
        return _CALL_SIGNATURES[cls]

    def _inspect_call(self):
        params = list(inspect.signature(self.call).parameters.values())
        names = [p.name for p in params]
        if "training" in names:
            p = params[names.index("training")]
            positional = p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            default = None if p.default is p.empty else p.default
            return True, (names.index("training") - 1 if positional else None), default
        return any(p.kind == p.VAR_KEYWORD for p in params), None, None

    def _resolve_training(self, args, kwargs):
        """Keras's rule: explicit argument, else the outer layer's mode, else the default."""
        expects, position, default = self._call_signature()
        if not expects:
            mode = kwargs.pop("training") if "training" in kwargs else _outer_training()
            return args, kwargs, mode
        passed_positionally = position is not None and len(args) > position
        mode = args[position] if passed_positionally else kwargs.get("training")
        if mode is None:
            mode = _outer_training()
            if mode is None:
                mode = default
            if passed_positionally:
                args = args[:position] + (mode,) + args[position + 1:]
            else:
                kwargs["training"] = mode
        return args, kwargs, mode

    def _autocast_inputs(self, inputs):
        def cast(x):
            if isinstance(x, Tensor) and x.dtype.is_floating and x.dtype != self._dtype:
                return M.cast(x, self._dtype)
            return x
        return _nest.map_structure(cast, inputs) if self._autocast and self._dtype.is_floating else inputs

    def _maybe_build(self, inputs):
        if self.built:
            return
        shapes = _nest.map_structure(lambda x: TensorShape(x.shape), inputs)
        self._build_input_shape = shapes
        with STATE_paused():  # Keras builds in an init_scope: tapes see no build ops
            self.build(shapes)
        self.built = True

    def __call__(self, *args, **kwargs):
        if any_keras_tensor((args, kwargs)):  # building a functional model: record, don't run
            return symbolic_call(self, args, kwargs)
        if args:
            inputs, args = args[0], args[1:]
        elif "inputs" in kwargs:
            inputs = kwargs.pop("inputs")
        else:
            raise TypeError("Layer.__call__ requires an `inputs` argument")
        _check_no_python_numbers(inputs)
        inputs = _convert_inputs(inputs)
        args, kwargs, training = self._resolve_training(args, kwargs)
        if not getattr(_context, "training", None):
            self._clear_losses()   # the outermost call starts the losses afresh, as Keras 3
        try:
            with _TrainingScope(training):
                if self._input_spec is not None:
                    self._input_spec.check(self.name, inputs)
                with stack.name_scope(self.name):
                    self._maybe_build(inputs)
                    inputs = self._autocast_inputs(inputs)
                    previous_mask = masking.input_mask(self, inputs, kwargs)
                    outputs = self.call(inputs, *args, **kwargs)
                    if self.activity_regularizer is not None:   # per sample, as Keras 3.15
                        for output in _nest.flatten(outputs):
                            if isinstance(output, Tensor) or hasattr(output, "aval"):
                                loss = self.activity_regularizer(output)
                                if output.shape.rank:
                                    loss = M.divide(loss, M.cast(output.shape[0], loss.dtype))
                                self.add_loss(loss)
                    return masking.output_mask(self, inputs, outputs, previous_mask)
        except Exception as e:   # the user reads their frames (runtime/traceback_filter.py)
            drop_internal_frames(e)
            raise

    # -- masks (keras/masking.py) ------------------------------------------------------------
    supports_masking = False   # Keras 3: whether outputs carry the mask compute_mask gives

    def compute_mask(self, inputs, mask=None):
        return mask


# -- Dense -----------------------------------------------------------------------------

class Dense(Layer):
    """A densely connected layer: ``activation(inputs @ kernel + bias)``.

    ``activation(inputs @ kernel + bias)``; the kernel is (input dim, units).

    Args:
      units: the output dimension.
      activation: a callable, an activation's name (``"relu"``, ...) or None (linear).
      use_bias: add a bias vector.
      kernel_initializer, bias_initializer: initializers or their names.

    >>> layer = tf.keras.layers.Dense(2, activation="relu", kernel_initializer="ones")
    >>> layer(tf.constant([[1.0, -3.0, 1.0]]))
    <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[0., 0.]], dtype=float32)>
    >>> layer.kernel.shape, layer.bias.shape
    (TensorShape([3, 2]), TensorShape([2]))
    """

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, **kwargs):
        if "input_shape" not in kwargs and "input_dim" in kwargs:
            kwargs["input_shape"] = (kwargs.pop("input_dim"),)
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.kernel_regularizer = regularizers_module.get(kernel_regularizer)
        self.bias_regularizer = regularizers_module.get(bias_regularizer)
        self.kernel_constraint = constraints_module.get(kernel_constraint)
        self.bias_constraint = constraints_module.get(bias_constraint)
        self.units = int(units) if not isinstance(units, int) else units
        if self.units < 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive integer. "
                             f"Received: units={units}")
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape):
        if not (self._dtype.is_floating):
            raise TypeError(f"A Dense layer can only be built with a floating-point dtype. "
                            f"Received: dtype={self._dtype.name}")
        last_dim = TensorShape(input_shape)[-1]
        if last_dim is None:
            raise ValueError("The last dimension of the inputs to a Dense layer should be defined. "
                             "Found None. Full input shape received: "
                             f"{tuple(TensorShape(input_shape))}")
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last_dim})
        self.kernel = self.add_weight("kernel", shape=[last_dim, self.units],
                                      initializer=self.kernel_initializer, dtype=self._dtype, trainable=True,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.bias = (self.add_weight("bias", shape=[self.units], initializer=self.bias_initializer,
                                     dtype=self._dtype, trainable=True, regularizer=self.bias_regularizer,
                                     constraint=self.bias_constraint)
                     if self.use_bias else None)
        self.built = True

    def call(self, inputs):
        if inputs.dtype != self._dtype:
            inputs = M.cast(inputs, self._dtype)
        rank = inputs.shape.rank
        if rank == 2:
            outputs = L.matmul(inputs, self.kernel)
        else:
            outputs = L.tensordot(inputs, self.kernel, [[rank - 1], [0]])
        if self.use_bias:
            outputs = M.add(outputs, self.bias)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)[:-1].concatenate([self.units])

    def get_config(self):
        return {**super().get_config(), "units": self.units,
                "activation": serialize_activation(self.activation), "use_bias": self.use_bias,
                **weight_settings_config(self)}


OWN_INITS.update({Layer.__init__, Dense.__init__})

__all__ = ["Layer", "Dense", "InputSpec", "get_activation"]
