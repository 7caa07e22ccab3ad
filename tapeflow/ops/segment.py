"""Segment max, min and product: ``tf.math.segment_max`` ... ``unsorted_segment_prod``.

Sorted ids decide the number of segments (``max(segment_ids) + 1``), so they must be known
while tracing, as for ``segment_sum`` (ops/counting.py). An unsorted op's ``num_segments`` may
be a tensor known only when the program runs, as in TensorFlow: then the op is a composite
(``_dynamic_unsorted_segment``) with an unknown first dim.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor
from . import math as m
from .array import expand_dims
from .creation import ones_like
from .dims import is_symbolic
from .reduce import reduce_max, reduce_min, reduce_prod, unsorted_segment_sum
from .scan import cumsum


def _known(value, what):
    if is_symbolic(value):
        raise ValueError(f"{what} decides the output's size, so it must be known while tracing "
                         "(pass a Python int or a constant)")
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value)


def _count_sorted(op, segment_ids):
    ids = _known(segment_ids, "segment_ids").ravel()
    if ids.size and np.any(np.diff(ids) < 0):
        raise InvalidArgumentError(f"{op}: segment ids are not increasing")
    return max(int(ids.max(initial=-1)) + 1, 0)


def sorted_segment(op, data, segment_ids, num_segments=None):
    """``op`` (``SegmentMax``, ``SegmentMin``, ``SegmentProd``); ``num_segments`` from the ids
    unless given (the gradient rules pass the forward op's)."""
    if num_segments is None:
        num_segments = _count_sorted(op, segment_ids)
    return apply(op, [m._tensor(data), m._tensor(segment_ids)], {"num_segments": int(num_segments)})


def unsorted_segment(op, data, segment_ids, num_segments):
    if is_symbolic(num_segments):
        return _dynamic_unsorted_segment(op, m._tensor(data), m._tensor(segment_ids),
                                         num_segments)
    n = int(_known(num_segments, "num_segments"))
    return apply(op, [m._tensor(data), m._tensor(segment_ids)], {"num_segments": n})


def _dynamic_unsorted_segment(op, data, ids, num_segments):
    """``op`` with ``num_segments`` a tensor known only when the program runs (TensorFlow takes
    one too; the output's first dim is then unknown): each row of ``data`` compared with every
    segment id (an ``ids.shape + [n]`` mask), the masked rows reduced over ``ids``' axes, the
    segment's initial value where none falls. Built from ops whose gradients are TensorFlow's,
    so its gradient is TensorFlow's rule for the op (to rounding: a product's gradient is the
    product of the other rows, where TensorFlow divides the product by the row). The ids are
    checked by ``unsorted_segment_sum``'s dynamic op, whose counts pick the empty segments:
    an id >= num_segments raises its "is out of range" error when the program runs."""
    k, rest = len(ids.shape), len(data.shape) - len(ids.shape)
    n = m.cast(num_segments, ids.dtype)
    counts = unsorted_segment_sum(ones_like(ids), ids, n)          # [n]; checks the ids
    segments = cumsum(ones_like(counts), exclusive=True)           # 0, 1, ..., n-1
    mask = m.equal(expand_dims(ids, -1), segments)                 # ids.shape + [n]
    for _ in range(rest):
        mask = expand_dims(mask, -1)                               # ids.shape + [n] + [1]*rest
    init = {"UnsortedSegmentMax": data.dtype.min, "UnsortedSegmentMin": data.dtype.max,
            "UnsortedSegmentProd": 1}[op]
    init = m.cast(init, data.dtype)
    rows = m.where(mask, expand_dims(data, k), init)               # ids.shape + [n] + rest
    axes = list(range(k))
    if op == "UnsortedSegmentMax":
        out = m.maximum(reduce_max(rows, axes), init)
    elif op == "UnsortedSegmentMin":
        out = m.minimum(reduce_min(rows, axes), init)
    else:
        out = reduce_prod(rows, axes)
    some = m.greater(counts, 0)
    for _ in range(rest):
        some = expand_dims(some, -1)
    return m.where(some, out, init)


def segment_max(data, segment_ids, name=None) -> Tensor:
    """The largest row of ``data`` in each segment of the sorted ``segment_ids`` (0 for an
    empty segment).

    >>> tf.math.segment_max(tf.constant([1.0, 5.0, 3.0, 4.0]), [0, 0, 2, 2])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([5., 0., 4.], dtype=float32)>
    """
    return sorted_segment("SegmentMax", data, segment_ids)


def segment_min(data, segment_ids, name=None) -> Tensor:
    """The smallest row of ``data`` in each segment of the sorted ``segment_ids`` (0 for an
    empty segment).

    >>> tf.math.segment_min(tf.constant([1.0, 5.0, 3.0, 4.0]), [0, 0, 2, 2])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([1., 0., 3.], dtype=float32)>
    """
    return sorted_segment("SegmentMin", data, segment_ids)


def segment_prod(data, segment_ids, name=None) -> Tensor:
    """The product of the rows of ``data`` in each segment of the sorted ``segment_ids`` (1 for
    an empty segment).

    >>> tf.math.segment_prod(tf.constant([1.0, 5.0, 3.0, 4.0]), [0, 0, 2, 2])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([ 5.,  1., 12.], dtype=float32)>
    """
    return sorted_segment("SegmentProd", data, segment_ids)


def unsorted_segment_max(data, segment_ids, num_segments, name=None) -> Tensor:
    """The largest row of ``data`` in each of ``num_segments`` segments; rows with a negative
    id are dropped, an empty segment holds the dtype's lowest finite value.

    >>> tf.math.unsorted_segment_max(tf.constant([1.0, 5.0, 3.0]), [1, -1, 1], 2)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-3.4028235e+38,  3.0000000e+00], dtype=float32)>
    """
    return unsorted_segment("UnsortedSegmentMax", data, segment_ids, num_segments)


def unsorted_segment_min(data, segment_ids, num_segments, name=None) -> Tensor:
    """The smallest row of ``data`` in each of ``num_segments`` segments; rows with a negative
    id are dropped, an empty segment holds the dtype's highest finite value.

    >>> tf.math.unsorted_segment_min(tf.constant([1, 5, 3]), [1, -1, 1], 2)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([2147483647,          1], dtype=int32)>
    """
    return unsorted_segment("UnsortedSegmentMin", data, segment_ids, num_segments)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None) -> Tensor:
    """The product of the rows of ``data`` in each of ``num_segments`` segments; rows with a
    negative id are dropped, an empty segment holds 1.

    >>> tf.math.unsorted_segment_prod(tf.constant([2.0, 5.0, 3.0]), [1, -1, 1], 3)
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([1., 6., 1.], dtype=float32)>
    """
    return unsorted_segment("UnsortedSegmentProd", data, segment_ids, num_segments)


__all__ = ["segment_max", "segment_min", "segment_prod", "unsorted_segment_max",
           "unsorted_segment_min", "unsorted_segment_prod"]
