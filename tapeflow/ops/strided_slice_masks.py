"""``tf.strided_slice``: TensorFlow's begin/end/strides and five bit masks, turned into the
indexing key they stand for (``x[1:, ..., tf.newaxis, 2]``) and lowered by ``Tensor.__getitem__``
(ops/array.py ``getitem``: the StridedSlice op and its gradient).

Bit i of a mask concerns entry i of the spec; for one entry ellipsis wins over new axis, which
wins over the begin/end masks and shrinking (TF's ``BuildDenseSpec``). A shrunk axis takes
``begin[i]`` and ignores the begin/end masks, as in TensorFlow. ``begin``, ``end`` and
``strides`` must be known while tracing (Python ints, constants or eager tensors).
"""
from __future__ import annotations

import builtins

import numpy as np

from ..errors import InvalidArgumentError
from ..runtime.tensor import Tensor
from . import math as m
from .array import getitem
from .dims import is_symbolic


def _ints(value, what):
    if is_symbolic(value):
        raise ValueError(f"tf.strided_slice: {what} must be known while tracing (Python ints, "
                         "a constant or an eager tensor)")
    v = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    if v.ndim != 1 or (v.size and v.dtype.kind not in "iu"):
        raise InvalidArgumentError(f"{what} must be a 1-D integer tensor, got {v.tolist()!r}")
    return [int(i) for i in v]


def slice_key(begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
              shrink_axis_mask=0):
    """The Python indexing key that TensorFlow's spec and masks describe."""
    if not len(begin) == len(end) == len(strides):
        raise InvalidArgumentError(
            "Expected begin, end, and strides to be 1D equal size tensors, but got shapes "
            f"[{len(begin)}], [{len(end)}], and [{len(strides)}] instead.")
    key, ellipsis = [], False
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if s == 0:
            raise InvalidArgumentError(f"strides[{i}] must be non-zero")
        if ellipsis_mask & bit:
            if ellipsis:
                raise InvalidArgumentError("Multiple ellipses in slice spec not allowed")
            ellipsis = True
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_axis_mask & bit:
            if s < 0:
                raise InvalidArgumentError("only stride 1 allowed on non-range indexing.")
            key.append(b)
        else:
            key.append(builtins.slice(None if begin_mask & bit else b,
                                      None if end_mask & bit else e, s))
    return tuple(key)


def _check_bounds(key, shape):
    """TF's errors for an index past the input's rank or a shrunk index out of range."""
    rank = len(shape)
    used = [k for k in key if k is not None and k is not Ellipsis]
    if len(used) > rank:
        raise InvalidArgumentError(f"Index out of range using input dim {rank}; input has only "
                                   f"{rank} dims")
    pos = 0
    for k in key:
        if k is Ellipsis:
            pos += rank - len(used)
        elif k is None:
            continue
        else:
            d = shape[pos]
            if isinstance(k, int) and d is not None and not -d <= k < d:
                raise InvalidArgumentError(f"slice index {k} of dimension {pos} out of bounds.")
            pos += 1


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None) -> Tensor:
    """The strided slice of ``input_`` from ``begin`` to ``end`` (exclusive) by ``strides``.

    >>> x = tf.reshape(tf.range(24), [2, 3, 4])
    >>> tf.strided_slice(x, [1, -1, 0], [2, 0, 4], [1, -1, 2])
    <tf.Tensor: shape=(1, 2, 2), dtype=int32, numpy=
    array([[[20, 22],
            [16, 18]]], dtype=int32)>
    >>> tf.strided_slice(x, [0, 1], [0, 3], begin_mask=1, ellipsis_mask=1).shape
    TensorShape([2, 3, 2])
    """
    x = m._tensor(input_)
    begin, end = _ints(begin, "begin"), _ints(end, "end")
    strides = [1] * len(begin) if strides is None else _ints(strides, "strides")
    key = slice_key(begin, end, strides, int(begin_mask), int(end_mask), int(ellipsis_mask),
                    int(new_axis_mask), int(shrink_axis_mask))
    _check_bounds(key, tuple(x.shape))
    return getitem(x, key)


__all__ = ["strided_slice"]
