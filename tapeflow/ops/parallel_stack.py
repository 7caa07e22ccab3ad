"""``tf.parallel_stack``: TensorFlow's wrapper over ParallelConcat. Only inside a function
(eagerly TensorFlow raises RuntimeError), for inputs of fully known shape; no gradient."""
from __future__ import annotations

from ..runtime.dispatch import apply
from ..runtime.recorder import executing_eagerly
from ..runtime.tensor import Tensor
from . import math as m
from .array import expand_dims


def parallel_stack(values, name="parallel_stack") -> Tensor:
    """``values`` stacked along a new first axis, like ``tf.stack``, inside a function.

    >>> tf.function(lambda: tf.parallel_stack([[1, 2], [3, 4]]))()
    <tf.Tensor: shape=(2, 2), dtype=int32, numpy=
    array([[1, 2],
           [3, 4]], dtype=int32)>
    """
    if executing_eagerly():
        raise RuntimeError("tf.parallel_stack() is not compatible with eager execution.")
    if not values:
        raise ValueError("values cannot be empty.")
    first = m._tensor(values[0])
    shape = (len(values),) + tuple(first.shape)
    if any(d is None for d in shape):
        raise ValueError(f"shape attr must be fully defined, got {list(shape)}")
    tensors = [expand_dims(m._tensor(v, dtype_hint=first.dtype), 0) for v in values]
    return apply("ParallelConcat", tensors, {"shape": shape})


__all__ = ["parallel_stack"]
