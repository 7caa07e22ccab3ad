"""``tf.bitcast``: the Bitcast op."""
from __future__ import annotations

from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor


def bitcast(input, type, name=None) -> Tensor:
    """``input``'s bytes read as ``type`` (no copy in TensorFlow; no gradient).

    A narrower ``type`` adds a last axis of the size ratio; a wider one needs a last axis of
    that size and removes it.

    >>> tf.bitcast(tf.constant([1.0, -2.5]), tf.int32)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([ 1065353216, -1071644672], dtype=int32)>
    >>> tf.bitcast(tf.constant([[1, 2, 3, 4]], tf.uint8), tf.int32)
    <tf.Tensor: shape=(1,), dtype=int32, numpy=array([67305985], dtype=int32)>
    """
    return apply("Bitcast", [input], {"type": D.as_dtype(type)})


__all__ = ["bitcast"]
