"""``tf.TensorArray``: eagerly a Python list of tensors, in a function one dense tensor.

Eagerly (no trace running when it is made) it is TensorFlow's ``_EagerTensorArray``: a list
of tensors, mutated in place (``write`` returns ``self``), every op recorded on the tapes as
the op it is (``read`` returns the written tensor itself, ``stack`` is a ``Pack`` with zeros
for unwritten elements), so gradients, None versus zeros included, are TensorFlow's eager
ones, and its errors are checked exactly (out of range, negative index, wrong dtype or
shape, a second read after ``clear_after_read``).

Inside a function a TensorArray is one tensor of shape ``[size, *element_shape]``, and each
method returns a new TensorArray (TensorFlow's graph-mode semantics: ``ta = ta.write(i,
x)``). Its size is static, except for a dynamic-size one that a loop of unknown trip count
assigns: its size becomes a run-time one (``_n`` None, the tensor's leading dim None, as
TensorFlow's ``[None, ...]`` stack), and a write past the end appends zero rows up to the
index (``_grown``) before writing. Such a graph has sizes that depend on the data, so it
runs on the NumPy interpreter, not as a compiled program. With ``infer_shape=False``, an
element of another shape written at a Python int index turns it into a list of tensors
(``_ragged``), which cannot be a loop variable. ``write`` at a tensor index is
``TensorListSetItem``, ``read`` at one ``TensorListGetItem`` (TensorFlow's error text when it
is out of range), ``gather`` and a Python index ``GatherV2``; as in
TensorFlow's TensorList, unwritten elements read as zeros, writing twice overwrites, and
``clear_after_read`` is ignored. Until the element shape is known (``element_shape=`` or a
first write) there is no tensor yet. A loop variable flattens to its tensor through the
``__tf_flatten__`` protocol (``_nest``), so a converted loop carries it as a While variable.
"""
from __future__ import annotations

import weakref

import numpy as np

from ..errors import InvalidArgumentError, OutOfRangeError, user_line
from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.recorder import STATE
from ..runtime.tensor import Tensor, TensorShape, Variable, convert_to_tensor
from . import array, creation, dims, math


def tensor_list_set_item(lst, index, item):
    """``lst`` with element ``index`` replaced by ``item`` (TensorListSetItem)."""
    return apply("TensorListSetItem", [lst, convert_to_tensor(index, dtype=D.int32)
                                       if isinstance(index, (int, np.integer)) else index, item])


_BOUNDS = {}    # id(symbolic int tensor) -> (weakref to it, lowest, highest value it takes)


def note_index_bounds(t, lo, hi):
    """``t``, a tensor of the trace, takes values in [lo, hi] only (the counter of a ``for``
    over a ``tf.range`` of constant bounds: tracer/pyfor.py): a dynamic-size TensorArray of
    more than ``hi`` elements written at ``t`` need not grow, so its shape stays static."""
    key = id(t)
    _BOUNDS[key] = (weakref.ref(t, lambda _, k=key: _BOUNDS.pop(k, None)), lo, hi)
    return t


def _in_range(index, n):
    entry = _BOUNDS.get(id(index))
    return entry is not None and entry[0]() is index and 0 <= entry[1] and entry[2] < n


def tensor_list_get_item(lst, index):
    """Element ``index`` of ``lst`` (TensorListGetItem)."""
    return apply("TensorListGetItem", [lst, convert_to_tensor(index, dtype=D.int32)
                                       if isinstance(index, (int, np.integer)) else index])


def _symbolic(x):
    return hasattr(x, "aval") and not isinstance(x, (Tensor, Variable))


def _static_int(x, what):
    """``x`` as a Python int, or None when it is a symbolic tensor."""
    if _symbolic(x):
        return None
    if isinstance(x, (Tensor, Variable)):
        x = x.numpy()
    if np.ndim(x) != 0:
        raise ValueError(f"TensorArray {what} must be a scalar, got {x!r}")
    return int(x)


