"""``tf.nn.batch_norm_with_global_normalization`` (TF's composite over batch_normalization)."""
from __future__ import annotations

from ..runtime.tensor import Tensor
from .composites import batch_normalization


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


__all__ = ["batch_norm_with_global_normalization"]
