"""Functions whose output shape comes from the data: ``boolean_mask``, one-argument ``where``,
``unique(_with_counts)``, ``dynamic_partition``, ``dynamic_stitch``, and ``searchsorted``.

The data-dependent ones read the deciding input's value (an eager tensor or a constant) and
then gather, so gradients flow to the data as TF's do; a traced deciding input is refused with
a ValueError (a compiled program's sizes are fixed when it is traced). ``searchsorted`` has a
static shape and is traceable: counts of comparisons, one reduction.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..ir import dtypes as D
from ..runtime.tensor import Tensor, wrap
from . import math as m
from .array import expand_dims, gather, reshape
from .dims import is_symbolic
from .reduce import reduce_sum


def _known(value, what):
    if is_symbolic(value):
        raise ValueError(f"{what} decides the output's shape, so it must be known while tracing "
                         "(an eager tensor or a constant)")
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value)


def searchsorted(sorted_sequence, values, side="left", out_type=D.int32, name=None) -> Tensor:
    """Where each of ``values`` would go in the last axis of ``sorted_sequence`` to keep it sorted.

    >>> tf.searchsorted([1, 3, 3, 7], [3, 4], side="right")
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([3, 3], dtype=int32)>
    """
    if side not in ("left", "right"):
        raise ValueError(f"Argument `side` must be either 'right' or 'left'. Received: `side` = {side}.")
    seq = m._tensor(sorted_sequence)
    vals = m._tensor(values, dtype_hint=seq.dtype)
    compare = m.less if side == "left" else m.less_equal
    before = compare(expand_dims(seq, -2), expand_dims(vals, -1))
    return m.cast(reduce_sum(m.cast(before, D.int64), axis=-1), out_type)


def boolean_mask(tensor, mask, axis=None, name="boolean_mask") -> Tensor:
    """The entries (or slices) of ``tensor`` where ``mask`` is True, flattened over the mask's dims.

    >>> tf.boolean_mask(tf.constant([[1, 2], [3, 4], [5, 6]]), [True, False, True])
    <tf.Tensor: shape=(2, 2), dtype=int32, numpy=
    array([[1, 2],
           [5, 6]], dtype=int32)>
    """
    tensor = m._tensor(tensor)
    mk = _known(mask, "mask").astype(bool)
    axis = 0 if axis is None else int(axis) % len(tensor.shape)
    k = mk.ndim
    if k == 0:
        raise ValueError("mask cannot be scalar.")
    shape = list(tensor.shape)
    if tuple(shape[axis:axis + k]) != mk.shape:
        raise ValueError(f"mask has shape {list(mk.shape)}, incompatible with dims "
                         f"{shape[axis:axis + k]} of tensor {shape}")
    flat = reshape(tensor, shape[:axis] + [int(np.prod(mk.shape))] + shape[axis + k:])
    return gather(flat, np.flatnonzero(mk).astype(np.int64), axis=axis)


def where_indices(condition) -> Tensor:
    """One-argument ``tf.where``: the coordinates of the True (nonzero) entries, int64 [n, rank].

    >>> tf.where([[True, False], [False, True]])
    <tf.Tensor: shape=(2, 2), dtype=int64, numpy=
    array([[0, 0],
           [1, 1]])>
    """
    c = _known(condition, "condition")
    return wrap(np.argwhere(c).astype(np.int64))


Unique = namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def _unique(x, out_idx):
    x = m._tensor(x)
    v = _known(x, "x")
    if v.ndim != 1:
        raise ValueError(f"unique expects a 1D vector, got shape {list(v.shape)}")
    _, first, inverse, counts = np.unique(v, return_index=True, return_inverse=True, return_counts=True)
    order = np.argsort(first, kind="stable")          # in order of first appearance, as TF
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    idx = rank[inverse].astype(D.as_dtype(out_idx).np)
    y = gather(x, first[order].astype(np.int64))
    return y, wrap(idx), wrap(counts[order].astype(D.as_dtype(out_idx).np))


def unique(x, out_idx=D.int32, name=None) -> Unique:
    """The distinct values of a vector in order of first appearance, and each entry's index among them.

    >>> tf.unique([1, 1, 2, 4, 4]).idx
    <tf.Tensor: shape=(5,), dtype=int32, numpy=array([0, 0, 1, 2, 2], dtype=int32)>
    """
    y, idx, _ = _unique(x, out_idx)
    return Unique(y, idx)


def unique_with_counts(x, out_idx=D.int32, name=None) -> UniqueWithCounts:
    """``unique`` and how often each distinct value occurs.

    >>> tf.unique_with_counts([3, 1, 3]).count
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([2, 1], dtype=int32)>
    """
    return UniqueWithCounts(*_unique(x, out_idx))


def dynamic_partition(data, partitions, num_partitions, name=None) -> list:
    """``data``'s rows split into ``num_partitions`` lists by ``partitions`` (order kept).

    >>> [p.numpy().tolist() for p in tf.dynamic_partition([10, 20, 30, 40], [0, 1, 0, 2], 3)]
    [[10, 30], [20], [40]]
    """
    data = m._tensor(data)
    parts = _known(partitions, "partitions").astype(np.int64)
    if np.any(parts < 0) or np.any(parts >= num_partitions):
        from ..errors import InvalidArgumentError  # noqa  (only on this error path)
        raise InvalidArgumentError(f"partitions must be in [0, {num_partitions})")
    k = parts.ndim
    flat = reshape(data, [int(np.prod(parts.shape))] + list(data.shape[k:]))
    flat_parts = parts.ravel()
    return [gather(flat, np.flatnonzero(flat_parts == i).astype(np.int64), axis=0)
            for i in range(int(num_partitions))]


def dynamic_stitch(indices, data, name=None) -> Tensor:
    """``merged[indices[m][i]] = data[m][i]``, later entries winning; size ``max(indices) + 1``.

    >>> tf.dynamic_stitch([[0, 2], [1, 2]], [[1.0, 2.0], [3.0, 4.0]])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([1., 3., 4.], dtype=float32)>
    """
    from .array import concat  # noqa  (array is imported above; concat kept with its one user)
    idx = [_known(i, "indices").astype(np.int64) for i in indices]
    data = [m._tensor(d) for d in data]
    rows = []
    for i, d in zip(idx, data):
        rows.append(reshape(d, [int(i.size)] + list(d.shape[i.ndim:])))
    stacked = concat(rows, 0)
    flat_idx = np.concatenate([i.ravel() for i in idx]) if idx else np.zeros(0, np.int64)
    n = int(flat_idx.max(initial=-1)) + 1
    source = np.full(n, -1, np.int64)
    source[flat_idx] = np.arange(flat_idx.size)       # later entries win
    if np.any(source < 0):
        from ..errors import InvalidArgumentError  # noqa  (only on this error path)
        raise InvalidArgumentError("dynamic_stitch: indices do not cover 0..max(indices)")
    return gather(stacked, source, axis=0)


__all__ = ["searchsorted", "boolean_mask", "unique", "unique_with_counts", "dynamic_partition",
           "dynamic_stitch"]
