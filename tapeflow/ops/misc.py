"""Top-level ``tf.*`` composites of other ops: ``repeat``, ``sequence_mask``,
``unravel_index`` and the fixed-width histograms (TF's, op for op where they compute).
Tensor predicates, static values and broadcast shapes are ``static_values.py``'s;
``shape_n``/``identity_n`` are ``grouping.py``'s; name scopes and the logger ``scopes.py``'s."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..ir import dtypes as D
from ..runtime.tensor import Tensor
from . import math as m
from .array import expand_dims, gather, reshape, stack
from .clip import clip_by_value
from .creation import range as _range
from .dims import is_symbolic
from .reduce import reduce_max, unsorted_segment_sum


def _concrete(value, what):
    if is_symbolic(value):
        raise ValueError(f"{what} must be known while tracing (a constant), not a traced tensor")
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value)


def repeat(input, repeats, axis=None, name=None) -> Tensor:
    """Each entry of ``input`` along ``axis`` repeated ``repeats`` times (``axis=None``: of the
    flattened input). ``repeats`` must be known while tracing.

    >>> tf.repeat(tf.constant([[1, 2], [3, 4]]), [1, 2], axis=0)
    <tf.Tensor: shape=(3, 2), dtype=int32, numpy=
    array([[1, 2],
           [3, 4],
           [3, 4]], dtype=int32)>
    """
    x = m._tensor(input)
    if axis is None:
        x, axis = reshape(x, [-1]), 0
    axis = int(axis) % max(len(x.shape), 1)
    reps = _concrete(repeats, "repeats").astype(np.int64)
    n = x.shape[axis]
    if reps.ndim == 0 or reps.size == 1:
        reps = np.full(n, int(reps.ravel()[0]))
    if reps.shape != (n,):
        raise InvalidArgumentError(f"repeats has shape {list(reps.shape)}, expected [{n}] "
                                   f"(or a scalar) for axis {axis} of shape {list(x.shape)}")
    index = np.repeat(np.arange(n, dtype=np.int32), reps)
    return gather(x, index, axis=axis)


def sequence_mask(lengths, maxlen=None, dtype=D.bool_, name=None) -> Tensor:
    """``mask[..., j] = j < lengths[...]``, with ``maxlen`` columns (the longest by default).

    >>> tf.sequence_mask([1, 3], 4)
    <tf.Tensor: shape=(2, 4), dtype=bool, numpy=
    array([[ True, False, False, False],
           [ True,  True,  True, False]])>
    """
    lengths = m._tensor(lengths)
    if maxlen is None:
        maxlen = reduce_max(lengths) if is_symbolic(lengths) else max(int(np.max(np.asarray(lengths), initial=0)), 0)
    maxlen = int(_concrete(maxlen, "maxlen"))
    row = _range(maxlen, dtype=lengths.dtype)
    mask = m.less(row, expand_dims(lengths, -1))
    dtype = D.as_dtype(dtype)
    return mask if dtype == D.bool_ else m.cast(mask, dtype)


def unravel_index(indices, dims, name=None) -> Tensor:
    """Flat ``indices`` into an array of shape ``dims`` as coordinates, one row per dim.

    >>> tf.unravel_index([5, 7], [3, 4])
    <tf.Tensor: shape=(2, 2), dtype=int32, numpy=
    array([[1, 1],
           [1, 3]], dtype=int32)>
    """
    indices = m._tensor(indices)
    dims = _concrete(dims, "dims").astype(np.int64)
    if not is_symbolic(indices):
        v = np.asarray(indices)
        if np.any((v < 0) | (v >= np.prod(dims))):
            raise InvalidArgumentError(f"index out of bounds for array of shape {dims.tolist()}")
    coords, rest = [], indices
    for d in dims[::-1]:
        d = m.constant_like(int(d), indices)
        coords.append(m.floormod(rest, d))
        rest = m.floordiv(rest, d)
    return stack(coords[::-1], axis=0)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=D.int32, name=None) -> Tensor:
    """The bin of each value among ``nbins`` equal bins over ``value_range`` (values outside
    go to the first or last bin).

    >>> tf.histogram_fixed_width_bins(tf.constant([-1.0, 0.0, 1.5, 2.0, 5.0]), [0.0, 5.0], nbins=5)
    <tf.Tensor: shape=(5,), dtype=int32, numpy=array([0, 0, 1, 2, 4], dtype=int32)>
    """
    values = m._tensor(values)
    value_range = m._tensor(value_range, dtype_hint=values.dtype)
    flat = reshape(values, [-1])
    scaled = m.truediv(m.subtract(flat, value_range[0]), m.subtract(value_range[1], value_range[0]))
    indices = m.floor(m.multiply(m.constant_like(nbins, scaled), scaled))
    indices = clip_by_value(m.cast(indices, D.int32), 0, int(nbins) - 1)
    return reshape(m.cast(indices, dtype), values.shape)


def histogram_fixed_width(values, value_range, nbins=100, dtype=D.int32, name=None) -> Tensor:
    """How many values fall in each of ``nbins`` equal bins over ``value_range``.

    >>> tf.histogram_fixed_width(tf.constant([-1.0, 0.0, 1.5, 2.0, 5.0]), [0.0, 5.0], nbins=5)
    <tf.Tensor: shape=(5,), dtype=int32, numpy=array([2, 1, 1, 0, 1], dtype=int32)>
    """
    bins = reshape(histogram_fixed_width_bins(values, value_range, nbins, D.int32), [-1])
    ones = m.cast(m.greater_equal(bins, m.constant_like(0, bins)), D.int32)
    return m.cast(unsorted_segment_sum(ones, bins, int(nbins)), dtype)


__all__ = ["repeat", "sequence_mask", "unravel_index", "histogram_fixed_width_bins",
           "histogram_fixed_width"]
