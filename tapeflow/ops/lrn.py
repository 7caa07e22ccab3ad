"""``tf.nn.local_response_normalization`` (``tf.nn.lrn``): the LRN op."""
from __future__ import annotations

from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor


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


__all__ = ["local_response_normalization", "lrn"]
