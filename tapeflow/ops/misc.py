"""Top-level ``tf.*`` helpers that are Python over other ops: tensor predicates, static
values, ``shape_n``/``identity_n``, broadcast shapes, ``repeat``, ``sequence_mask``,
``unravel_index`` and the fixed-width histograms (TF's composites, op for op where they
compute)."""
from __future__ import annotations

import logging

import numpy as np

from ..errors import InvalidArgumentError
from ..ir import dtypes as D
from ..ir.shapes import broadcast_shapes
from ..runtime.recorder import executing_eagerly
from ..runtime.stack import current_name_scope
from ..runtime.tensor import Tensor, TensorShape, Variable, convert_to_tensor
from . import math as m
from .array import expand_dims, gather, reshape, shape, stack
from .clip import clip_by_value
from .creation import range as _range
from .dims import is_symbolic
from .reduce import reduce_max, unsorted_segment_sum


def is_tensor(x) -> bool:
    """Whether ``x`` is a tensor (eager or traced) or a Variable.

    >>> tf.is_tensor(tf.constant(1.0)), tf.is_tensor(1.0)
    (True, False)
    """
    return isinstance(x, (Tensor, Variable)) or is_symbolic(x)


def is_symbolic_tensor(tensor) -> bool:
    """Whether ``tensor`` is a traced tensor (its value exists only when the program runs).

    >>> tf.is_symbolic_tensor(tf.constant(1.0))
    False
    """
    return is_symbolic(tensor)


def inside_function() -> bool:
    """Whether the caller is being traced into a function.

    >>> tf.inside_function()
    False
    """
    return not executing_eagerly()


def get_static_value(tensor, partial=False) -> object:
    """The value of ``tensor`` as a NumPy array when it is known now, else None (a traced
    tensor's value exists only when the program runs); non-tensors come back as they are.

    >>> tf.get_static_value(tf.constant([1, 2]))
    array([1, 2], dtype=int32)
    """
    if isinstance(tensor, (Tensor, Variable)):
        return np.asarray(tensor.numpy())
    if is_symbolic(tensor):
        return None
    return tensor


def get_current_name_scope() -> str:
    """The current name scope, without the trailing slash ("" at the top level).

    >>> with tf.name_scope("outer"):
    ...     tf.get_current_name_scope()
    'outer'
    """
    return current_name_scope().rstrip("/")


def get_logger() -> logging.Logger:
    """The logger tapeflow's messages go to (``tf.get_logger().setLevel(...)`` works).

    >>> tf.get_logger().name
    'tapeflow'
    """
    return logging.getLogger("tapeflow")


def shape_n(input, out_type=D.int32, name=None) -> list:
    """``[tf.shape(x) for x in input]``.

    >>> [s.numpy().tolist() for s in tf.shape_n([tf.zeros([2, 3]), tf.zeros([4])])]
    [[2, 3], [4]]
    """
    return [shape(x, out_type=out_type) for x in input]


def identity_n(input, name=None) -> list:
    """``[tf.identity(x) for x in input]``.

    >>> tf.identity_n([tf.constant(1), tf.constant(2.0)])[1]
    <tf.Tensor: shape=(), dtype=float32, numpy=2.0>
    """
    return [m.identity(x) for x in input]


def broadcast_static_shape(shape_x, shape_y) -> TensorShape:
    """The broadcast of two static shapes; ValueError if they are incompatible.

    >>> tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3]))
    TensorShape([2, 3])
    """
    try:
        return TensorShape(broadcast_shapes(tuple(TensorShape(shape_x).as_list()),
                                            tuple(TensorShape(shape_y).as_list())))
    except Exception as e:
        raise ValueError(f"Incompatible shapes for broadcasting: {shape_x} and {shape_y}") from e


def broadcast_dynamic_shape(shape_x, shape_y) -> Tensor:
    """The broadcast of two shapes given as int vectors, as an int vector.

    >>> tf.broadcast_dynamic_shape([2, 1], [3])
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([2, 3], dtype=int32)>
    """
    x = convert_to_tensor(shape_x)
    y = convert_to_tensor(shape_y, dtype=x.dtype)
    try:
        out = broadcast_shapes(tuple(int(v) for v in np.asarray(x)), tuple(int(v) for v in np.asarray(y)))
    except Exception as e:
        raise InvalidArgumentError(f"Incompatible shapes: {np.asarray(x).tolist()} vs. "
                                   f"{np.asarray(y).tolist()}") from e
    return convert_to_tensor(np.array(out, dtype=x.dtype.np))


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


__all__ = ["is_tensor", "is_symbolic_tensor", "inside_function", "get_static_value",
           "get_current_name_scope", "get_logger", "shape_n", "identity_n",
           "broadcast_static_shape", "broadcast_dynamic_shape", "repeat", "sequence_mask",
           "unravel_index", "histogram_fixed_width_bins", "histogram_fixed_width"]
