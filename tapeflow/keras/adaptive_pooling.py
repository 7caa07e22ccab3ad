"""Keras 3's adaptive pooling layers: ``AdaptiveAveragePooling1D/2D/3D`` and
``AdaptiveMaxPooling1D/2D/3D``, any input size pooled to ``output_size``.

Output ``i`` of a dimension of size ``n`` pooled to ``m`` covers
``[floor(i * n / m), ceil((i + 1) * n / m))`` (float32 arithmetic, Keras'). As Keras'
TensorFlow backend computes it, each dimension in turn (depth, height, width) is pooled with
stride 1 by two windows, ``ceil(n / m)`` and one more, and each output gathers the small
pool's row at its window's start, or the big pool's where its window has the big size.
"""
import math

import numpy as np

from ..ops import array as A
from ..ops.dilated import pool
from ..runtime.tensor import TensorShape
from .layers import Layer


def _gather_indices(n, m):
    """Keras' ``_compute_static_gather_indices``: rows of [small pool; big pool] to take."""
    small = math.ceil(n / m)
    big = small + 1
    f32 = np.float32
    starts = np.floor(np.arange(m, dtype=f32) * f32(n) / f32(m)).astype(np.int32)
    ends = np.ceil(np.arange(1, m + 1, dtype=f32) * f32(n) / f32(m)).astype(np.int32)
    ends = np.minimum(ends, n)
    starts = np.minimum(starts, n - 1)
    small_len = max(1, n - small + 1)
    return small, big, np.where(ends - starts == big, starts + small_len, starts)


def adaptive_pool(x, output_size, kind, data_format):
    """``x`` (channels last or first) pooled to ``output_size`` (one size per spatial dim)."""
    rank = len(x.shape) - 2
    first = data_format == "channels_first"
    if first:
        x = A.transpose(x, [0] + list(range(2, rank + 2)) + [1])
    sizes = list(x.shape[1:-1])
    if any(s is None for s in sizes):
        raise ValueError("Input spatial dimensions must be statically known for adaptive "
                         "pooling")
    fmt = {1: "NWC", 2: "NHWC", 3: "NDHWC"}[rank]
    for d in range(rank):
        small, big, idx = _gather_indices(int(sizes[d]), int(output_size[d]))
        pools = []
        for k in (small, big):
            window = [1] * rank
            window[d] = k
            pools.append(pool(x, window, kind, strides=[1] * rank, padding="VALID",
                              data_format=fmt))
        x = A.gather(A.concat(pools, d + 1), idx, axis=d + 1)
    if first:
        x = A.transpose(x, [0, rank + 1] + list(range(1, rank + 1)))
    return x


class _AdaptivePooling(Layer):
    rank = 2
    kind = "AVG"
    _size_words = {1: "tuple of 1 integer", 2: "(height, width) tuple",
                   3: "(depth, height, width) tuple"}

    def __init__(self, output_size, data_format=None, **kwargs):
        n = self.rank
        if isinstance(output_size, int):
            size = (output_size,) * n
        elif isinstance(output_size, (tuple, list)) and (len(output_size) == n or n == 1):
            if n == 1 and len(output_size) != 1:
                raise ValueError(f"For 1D input, `output_size` tuple must have length 1. "
                                 f"Received: {output_size}")
            size = tuple(output_size)
        else:
            raise TypeError(f"`output_size` must be an integer or {self._size_words[n]}. "
                            f"Received: {output_size} of type {type(output_size)}")
        super().__init__(**kwargs)
        self.output_size = size
        self.data_format = data_format or "channels_last"
        if self.data_format not in ("channels_first", "channels_last"):
            raise ValueError(f"Invalid data_format: {self.data_format}. Expected "
                             f"'channels_first' or 'channels_last'.")

    def call(self, inputs):
        return adaptive_pool(inputs, self.output_size, self.kind, self.data_format)

    def compute_output_shape(self, input_shape):
        shape = list(TensorShape(input_shape))
        if self.data_format == "channels_last":
            return TensorShape([shape[0], *self.output_size, shape[-1]])
        return TensorShape([shape[0], shape[1], *self.output_size])

    def get_config(self):
        return {**super().get_config(), "output_size": self.output_size,
                "data_format": self.data_format}


def _layer(name, rank, kind, doc):
    return type(name, (_AdaptivePooling,), {"rank": rank, "kind": kind, "__doc__": doc})


AdaptiveAveragePooling1D = _layer("AdaptiveAveragePooling1D", 1, "AVG", """Average pooling
    of the steps to ``output_size`` windows, whatever the input's length.

    >>> tf.keras.layers.AdaptiveAveragePooling1D(2)(tf.reshape(tf.range(5.0), [1, 5, 1]))[0, :, 0]
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 3.], dtype=float32)>
    """)
AdaptiveAveragePooling2D = _layer("AdaptiveAveragePooling2D", 2, "AVG", """Average pooling
    of height and width to ``output_size``.

    >>> tf.keras.layers.AdaptiveAveragePooling2D((2, 3))(tf.ones([1, 7, 8, 2])).shape
    TensorShape([1, 2, 3, 2])
    """)
AdaptiveAveragePooling3D = _layer("AdaptiveAveragePooling3D", 3, "AVG", """Average pooling
    of depth, height and width to ``output_size``.

    >>> tf.keras.layers.AdaptiveAveragePooling3D(2)(tf.ones([1, 5, 4, 3, 2])).shape
    TensorShape([1, 2, 2, 2, 2])
    """)
AdaptiveMaxPooling1D = _layer("AdaptiveMaxPooling1D", 1, "MAX", """Max pooling of the steps
    to ``output_size`` windows, whatever the input's length.

    >>> tf.keras.layers.AdaptiveMaxPooling1D(2)(tf.reshape(tf.range(5.0), [1, 5, 1]))[0, :, 0]
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 4.], dtype=float32)>
    """)
AdaptiveMaxPooling2D = _layer("AdaptiveMaxPooling2D", 2, "MAX", """Max pooling of height
    and width to ``output_size``.

    >>> tf.keras.layers.AdaptiveMaxPooling2D(3)(tf.ones([1, 7, 8, 2])).shape
    TensorShape([1, 3, 3, 2])
    """)
AdaptiveMaxPooling3D = _layer("AdaptiveMaxPooling3D", 3, "MAX", """Max pooling of depth,
    height and width to ``output_size``.

    >>> tf.keras.layers.AdaptiveMaxPooling3D((1, 2, 2))(tf.ones([1, 5, 4, 3, 2])).shape
    TensorShape([1, 1, 2, 2, 2])
    """)

CLASSES = (AdaptiveAveragePooling1D, AdaptiveAveragePooling2D, AdaptiveAveragePooling3D,
           AdaptiveMaxPooling1D, AdaptiveMaxPooling2D, AdaptiveMaxPooling3D)
__all__ = [c.__name__ for c in CLASSES]
