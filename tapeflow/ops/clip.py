"""Clipping, composites exactly as TensorFlow's clip_ops (so gradients match op for op)."""
from __future__ import annotations

from ..runtime.tensor import Tensor, TensorShape, convert_to_tensor
from . import creation, math, reduce
from .indexed_slices import IndexedSlices
from .linalg_extra import global_norm


def _assert_same_shape(values, result):
    """TF refuses a clip bound that would broadcast ``t`` to a bigger shape."""
    if not TensorShape(values.shape).is_compatible_with(result.shape):
        raise ValueError(f"Shapes {tuple(values.shape)} and {tuple(result.shape)} are incompatible")


def clip_by_value(t, clip_value_min, clip_value_max, name=None) -> Tensor:
    """``t`` with each entry clipped to ``[clip_value_min, clip_value_max]``.

    min(t, max) then max(., min); broadcasting that would grow ``t`` is an error, as in TF.

    >>> tf.clip_by_value(tf.constant([-2.0, 0.5, 3.0]), -1.0, 1.0)
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([-1. ,  0.5,  1. ], dtype=float32)>
    """
    if isinstance(t, IndexedSlices):     # TensorFlow clips the values, keeps the slices
        return IndexedSlices(clip_by_value(t.values, clip_value_min, clip_value_max),
                             t.indices, t.dense_shape)
    values = math._tensor(t)
    t_min = math.minimum(values, clip_value_max)
    _assert_same_shape(values, t_min)
    t_max = math.maximum(t_min, clip_value_min)
    _assert_same_shape(values, t_max)
    return t_max


def clip_by_norm(t, clip_norm, axes=None, name=None) -> Tensor:
    """``t`` scaled down so that its L2 norm is at most ``clip_norm``.

    ``t * clip_norm / max(||t||, clip_norm)`` with TF's double-where for a zero norm.

    >>> tf.clip_by_norm(tf.constant([3.0, 4.0]), 1.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.6, 0.8], dtype=float32)>

    An IndexedSlices is clipped by the norm of its values (a repeated index counts twice), as
    TensorFlow does.
    """
    if isinstance(t, IndexedSlices):
        return IndexedSlices(clip_by_norm(t.values, clip_norm, axes), t.indices, t.dense_shape)
    values = math._tensor(t)
    l2sum = reduce.reduce_sum(values * values, axes, keepdims=True)
    pred = l2sum > 0
    l2sum_safe = math.where(pred, l2sum, creation.ones_like(l2sum))
    l2norm = math.where(pred, math.sqrt(l2sum_safe), l2sum)
    intermediate = values * clip_norm
    _assert_same_shape(values, intermediate)
    return math.identity(intermediate / math.maximum(l2norm, clip_norm))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None) -> tuple:
    """``(clipped, global_norm)``: every tensor of ``t_list`` times ``clip_norm /
    max(global_norm, clip_norm)`` (None entries stay None; an IndexedSlices keeps its slices);
    an infinite or NaN norm makes every entry NaN, as TensorFlow.

    >>> clipped, norm = tf.clip_by_global_norm([tf.constant([3.0, 4.0]), tf.constant(12.0)], 6.5)
    >>> clipped[0], norm
    (<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1.5, 2. ], dtype=float32)>, <tf.Tensor: shape=(), dtype=float32, numpy=13.0>)
    """
    if isinstance(t_list, (str, bytes)) or not isinstance(t_list, (list, tuple)):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    t_list = list(t_list)
    use_norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
    one = math.constant_like(1.0, use_norm)
    clip = math.cast(convert_to_tensor(clip_norm, dtype_hint=use_norm.dtype), use_norm.dtype)
    scale = math.multiply(clip, math.minimum(math.divide(one, use_norm), math.divide(one, clip)))
    scale = math.add(scale, math.subtract(use_norm, use_norm))
    out = []
    for t in t_list:
        if t is None:
            out.append(None)
            continue
        v = convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t)
        c = math.identity(math.multiply(v, math.cast(scale, v.dtype)))
        out.append(IndexedSlices(c, t.indices, t.dense_shape) if isinstance(t, IndexedSlices) else c)
    return out, use_norm


__all__ = ["clip_by_value", "clip_by_norm", "clip_by_global_norm"]
