"""``tf.reverse``, ``tf.roll``, ``tf.gather_nd``, ``tf.scatter_nd`` and ``tf.tensor_scatter_nd_*``."""
from __future__ import annotations

import numpy as np

from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor
from . import math as m
from .array import concat
from .dims import is_symbolic


def _ints(value):
    """A constant int or list of ints (a Python value, array or eager tensor) as a tuple."""
    if hasattr(value, "numpy"):
        value = value.numpy()
    return tuple(int(v) for v in np.atleast_1d(np.asarray(value)).ravel())


def reverse(tensor, axis, name=None) -> Tensor:
    """``tensor`` with the order of its entries reversed along each axis in ``axis``.

    >>> tf.reverse(tf.constant([[1, 2, 3], [4, 5, 6]]), [1])
    <tf.Tensor: shape=(2, 3), dtype=int32, numpy=
    array([[3, 2, 1],
           [6, 5, 4]], dtype=int32)>
    """
    return apply("ReverseV2", [tensor], {"axis": _ints(axis)})


def roll(input, shift, axis, name=None) -> Tensor:
    """Entries shifted cyclically by ``shift`` along ``axis`` (lists shift several axes).

    >>> tf.roll(tf.constant([0, 1, 2, 3, 4]), shift=2, axis=0)
    <tf.Tensor: shape=(5,), dtype=int32, numpy=array([3, 4, 0, 1, 2], dtype=int32)>
    """
    shift, axis = _ints(shift), _ints(axis)
    if len(shift) == 1 and len(axis) > 1:
        shift = shift * len(axis)
    return apply("Roll", [input], {"shift": shift, "axis": axis})


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None) -> Tensor:
    """Along ``seq_axis``, the first ``seq_lengths[b]`` entries of each batch row ``b`` reversed
    (the rest kept): one GatherNd whose coordinates are computed from the lengths, so it traces.

    >>> tf.reverse_sequence(tf.reshape(tf.range(8), [2, 4]), [2, 3], seq_axis=1, batch_axis=0)
    <tf.Tensor: shape=(2, 4), dtype=int32, numpy=
    array([[1, 0, 2, 3],
           [6, 5, 4, 7]], dtype=int32)>
    """
    from ..errors import InvalidArgumentError   # noqa  (errors is the base layer; kept local)
    x = m._tensor(input)
    shape = tuple(x.shape)
    rank = len(shape)
    seq_axis, batch_axis = int(seq_axis) % rank, (0 if batch_axis is None else int(batch_axis)) % rank
    lengths = m.cast(m._tensor(seq_lengths), D.int64)
    if not is_symbolic(lengths) and np.any(np.asarray(lengths) > shape[seq_axis]):
        raise InvalidArgumentError(f"seq_lengths must be <= input.dims({seq_axis}) = {shape[seq_axis]}")
    grid = np.indices(shape, dtype=np.int64)
    view = [1] * rank
    view[batch_axis] = shape[batch_axis]
    length = m.add(apply("Reshape", [lengths], {"shape": tuple(view)}),
                   m.constant_like(np.zeros(shape, np.int64), lengths))
    j = m.constant_like(grid[seq_axis], lengths)
    flipped = m.where(m.less(j, length), m.subtract(m.subtract(length, m.constant_like(1, j)), j), j)
    coords = [m.constant_like(grid[a], lengths) if a != seq_axis else flipped for a in range(rank)]
    return apply("GatherNd", [x, apply("Pack", coords, {"axis": -1})])


def _index_tensor(indices):
    indices = m._tensor(indices)
    if not indices.dtype.is_integer:
        raise TypeError(f"indices must be int32 or int64, got {indices.dtype.name}")
    return indices


def gather_nd(params, indices, batch_dims=0, name=None, bad_indices_policy="") -> Tensor:
    """Slices of ``params`` at the index tuples in the last axis of ``indices``.

    >>> tf.gather_nd(tf.constant([[1, 2], [3, 4]]), [[1, 0], [0, 1]])
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([3, 2], dtype=int32)>
    """
    if batch_dims != 0:
        return _batched_gather_nd(params, indices, int(batch_dims))
    return apply("GatherNd", [params, _index_tensor(indices)])