class TensorArray:
    """A list of tensors of one dtype that a loop can write (TensorFlow's ``tf.TensorArray``).

    TensorFlow's ``tf.TensorArray`` (see the module docstring for the two representations).

    A list of tensors of one dtype: eagerly, TensorFlow's eager list; inside a ``function``,
    a loop variable (``ta = ta.write(i, x)``) that becomes one dense tensor (of run-time
    length when it is dynamic-size and the loop's trip count is data).

    Args:
      dtype: the elements' dtype.
      size: the number of elements (inside a function, a dynamic-size one written in a loop
        may start at 0).
      dynamic_size: allow writes past ``size``.
      element_shape: the elements' shape, if known.

    >>> ta = tf.TensorArray(tf.float32, size=3)
    >>> for i in range(3):
    ...     ta = ta.write(i, tf.constant(float(i)) * 2.0)
    >>> ta.stack()
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0., 2., 4.], dtype=float32)>
    >>> @tf.function(jit_compile=False)
    ... def squares(n):
    ...     ta = tf.TensorArray(tf.float32, size=4)
    ...     for i in tf.range(4):
    ...         ta = ta.write(i, tf.cast(i * i, tf.float32))
    ...     return ta.stack()
    >>> squares(4)
    <tf.Tensor: shape=(4,), dtype=float32, numpy=array([0., 1., 4., 9.], dtype=float32)>
    """

    _start = 0      # run-time sized with no tensor yet: the rows it starts with
    _ragged = None  # traced, elements of different shapes: a list of tensors (None unwritten)

    def __init__(self, dtype: D.DType | str, size: int | Tensor | None = None,
                 dynamic_size: bool | None = None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None,
                 colocate_with_first_write_call=True, name=None) -> None:
        self._dtype = D.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = bool(infer_shape) or element_shape is not None
        self._shape = None if element_shape is None else tuple(TensorShape(element_shape))
        n = 0 if size is None else _static_int(size, "size")
        if n is None:
            raise InvalidArgumentError(
                f"TensorArray size is a tensor whose value is not known while tracing (at "
                f"{user_line()}): inside tapeflow.function every tensor has a static shape, so "
                f"the size must be a Python int or a constant (e.g. the static `x.shape[0]`), "
                f"or use size=0, dynamic_size=True and write it in a loop")
        if n < 0:
            raise InvalidArgumentError(f"TensorArray size must be non-negative, got {n}")
        self._graph = bool(STATE.traces)
        if self._graph:
            self._n, self._buf = n, None
            if self._shape is not None:
                self._buf = self._zeros(n)
        else:
            self._items, self._cleared = [None] * n, set()

    # -- common ------------------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def dynamic_size(self):
        return self._dynamic_size

    @property
    def element_shape(self):
        # infer_shape=False: unknown, as TensorFlow's (a traced one still keeps the shape of
        # its dense tensor's rows in _shape)
        return TensorShape(self._shape if self._infer_shape else None)

    def __repr__(self):
        kind = "traced" if self._graph else "eager"
        return (f"<tf.TensorArray {kind} dtype={self._dtype.name} size={self._length()} "
                f"element_shape={self._shape}>")

    def _length(self):
        if self._ragged is not None:
            return len(self._ragged)
        return self._n if self._graph else len(self._items)

    def size(self, name=None) -> Tensor:
        if self._graph and self._n is None:     # grown in a loop: the buffer's rows
            return dims.dim(dims.shape_of(self._buf), 0)
        return convert_to_tensor(self._length(), dtype=D.int32)

    def _value(self, value):
        if hasattr(value, "aval") or isinstance(value, (Tensor, Variable)):
            if value.dtype != self._dtype:
                raise InvalidArgumentError(f"TensorArray dtype is {self._dtype.name} but Op is "
                                           f"trying to write dtype {value.dtype.name}")
            return value if _symbolic(value) else convert_to_tensor(value)
        return convert_to_tensor(value, dtype=self._dtype)

    def _check_shape(self, value):
        shape = tuple(value.shape)
        if self._shape is None:
            if self._infer_shape or self._graph:    # traced: one dense tensor, one row shape
                self._shape = shape
        elif shape == self._shape:
            pass
        elif not self._graph:
            if self._infer_shape:
                raise ValueError(f"Incompatible shape for value ({shape}), expected "
                                 f"({self._shape}) (at {user_line()})")
        elif self._infer_shape:                     # TensorFlow's text in a function
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {self._shape} "
                             f"(at {user_line()})")
        else:
            raise ValueError(f"a TensorArray with infer_shape=False written with elements of "
                             f"shapes {self._shape} and {shape} inside a function (at "
                             f"{user_line()}): here a traced TensorArray is one dense tensor, "
                             f"so its elements share one shape")

    def _zeros(self, n):
        if self._shape is None:
            raise ValueError(f"the TensorArray's element shape is unknown (at {user_line()}): "
                             f"pass element_shape=, or write an element first")
        return creation.zeros((n,) + self._shape, self._dtype)

    def _index(self, index, op):
        i = _static_int(index, "index")
        if i is not None and i < 0:
            verb = "Reading from" if op == "read" else "Writing to"
            raise OutOfRangeError(f"{verb} negative indices (index {i}) is not allowed.")
        return i

    def __iter__(self):
        """Beyond TensorFlow (whose TensorArray is not iterable): the elements in order."""
        if self._ragged is not None:
            return iter([self._ragged_item(k) for k in range(len(self._ragged))])
        if self._graph:
            return iter(array.unstack(self.stack()))
        return iter(self._eager_stack_items())

    # -- methods ---------------------------------------------------------------------
    def write(self, index, value, name=None) -> TensorArray:
        value = self._value(value)
        i = self._index(index, "write")
        if self._graph and (self._ragged is not None or (
                not self._infer_shape and self._shape is not None
                and tuple(value.shape) != self._shape)):
            return self._ragged_write(i, value)
        self._check_shape(value)
        if not self._graph:
            return self._eager_write(i, value)
        out = self._copy()
        if out._dynamic_size and out._n is not None and i is None and not _in_range(index, out._n):
            # a tensor index the trace cannot bound: TensorFlow grows the list to it
            out = out._run_time_sized(math.multiply(math.cast(index, D.int32), 0))
        if out._n is None:                      # run-time size: grow to the index first
            if out._buf is None:
                out._buf = out._zeros(out._start)
            out._buf = _grown(out._buf, index if i is None else i)
        elif i is not None and i >= out._n:
            if not out._dynamic_size:   # TensorFlow's TensorListSetItem, at trace time
                raise InvalidArgumentError(f"Trying to modify element {i} in a list with "
                                           f"{out._n} elements. (at {user_line()})")
            out._grow(i + 1)
        if out._buf is None:
            out._buf = out._zeros(out._n)
        out._buf = tensor_list_set_item(out._buf, index if i is None else i, value)
        return out

    def read(self, index, name=None) -> Tensor:
        i = self._index(index, "read")
        if not self._graph:
            return self._eager_read(i)
        if self._ragged is not None:
            return self._ragged_item(i)
        if i is not None and self._n is not None and i >= self._n:   # TensorListGetItem
            raise InvalidArgumentError(f"Trying to access element {i} in a list with {self._n} "
                                       f"elements. (at {user_line()})")
        if i is None:
            return tensor_list_get_item(self._graph_buf(), index)
        return array.gather(self._graph_buf(), i)

    def stack(self, name=None) -> Tensor:
        if not self._graph:
            items = self._eager_stack_items()
            if not items:
                return creation.zeros((0,) + (self._shape or ()), self._dtype)
            return array.stack(items)
        if self._ragged is not None:
            return self._ragged_stack(range(len(self._ragged)))
        if self._buf is None and self._n == 0:
            return creation.zeros((0,), self._dtype)
        return self._graph_buf()

    def gather(self, indices, name=None) -> Tensor:
        if not self._graph:
            idx = np.asarray(indices.numpy() if isinstance(indices, Tensor) else indices)
            items = self._eager_stack_items()
            for i in idx.reshape(-1):
                if not 0 <= i < len(items):
                    raise OutOfRangeError(f"Tried to gather index {int(i)} but array size is: "
                                          f"{len(items)}")
            return array.gather(array.stack(items), indices)
        if self._ragged is not None:
            if _symbolic(indices):
                raise ValueError(f"TensorArray.gather at tensor indices of a TensorArray whose "
                                 f"elements have different shapes (at {user_line()})")
            idx = np.asarray(indices.numpy() if isinstance(indices, Tensor) else indices)
            return self._ragged_stack([int(k) for k in idx.reshape(-1)])
        return array.gather(self._graph_buf(), indices)

    def concat(self, name=None) -> Tensor:
        if not self._graph:
            items = self._eager_stack_items()
            return array.concat(items, 0) if items else creation.zeros((0,), self._dtype)
        if self._ragged is not None:
            items = [self._ragged_item(k) for k in range(len(self._ragged))]
            if any(not t.shape for t in items):
                raise ValueError(f"TensorArray.concat needs elements of rank >= 1, got scalars "
                                 f"(at {user_line()})")
            return array.concat(items, 0)
        buf = self._graph_buf()
        if len(buf.shape) < 2:
            raise ValueError(f"TensorArray.concat needs elements of rank >= 1, got scalars "
                             f"(at {user_line()})")
        return array.reshape(buf, (-1,) + tuple(buf.shape[2:]))

    def unstack(self, value, name=None) -> TensorArray:
        value = self._value(value)
        if not value.shape:
            raise ValueError(f"Cannot unstack a scalar into a TensorArray (at {user_line()})")
        k = value.shape[0]
        if not self._dynamic_size and k > self._length():
            raise ValueError(f"Cannot unstack {k} tensors into a TensorArray of static size "
                             f"{self._length()} ")
        return self.scatter(list(range(k)), value)

    def scatter(self, indices, value, name=None) -> TensorArray:
        value = self._value(value)
        idx = [int(i) for i in np.asarray(indices.numpy() if isinstance(indices, Tensor)
                                          else indices).reshape(-1)] \
            if not _symbolic(indices) else None
        if idx is None:
            k = indices.shape[0]
            if k is None:
                raise ValueError("TensorArray.scatter: the number of indices must be static")
            idx = [array.gather(indices, j) for j in range(k)]
        if len(idx) != value.shape[0]:
            raise InvalidArgumentError(f"TensorArray.scatter: {len(idx)} indices for "
                                       f"{value.shape[0]} values")
        out = self
        for j, i in enumerate(idx):
            out = out.write(i, array.gather(value, j))
        return out

    def split(self, value, lengths, name=None) -> TensorArray:
        value = self._value(value)
        lengths = [int(n) for n in np.asarray(lengths.numpy() if isinstance(lengths, Tensor)
                                              else lengths).reshape(-1)]
        if sum(lengths) != value.shape[0]:
            raise InvalidArgumentError(
                f"Expected sum of lengths to be equal to values.shape[0], but sum of lengths is "
                f"{sum(lengths)} and value's shape is: {list(value.shape)} ")
        out = self._copy() if self._graph else self
        out._infer_shape = False       # TensorFlow: split leaves the element shape unknown
        start = 0
        for i, n in enumerate(lengths):
            out = out.write(i, array.strided_slice(value, ((start, start + n, None),)))
            start += n
        return out

    def close(self, name=None) -> None:
        pass

    def mark_used(self):
        pass

    # -- eager ---------------------------------------------------------------------------
    def _eager_write(self, i, value):
        if i >= len(self._items):
            if not self._dynamic_size:
                raise OutOfRangeError(f"Tried to write to index {i} but array is not resizeable "
                                      f"and size is: {len(self._items)}")
            self._items += [None] * (i + 1 - len(self._items))
        self._items[i] = value
        self._cleared.discard(i)
        return self

    def _eager_read(self, i):
        if i >= len(self._items):
            raise OutOfRangeError(f"Tried to read from index {i} but array size is: "
                                  f"{len(self._items)}")
        value = self._items[i]
        if value is None:
            if i in self._cleared:
                raise InvalidArgumentError(
                    f"Could not read index {i} twice because it was cleared after a previous "
                    f"read (perhaps try setting clear_after_read = false?)")
            return creation.zeros(self._shape, self._dtype) if self._shape is not None \
                else self._zeros(0)
        if self._clear_after_read:
            self._items[i] = None
            self._cleared.add(i)
        return value

    def _eager_stack_items(self):
        if any(v is None for v in self._items) and self._shape is None:
            raise ValueError(f"the TensorArray's element shape is unknown (at {user_line()}): "
                             f"pass element_shape=, or write an element first")
        zero = None
        out = []
        for v in self._items:
            if v is None:
                zero = creation.zeros(self._shape, self._dtype) if zero is None else zero
                v = zero
            out.append(v)
        return out

    # -- traced, elements of different shapes ----------------------------------------------
    def _ragged_write(self, i, value):
        """infer_shape=False and an element of another shape: a list of tensors from now on
        (TensorFlow's TensorList of unknown element shape), at Python int indices only."""
        shapes = (self._shape, tuple(value.shape))
        if i is None or self._n is None:
            raise ValueError(
                f"a TensorArray with infer_shape=False written with elements of shapes "
                f"{shapes[0]} and {shapes[1]} inside a function (at {user_line()}): elements "
                f"of different shapes are supported at Python int indices of a TensorArray of "
                f"known size only (not in a loop on a tensor, whose loop variables are tensors)")
        out = self._copy()
        if out._ragged is None:
            rows = [] if out._n == 0 else (array.unstack(out._buf) if out._buf is not None
                                           else [None] * out._n)
            out._ragged, out._buf = list(rows), None
        else:
            out._ragged = list(out._ragged)
        if i >= len(out._ragged):
            if not out._dynamic_size:   # TensorFlow's TensorListSetItem, at trace time
                raise InvalidArgumentError(f"Trying to modify element {i} in a list with "
                                           f"{len(out._ragged)} elements. (at {user_line()})")
            out._ragged += [None] * (i + 1 - len(out._ragged))
        out._ragged[i] = value
        out._n = len(out._ragged)
        return out

    def _ragged_item(self, i):
        if i is None:
            raise ValueError(f"TensorArray.read at a tensor index of a TensorArray whose elements "
                             f"have different shapes (at {user_line()}): use a Python int")
        if i >= len(self._ragged):
            raise InvalidArgumentError(f"Trying to access element {i} in a list with "
                                       f"{len(self._ragged)} elements. (at {user_line()})")
        if self._ragged[i] is None:
            raise ValueError(f"element {i} of a TensorArray whose elements have different "
                             f"shapes was never written, so its shape is unknown (at "
                             f"{user_line()})")
        return self._ragged[i]

    def _ragged_stack(self, indices):
        items = [self._ragged_item(k) for k in indices]
        shapes = sorted({tuple(t.shape) for t in items})
        if len(shapes) > 1:     # TensorFlow: TensorListStack's InvalidArgumentError
            raise InvalidArgumentError(f"Tried to stack elements of shapes {shapes} from a "
                                       f"TensorArray (at {user_line()}): stack needs one shape; "
                                       f"concat joins them")
        return array.stack(items) if items else creation.zeros((0,), self._dtype)

    # -- traced ---------------------------------------------------------------------------
    def _copy(self):
        out = object.__new__(TensorArray)
        out.__dict__.update(self.__dict__)
        return out

    def _grow(self, n):
        if self._buf is not None:
            self._buf = array.concat([self._buf, self._zeros(n - self._n)], 0)
        self._n = n

    def _graph_buf(self):
        if self._buf is None:       # never written
            return self._zeros(self._start if self._n is None else self._n)
        return self._buf

    def _with_size(self, n):
        """A traced TensorArray grown to ``n`` elements (a dynamic one, before a loop)."""
        out = self._copy()
        out._grow(n)
        return out

    def _run_time_sized(self, zero):
        """This dynamic-size TensorArray with its size known only when the program runs: its
        tensor's leading dim None, so a While whose trip count the trace does not know can
        grow it (a write past the end concatenates zero rows, ``_grown``). ``zero``: an int32
        scalar of the trace, 0 when the program runs (see ``_unknown_rows``)."""
        out = self._copy()
        out._n, out._start = None, self._n
        if out._buf is None and out._shape is not None:
            out._buf = out._zeros(self._n)
        if out._buf is not None:
            out._buf = _unknown_rows(out._buf, zero)
        return out

    def _with_element_shape(self, shape, zero):
        """A traced TensorArray whose element shape is now known: its zeros buffer made
        (``zero``: see ``_run_time_sized``)."""
        out = self._copy()
        out._shape = tuple(shape)
        out._buf = out._zeros(out._n) if out._n is not None \
            else _unknown_rows(out._zeros(out._start), zero)
        return out

    # -- nest protocol: a loop or branch variable is its tensor ---------------------------
    def __tf_flatten__(self):
        if not self._graph:
            return self, []          # eager: the mutable list itself, no tensors
        if self._ragged is not None:
            raise ValueError(f"a TensorArray whose elements have different shapes cannot be a "
                             f"loop variable or a branch output inside a function (at "
                             f"{user_line()}): it is a list of tensors, not one tensor")
        meta = (self._dtype, self._n, self._shape, self._dynamic_size, self._clear_after_read,
                self._infer_shape, self._start)
        return meta, ([] if self._buf is None else [self._buf])

    @classmethod
    def __tf_unflatten__(cls, meta, components):
        if isinstance(meta, TensorArray):
            return meta
        out = object.__new__(cls)
        (out._dtype, out._n, out._shape, out._dynamic_size, out._clear_after_read,
         out._infer_shape, out._start) = meta
        out._graph = True
        out._buf = components[0] if components else None
        return out


def _unknown_rows(buf, zero):
    """``buf`` with its leading dim None: ``zero`` more rows of zeros appended. ``zero`` is a
    tensor of the trace (not a constant, which would give a static shape again when the
    graph is replayed through dispatch: autodiff, specialisation), 0 when the program runs:
    the initial value of a list that a loop of unknown trip count grows."""
    pad = creation.zeros([zero] + list(buf.shape[1:]), buf.dtype)
    return array.concat([buf, pad], 0)


def _grown(buf, index):
    """``buf`` [None, *e] with zero rows appended up to ``index + 1`` rows if it has fewer (a
    dynamic-size write past the end, as TensorFlow's TensorListSetItem with
    resize_if_index_out_of_bounds)."""
    n = dims.dim(dims.shape_of(buf), 0)
    index = convert_to_tensor(index, dtype=D.int32) if not _symbolic(index) else index
    more = math.maximum(math.subtract(math.add(index, 1), n), 0)
    pad = creation.zeros([more] + list(buf.shape[1:]), buf.dtype)
    return array.concat([buf, pad], 0)


__all__ = ["TensorArray", "tensor_list_set_item"]
