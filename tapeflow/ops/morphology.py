"""Grayscale morphology: ``tf.nn.dilation2d`` (the Dilation2D op) and ``tf.nn.erosion2d``
(TensorFlow's composite: the negated dilation of the negated input by the reflected filter).
"""
from __future__ import annotations

from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor
from .conv import _tensor
from .indexing import reverse
from .math import negative


def _attrs(strides, padding, data_format, dilations):
    if data_format != "NHWC":
        raise ValueError(f"`data_format` values other  than 'NHWC' are not supported. "
                         f"Received: data_format={data_format}")
    return {"strides": tuple(int(v) for v in strides), "rates": tuple(int(v) for v in dilations),
            "padding": padding}


def dilation2d(input, filters, strides, padding, data_format, dilations, name=None) -> Tensor:
    """The grayscale dilation of ``input`` [N, H, W, C] by ``filters`` [kh, kw, C]: each
    output the maximum over its window of input + filter, each channel on its own.

    >>> tf.nn.dilation2d(tf.reshape(tf.range(9.0), [1, 3, 3, 1]), tf.zeros([2, 2, 1]),
    ...                  [1, 1, 1, 1], "VALID", "NHWC", [1, 1, 1, 1])[0, :, :, 0]
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[4., 5.],
           [7., 8.]], dtype=float32)>
    """
    return apply("Dilation2D", [_tensor(input), filters],
                 _attrs(strides, padding, data_format, dilations))


def erosion2d(value, filters, strides, padding, data_format, dilations, name=None) -> Tensor:
    """The grayscale erosion of ``value`` [N, H, W, C] by ``filters`` [kh, kw, C]: each output
    the minimum over its window of value - filter (the window read backwards).

    >>> tf.nn.erosion2d(tf.reshape(tf.range(1.0, 10.0), [1, 3, 3, 1]), tf.zeros([2, 2, 1]),
    ...                 [1, 1, 1, 1], "VALID", "NHWC", [1, 1, 1, 1])[0, :, :, 0]
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[1., 2.],
           [4., 5.]], dtype=float32)>
    """
    attrs = _attrs(strides, padding, data_format, dilations)
    return negative(apply("Dilation2D", [negative(_tensor(value)), reverse(filters, [0, 1])],
                          attrs))


__all__ = ["dilation2d", "erosion2d"]