def _batched_gather_nd(params, indices, batch_dims):
    """TF's batch_dims: the leading ``batch_dims`` axes of params and indices pair up; done as
    one GatherNd with the batch coordinates prepended to each index tuple."""
    params, indices = m._tensor(params), _index_tensor(indices)
    batch = tuple(indices.shape[:batch_dims])
    grids = np.meshgrid(*[np.arange(n) for n in batch], indexing="ij")
    inner = tuple(indices.shape[batch_dims:-1])
    coords = np.stack(grids, -1).reshape(batch + (1,) * len(inner) + (batch_dims,))
    coords = np.broadcast_to(coords, batch + inner + (batch_dims,)).astype(indices.dtype.np)
    return apply("GatherNd", [params, concat([coords, indices], axis=-1)])


def scatter_nd(indices, updates, shape, name=None, bad_indices_policy="") -> Tensor:
    """Zeros of ``shape`` with ``updates`` added at ``indices`` (duplicates add up).

    >>> tf.scatter_nd([[1], [3]], tf.constant([5.0, 7.0]), [5])
    <tf.Tensor: shape=(5,), dtype=float32, numpy=array([0., 5., 0., 7., 0.], dtype=float32)>
    """
    return apply("ScatterNd", [_index_tensor(indices), updates], {"shape": _ints(shape)})


def _tensor_scatter(op, doc):
    def fn(tensor, indices, updates, name=None) -> Tensor:
        tensor = m._tensor(tensor)
        return apply(op, [tensor, _index_tensor(indices), m._tensor(updates, dtype_hint=tensor.dtype)])
    fn.__doc__ = doc
    return fn


tensor_scatter_nd_update = _tensor_scatter("TensorScatterUpdate", """``tensor`` with the slices at ``indices`` replaced by ``updates``.

    >>> tf.tensor_scatter_nd_update(tf.constant([1, 2, 3]), [[0], [2]], [9, 8])
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([9, 2, 8], dtype=int32)>
    """)
tensor_scatter_nd_add = _tensor_scatter("TensorScatterAdd", """``tensor`` with ``updates`` added at ``indices``.

    >>> tf.tensor_scatter_nd_add(tf.constant([1, 2, 3]), [[0], [0]], [5, 5])
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([11,  2,  3], dtype=int32)>
    """)
tensor_scatter_nd_sub = _tensor_scatter("TensorScatterSub", """``tensor`` with ``updates`` subtracted at ``indices``.

    >>> tf.tensor_scatter_nd_sub(tf.constant([1, 2, 3]), [[1]], [5])
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([ 1, -3,  3], dtype=int32)>
    """)
tensor_scatter_nd_max = _tensor_scatter("TensorScatterMax", """``tensor`` with the larger of it and ``updates`` at ``indices``.

    >>> tf.tensor_scatter_nd_max(tf.constant([1, 2, 3]), [[0], [1]], [5, 0])
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([5, 2, 3], dtype=int32)>
    """)
tensor_scatter_nd_min = _tensor_scatter("TensorScatterMin", """``tensor`` with the smaller of it and ``updates`` at ``indices``.

    >>> tf.tensor_scatter_nd_min(tf.constant([1, 2, 3]), [[0], [1]], [5, 0])
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([1, 0, 3], dtype=int32)>
    """)
for _f, _n in ((tensor_scatter_nd_update, "tensor_scatter_nd_update"),
               (tensor_scatter_nd_add, "tensor_scatter_nd_add"),
               (tensor_scatter_nd_sub, "tensor_scatter_nd_sub"),
               (tensor_scatter_nd_max, "tensor_scatter_nd_max"),
               (tensor_scatter_nd_min, "tensor_scatter_nd_min")):
    _f.__name__ = _f.__qualname__ = _n

__all__ = ["reverse", "reverse_sequence", "roll", "gather_nd", "scatter_nd", "tensor_scatter_nd_update",
           "tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_nd_max",
           "tensor_scatter_nd_min"]
