"""What a converted Python ``for`` runs (while_rewrite.py turns it into a ``while``)::

    _tfw_iter_0 = _tfw_rt.for_iter(<iterable>)     # tf.range / range / enumerate / zip calls in
    _tfw_index_0 = _tfw_iter_0.start()             #   <iterable> go through _tfw_rt.iterable
    while _tfw_iter_0.more(_tfw_index_0):
        <target> = _tfw_iter_0.at(_tfw_index_0)
        _tfw_index_0 = _tfw_index_0 + 1
        <body>
    else:
        <else>

The ``while`` is converted like any other (pywhile.py): a Python iterable gives Python values
(``PyIter``: ``more`` fetches the next item, exactly when Python's ``for`` would), so the loop
stays a Python loop, unrolled while tracing, as in TensorFlow; a tensor iteration (``TensorIter``:
``tf.range`` with any bounds, ``range`` with a symbolic bound, a symbolic tensor's rows, and
``enumerate``/``zip`` over those) gives a symbolic counter, so it becomes one While node whose
loop variables include the counter. A ``tf.data`` dataset or iterator makes its own TensorIter
(its ``_traced_for``: the elements fed to the program at each call, data/traced.py).
"""
import builtins

import numpy as np

from ..errors import user_line
from ..ops import array, creation, math
from ..ops.tensor_array import TensorArray, note_index_bounds
from ..runtime.tensor import Tensor, convert_to_tensor
from .context import LoopError, current
from .pywhile import note_trip_count
from .symbolic_tensor import SymbolicTensor, TracingError


def _symbolic(x):
    """``x`` (a Python number or tensor) as a symbolic tensor of the current trace."""
    if isinstance(x, SymbolicTensor):
        return x
    return SymbolicTensor(current().value_of(convert_to_tensor(x)))


class PyIter:
    """A Python iterable, fetched one item ahead when the loop's test asks for more."""

    def __init__(self, obj):
        self.it, self.item = iter(obj), None

    def start(self):
        return 0

    def more(self, k):
        try:
            self.item = next(self.it)
        except StopIteration:
            return False
        return True

    def at(self, k):
        return self.item


class TensorIter:
    """Element ``k`` of ``length`` computed from the counter ``k`` (an int32 tensor)."""

    def __init__(self, length, element):
        self.length, self.element = length, element

    def start(self):
        return _symbolic(convert_to_tensor(0, dtype="int32"))

    def more(self, k):
        if isinstance(self.length, Tensor):     # known while tracing (constant bounds)
            note_trip_count(int(self.length.numpy()))
        return math.less(k, self.length)

    def at(self, k):
        return self.element(k)


def _range_iter(args, kw):
    start, limit, delta = (args + (1,))[:3] if len(args) > 1 else (0, args[0], 1)
    start, limit = kw.get("start", start), kw.get("limit", limit)
    delta = kw.get("delta", delta)
    if limit is None:
        start, limit = 0, start
    vals = [convert_to_tensor(v) if not isinstance(v, (Tensor, SymbolicTensor)) else v
            for v in (start, limit, delta)]
    dtype = kw.get("dtype")
    if dtype is None:
        order = ["int32", "int64", "float16", "float32", "float64"]
        dtype = max((v.dtype.name for v in vals), key=lambda d: order.index(d) if d in order else 0)
    start, limit, delta = [math.cast(v, dtype) for v in vals]
    if start.dtype.is_integer:
        n = math.negative(math.floordiv(math.subtract(start, limit), delta))   # ceil, any sign
    else:
        n = math.negative(math.floor(math.divide(math.subtract(start, limit), delta)))
    n = math.maximum(math.cast(n, "int32"), 0)

    def element(k):
        value = math.add(start, math.multiply(math.cast(k, start.dtype), delta))
        if bounds is not None:      # a dynamic-size TensorArray written at it stays static
            note_index_bounds(value, *bounds)
        return value
    bounds = None
    if all(isinstance(v, Tensor) for v in (start, limit, delta)) and start.dtype.is_integer \
            and int(delta.numpy()) != 0:
        values = np.arange(int(start.numpy()), int(limit.numpy()), int(delta.numpy()))
        bounds = (int(values.min()), int(values.max())) if values.size else None
    return TensorIter(n, element)


def _rows_iter(x):
    if not x.shape:
        raise LoopError(f"iterating over a scalar tensor is not allowed (at {user_line()})")
    n = x.shape[0] if x.shape[0] is not None else array.shape(x)[0]
    return TensorIter(convert_to_tensor(n, dtype="int32") if isinstance(n, int) else n,
                      lambda k: array.gather(x, k))


def _as_tensor_iter(obj):
    """A TensorIter for ``obj``, or None when ``obj`` iterates as Python."""
    if isinstance(obj, TensorIter):
        return obj
    if isinstance(obj, SymbolicTensor):
        return _rows_iter(obj)
    if isinstance(obj, TensorArray) and obj._graph:   # beyond TensorFlow: its elements
        return _rows_iter(_symbolic(obj.stack()))
    traced_for = getattr(type(obj), "_traced_for", None)   # a tf.data dataset or iterator
    if traced_for is not None:
        return traced_for(obj)      # a TensorIter over the elements fed at each call, or None
    return None


def iterable(fn, *args, **kw):
    """``fn(*args, **kw)`` in a ``for`` statement's iterable: ``tf.range``, ``range``,
    ``enumerate`` and ``zip`` iterate over tensors without making a Python sequence."""
    if current() is not None:
        if fn is creation.range or (fn is builtins.range and any(
                isinstance(a, SymbolicTensor) for a in list(args) + list(kw.values()))):
            return _range_iter(args, kw)
        if fn is builtins.enumerate and args:
            inner = _as_tensor_iter(args[0])
            if inner is not None:
                first = kw.get("start", args[1] if len(args) > 1 else 0)
                dtype = getattr(inner, "index_dtype", None)     # a dataset's: int64, as TF's
                return TensorIter(inner.length, lambda k: (
                    _counted(k, first, dtype), inner.at(k)))
        if fn is builtins.zip and args and not kw:
            inner = [_as_tensor_iter(a) for a in args]
            if all(i is not None for i in inner):
                n = inner[0].length
                for i in inner[1:]:
                    n = math.minimum(n, i.length)
                return TensorIter(n, lambda k: tuple(i.at(k) for i in inner))
    args = [_materialize(a) for a in args]
    return fn(*args, **{k: _materialize(v) for k, v in kw.items()})


def _counted(k, first, dtype):
    k = k if dtype is None else math.cast(k, dtype)
    return math.add(k, first) if first else k


def _materialize(x):
    if isinstance(x, TensorIter):
        raise TracingError("a tensor range or tensor iteration can only be iterated by a `for` "
                           "statement (directly, or through enumerate/zip) inside a function")
    return x


def for_iter(obj):
    """The iterator a converted ``for`` runs: a TensorIter inside a trace for a tensor
    iteration, else a PyIter (Python's iteration, concrete tensors' rows included)."""
    tensor = _as_tensor_iter(obj) if current() is not None else None
    return tensor if tensor is not None else PyIter(_materialize(obj))


__all__ = ["iterable", "for_iter", "PyIter", "TensorIter"]
