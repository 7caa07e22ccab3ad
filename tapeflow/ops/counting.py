"""``tf.math`` functions whose output size comes from the data (bincount, confusion_matrix, the
sorted segment reductions) and ``invert_permutation``: TF's composites over scatter and segment
sums. The sizes must be known while tracing (given, or read from eager/constant inputs): a
traced input whose size decides the output's is refused with a ValueError naming the argument.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..ir import dtypes as D
from ..runtime.tensor import Tensor
from . import math as m
from .array import reshape, stack
from .composites import unsorted_segment_mean
from .creation import ones_like
from .creation import range as _range
from .dims import is_symbolic
from .indexing import scatter_nd
from .reduce import unsorted_segment_sum


def _known(value, what):
    if is_symbolic(value):
        raise ValueError(f"{what} decides the output's size, so it must be known while tracing "
                         "(pass the size explicitly, or a constant)")
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value)


def invert_permutation(x, name=None) -> Tensor:
    """``y`` with ``y[x[i]] = i``; ``x`` must be a permutation of 0..n-1.

    >>> tf.math.invert_permutation([2, 0, 1])
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([1, 2, 0], dtype=int32)>
    """
    x = m._tensor(x)
    if not is_symbolic(x):
        v = np.asarray(x)
        seen = set()
        for i in v.tolist():
            if not 0 <= i < len(v):
                raise InvalidArgumentError(f"{i} is not between 0 and {len(v)}")
            if i in seen:
                raise InvalidArgumentError(f"{i} is duplicated in the input.")
            seen.add(i)
    n = x.shape[0]
    return scatter_nd(reshape(x, [-1, 1]), _range(n, dtype=x.dtype), [n])


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=D.int32,
                     name=None) -> Tensor:
    """Counts (or summed ``weights``) of each (label, prediction) pair, a square matrix.

    >>> tf.math.confusion_matrix([1, 2], [2, 2], num_classes=3)
    <tf.Tensor: shape=(3, 3), dtype=int32, numpy=
    array([[0, 0, 0],
           [0, 0, 1],
           [0, 0, 1]], dtype=int32)>
    """
    labels, predictions = m._tensor(labels), m._tensor(predictions)
    dtype = D.as_dtype(dtype)
    if num_classes is None:
        top = max(int(np.max(_known(labels, "labels"), initial=-1)),
                  int(np.max(_known(predictions, "predictions"), initial=-1)))
        num_classes = top + 1
    n = int(num_classes)
    labels, predictions = m.cast(labels, D.int64), m.cast(predictions, D.int64)
    if not (is_symbolic(labels) or is_symbolic(predictions)):
        for what, v in (("labels", labels), ("predictions", predictions)):
            v = np.asarray(v)
            if np.any(v < 0) or np.any(v >= n):
                raise InvalidArgumentError(f"`{what}` out of bound [0, {n})")
    values = (ones_like(labels, dtype=dtype) if weights is None
              else m.cast(m._tensor(weights), dtype))
    return scatter_nd(stack([labels, predictions], axis=1), values, [n, n])


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=D.int32, name=None,
             axis=None, binary_output=False) -> Tensor:
    """How often each value 0..n-1 occurs in ``arr`` (summed ``weights`` if given); values at or
    past ``maxlength`` are dropped. ``axis=-1`` counts each row of a 2-D ``arr`` separately.

    >>> tf.math.bincount([1, 1, 3, 0])
    <tf.Tensor: shape=(4,), dtype=int32, numpy=array([1, 2, 0, 1], dtype=int32)>
    """
    arr = m._tensor(arr)
    if minlength is not None and maxlength is not None and int(minlength) == int(maxlength):
        size = int(minlength)
    else:
        size = int(np.max(_known(arr, "arr"), initial=-1)) + 1
        if minlength is not None:
            size = max(size, int(minlength))
        if maxlength is not None:
            size = min(size, int(maxlength))
    out_dtype = m._tensor(weights).dtype if weights is not None else D.as_dtype(dtype)
    ids = m.cast(arr, D.int32)
    if axis is not None and int(axis) in (-1, len(arr.shape) - 1) and len(arr.shape) == 2:
        rows = arr.shape[0]
        offsets = m.constant_like(np.arange(rows, dtype=np.int32)[:, None] * size, ids)
        inside = m.less(ids, m.constant_like(size, ids))
        ids = m.where(inside, m.add(ids, offsets), m.constant_like(-1, ids))
        counts = _count(ids, weights, size * rows, out_dtype, binary_output)
        return reshape(counts, [rows, size])
    ids = m.where(m.less(ids, m.constant_like(size, ids)), ids, m.constant_like(-1, ids))
    return _count(reshape(ids, [-1]) if len(ids.shape) != 1 else ids,
                  None if weights is None else reshape(m._tensor(weights), [-1]), size, out_dtype,
                  binary_output)


def _count(ids, weights, size, dtype, binary_output):
    ids = reshape(ids, [-1])
    values = ones_like(ids, dtype=dtype) if weights is None else m.cast(reshape(weights, [-1]), dtype)
    counts = unsorted_segment_sum(values, ids, size)
    if binary_output:
        counts = m.cast(m.greater(counts, m.constant_like(0, counts)), dtype)
    return counts


def _sorted_segments(segment_ids):
    ids = _known(segment_ids, "segment_ids")
    if ids.size and np.any(np.diff(ids.ravel()) < 0):
        raise InvalidArgumentError("segment ids are not increasing")
    return int(ids.max(initial=-1)) + 1


def segment_sum(data, segment_ids, name=None) -> Tensor:
    """Sums of the rows of ``data`` in each (sorted) segment; segments 0..max(ids).

    >>> tf.math.segment_sum(tf.constant([1.0, 2.0, 3.0, 4.0]), [0, 0, 2, 2])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([3., 0., 7.], dtype=float32)>
    """
    return unsorted_segment_sum(data, segment_ids, _sorted_segments(segment_ids))


def segment_mean(data, segment_ids, name=None) -> Tensor:
    """Means of the rows of ``data`` in each (sorted) segment (0 for an empty one).

    >>> tf.math.segment_mean(tf.constant([1.0, 2.0, 3.0, 4.0]), [0, 0, 2, 2])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([1.5, 0. , 3.5], dtype=float32)>
    """
    return unsorted_segment_mean(data, segment_ids, _sorted_segments(segment_ids))


__all__ = ["invert_permutation", "confusion_matrix", "bincount", "segment_sum", "segment_mean"]
