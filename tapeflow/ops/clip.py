"""Clipping, composites exactly as TensorFlow's clip_ops (so gradients match op for op)."""
from __future__ import annotations

from ..runtime.tensor import Tensor, TensorShape
from . import creation, math, reduce
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
    """
    values = math._tensor(t)
    l2sum = reduce.reduce_sum(values * values, axes, keepdims=True)
    pred = l2sum > 0
    l2sum_safe = math.where(pred, l2sum, creation.ones_like(l2sum))
    l2norm = math.where(pred, math.sqrt(l2sum_safe), l2sum)
    intermediate = values * clip_norm
    _assert_same_shape(values, intermediate)
    return math.identity(intermediate / math.maximum(l2norm, clip_norm))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """``t_list`` scaled by ``clip_norm / max(global_norm, clip_norm)``, and the global norm.

    TF's composite op for op: None entries stay None, an IndexedSlices keeps its indices, and
    an infinite or NaN norm makes every clipped value NaN (``+ (use_norm - use_norm)``).

    >>> clipped, norm = tf.clip_by_global_norm([tf.constant([3.0, 4.0]), None], 1.0)
    >>> clipped[0], clipped[1], norm
    (<tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.6, 0.8], dtype=float32)>, None, <tf.Tensor: shape=(), dtype=float32, numpy=5.0>)
    """
    if isinstance(t_list, (str, bytes)) or not isinstance(t_list, (list, tuple)):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    t_list = list(t_list)
    if use_norm is None:
        if any(t is not None for t in t_list):
            use_norm = global_norm(t_list)
        else:   # TF's norm of nothing: the sum of an empty float32 stack
            use_norm = math._tensor(0.0)
    use_norm = math._tensor(use_norm)
    one = math.constant_like(1.0, use_norm)
    clip_norm = math._tensor(clip_norm, dtype_hint=use_norm.dtype)
    scale_for_finite = clip_norm * math.minimum(one / use_norm, one / clip_norm)
    scale = scale_for_finite + (use_norm - use_norm)    # NaN unless the norm is finite
    clipped = []
    for t in t_list:
        if t is None:
            clipped.append(None)
            continue
        sliced = _is_indexed_slices(t)
        v = math._tensor(t.values if sliced else t)
        c = math.identity(v * math.cast(scale, v.dtype))
        clipped.append(type(t)(c, t.indices, t.dense_shape) if sliced else c)
    return clipped, use_norm


def _is_indexed_slices(t):
    return type(t).__name__ == "IndexedSlices" and hasattr(t, "indices")


__all__ = ["clip_by_value", "clip_by_norm"]   # clip_by_global_norm: top level only, as in TF
