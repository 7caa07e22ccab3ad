"""``tf.nn.local_response_normalization`` (the LRN op) and
``tf.nn.batch_norm_with_global_normalization`` (TF's composite over batch_normalization)."""
from __future__ import annotations

from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor
from .composites import batch_normalization


def _number(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)) and not hasattr(v, "__float__"):
        raise TypeError(f"Expected float for argument '{what}' not {v!r}.")
    return float(v)


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5,
                                 name=None) -> Tensor:
    """Each entry of the last axis over ``(bias + alpha * sum of squares of its neighbours
    within depth_radius) ** beta``; ``input`` is 4-D.

    >>> tf.nn.local_response_normalization(tf.ones([1, 1, 1, 3]))
    <tf.Tensor: shape=(1, 1, 1, 3), dtype=float32, numpy=array([[[[0.5, 0.5, 0.5]]]], dtype=float32)>
    """
    if isinstance(depth_radius, float) and depth_radius != int(depth_radius):
        raise TypeError(f"Expected int for argument 'depth_radius' not {depth_radius!r}.")
    return apply("LRN", [input], {"depth_radius": int(depth_radius),
                                  "bias": _number(bias, "bias"), "alpha": _number(alpha, "alpha"),
                                  "beta": _number(beta, "beta")})


lrn = local_response_normalization


def batch_norm_with_global_normalization(input, mean, variance, beta, gamma, variance_epsilon,
                                         scale_after_normalization, name=None) -> Tensor:
    """Batch normalization with given moments; ``gamma`` scales only if
    ``scale_after_normalization``.

    >>> tf.nn.batch_norm_with_global_normalization(tf.constant([1.0, 3.0]), 2.0, 1.0, 0.5, 2.0,
    ...                                            0.0, True)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-1.5,  2.5], dtype=float32)>
    """
    return batch_normalization(input, mean, variance, beta,
                               gamma if scale_after_normalization else None, variance_epsilon)


__all__ = ["local_response_normalization", "lrn", "batch_norm_with_global_normalization"]
