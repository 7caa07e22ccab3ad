"""TensorFlow's own initializers (``tf.zeros_initializer`` ..., its ``init_ops_v2``): called
with a shape and a dtype (float32 by default). Seeded random ones draw TensorFlow's numbers:
with ``seed=s`` they are the stateless ops on the seed ``[s, 0]``, as in TensorFlow."""
from __future__ import annotations

import numpy as np

from ..ir import dtypes as D
from ..runtime.tensor import Tensor, convert_to_tensor
from . import creation
from .creation import _shape
from .random import stateless_normal, stateless_uniform


class _Initializer:
    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class zeros_initializer(_Initializer):  # noqa: N801  (TensorFlow's name)
    """Zeros of the shape and dtype asked.

    >>> tf.zeros_initializer()([2], tf.int32)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([0, 0], dtype=int32)>
    """

    def __call__(self, shape, dtype=D.float32, **kwargs) -> Tensor:
        return creation.zeros(_shape(shape), dtype=D.as_dtype(dtype))


class ones_initializer(_Initializer):  # noqa: N801
    """Ones of the shape and dtype asked.

    >>> tf.ones_initializer()([2])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 1.], dtype=float32)>
    """

    def __call__(self, shape, dtype=D.float32, **kwargs) -> Tensor:
        return creation.ones(_shape(shape), dtype=D.as_dtype(dtype))


class constant_initializer(_Initializer):  # noqa: N801
    """``value`` (a scalar, broadcast; or as many values as the shape holds, reshaped).

    >>> tf.constant_initializer([1, 2])([2])
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>
    """

    def __init__(self, value=0, support_partition: bool = False) -> None:
        self.value = value

    def __call__(self, shape, dtype=None, **kwargs) -> Tensor:
        shape = _shape(shape)
        value = np.asarray(self.value)
        t = convert_to_tensor(self.value) if dtype is None else \
            convert_to_tensor(self.value, dtype=D.as_dtype(dtype))
        if value.size == 1:
            return creation.fill(shape, convert_to_tensor(np.asarray(t.numpy()).reshape(())))
        if value.size != int(np.prod(shape)):
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tensor "
                            f"{value} (converted from {self.value}) has {value.size} elements, "
                            f"but got `shape` {tuple(shape)} with {int(np.prod(shape))} "
                            f"elements).")
        return convert_to_tensor(np.asarray(t.numpy()).reshape(shape))

    def get_config(self) -> dict:
        return {"value": self.value}


class random_normal_initializer(_Initializer):  # noqa: N801
    """Normal values (``mean``, ``stddev``); with ``seed``, TensorFlow's.

    >>> tf.random_normal_initializer(seed=1)([3])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([ 0.00633252, -0.02465083,  0.03155954], dtype=float32)>
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=D.float32, **kwargs) -> Tensor:
        dtype = D.as_dtype(dtype)
        if self.seed is None:
            from .. import random as _random   # noqa: PLC0415  (tapeflow.random re-exports ops.random: a cycle at import)
            return _random.normal(shape, self.mean, self.stddev, dtype=dtype)
        return stateless_normal(shape, [self.seed, 0], self.mean, self.stddev, dtype=dtype)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class random_uniform_initializer(_Initializer):  # noqa: N801
    """Uniform values in ``[minval, maxval)``; with ``seed``, TensorFlow's.

    >>> tf.random_uniform_initializer(seed=1)([3])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([ 0.03784882, -0.00400198,  0.01002913], dtype=float32)>
    """

    def __init__(self, minval=-0.05, maxval=0.05, seed=None) -> None:
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=D.float32, **kwargs) -> Tensor:
        dtype = D.as_dtype(dtype)
        if self.seed is None:
            from .. import random as _random   # noqa: PLC0415  (as above)
            return _random.uniform(shape, self.minval, self.maxval, dtype=dtype)
        return stateless_uniform(shape, [self.seed, 0], self.minval, self.maxval, dtype=dtype)

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


__all__ = ["zeros_initializer", "ones_initializer", "constant_initializer",
           "random_normal_initializer", "random_uniform_initializer"]
