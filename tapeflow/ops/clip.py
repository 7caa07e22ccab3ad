"""Clipping, composites exactly as TensorFlow's clip_ops (so gradients match op for op)."""
from __future__ import annotations

from ..runtime.tensor import Tensor, TensorShape
from . import creation, math, reduce


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


__all__ = ["clip_by_value", "clip_by_norm"]
