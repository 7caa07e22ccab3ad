"""TensorFlow's raw convolution wrappers exported at the top level: ``tf.conv`` (the generic
Conv op), ``tf.conv2d_backprop_filter_v2``/``input_v2`` (the backprops taking the tensor
whose shape they rebuild) and ``tf.extract_volume_patches``, on the ops of ir/defs/conv.py.

``tf.conv`` is the generic Conv op (ir/defs/conv_raw.py: Conv2D or Conv3D with the leading
``batch_dims`` folded into one, as TensorFlow's CPU kernel does), without a gradient as in
TensorFlow. The V2 backprops are the backprop ops with that tensor as their
``like`` input (TensorFlow 2.21's CPU build has no kernel for them: it raises NotFoundError,
the values here are those of the op's definition). Volume patches are strided slices of
the padded input, one per window offset, side by side in the depth.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError, UnimplementedError
from ..ir.defs.conv import window
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor
from . import array
from .conv import _channels_first, _conv_attrs, _tensor, _to_first, _to_last


def _ints(v, what, length=None):
    v = [int(a) for a in (v.numpy().tolist() if hasattr(v, "numpy") else v)]
    if length is not None and len(v) != length:
        raise InvalidArgumentError(f"Sliding window {what} field must specify {length} "
                                   f"dimensions")
    return v


def conv(input, filter, strides, padding, explicit_paddings=[], data_format="CHANNELS_LAST",
         dilations=[], batch_dims=1, groups=1, name=None) -> Tensor:
    """The generic N-D convolution (TensorFlow's Conv op): ``input`` has ``batch_dims``
    leading batch dimensions, 2 or 3 spatial ones and the channels; ``filter`` is
    [*window, in_channels, out_channels]; ``strides``/``dilations`` have one entry per
    spatial dimension plus 2.

    >>> tf.conv(tf.ones([2, 1, 4, 4, 1]), tf.ones([2, 2, 1, 3]), [1, 1, 1, 1], "VALID",
    ...         batch_dims=2).shape
    TensorShape([2, 1, 3, 3, 3])
    """
    x = _tensor(input)
    rank, b = len(x.shape), int(batch_dims)
    n = rank - b - 1
    if n not in (2, 3):
        raise InvalidArgumentError(f"The input must have 2 or 3 spatial dimensions but got {n}")
    if data_format not in ("CHANNELS_LAST", "CHANNELS_FIRST"):
        raise InvalidArgumentError(f"Value for attr 'data_format' of \"{data_format}\" is not in "
                                   f"the list of allowed values: \"CHANNELS_FIRST\", "
                                   f"\"CHANNELS_LAST\"")
    if data_format == "CHANNELS_FIRST":
        raise UnimplementedError(f"The Conv{n}D op currently only supports the "
                                 f"{'NHWC' if n == 2 else 'NDHWC'} tensor format on the CPU.")
    if int(groups) != 1:
        raise UnimplementedError("Grouped/Depthwise Convolutions are not supported yet.")
    s = _ints(strides, "strides", n + 2)
    d = _ints(dilations, "dilations", n + 2) if len(dilations) else [1] * (n + 2)
    ex = _ints(explicit_paddings, "explicit_paddings")
    if padding == "EXPLICIT" and len(ex) != 2 * (n + 2):
        raise InvalidArgumentError(f"explicit_paddings attribute must contain {2 * (n + 2)} "
                                   f"values, but got: {len(ex)}")
    attrs = {"strides": tuple(s), "padding": padding, "explicit_paddings": tuple(ex),
             "dilations": tuple(d), "batch_dims": b}
    return apply("Conv", [x, _tensor(filter)], attrs)


def _backprop_v2(op, what, input, filter, out_backprop, strides, padding, explicit_paddings,
                 data_format, dilations):
    first = _channels_first(data_format, 2)
    pad = padding
    if padding == "EXPLICIT":
        ex = _ints(explicit_paddings, "explicit_paddings")
        pad = [ex[2 * i:2 * i + 2] for i in range(4)]
    elif len(explicit_paddings):
        raise InvalidArgumentError("explicit_paddings attribute must be empty if the padding "
                                   "attribute is not EXPLICIT")
    attrs = _conv_attrs(2, strides, pad, dilations, first)
    x, w = _to_last(_tensor(input), first), _tensor(filter)
    dy = _to_last(_tensor(out_backprop), first)
    if what == "filter":
        return apply(op, [x, dy, w], dict(attrs, filter_sizes=()))
    return _to_first(apply(op, [w, dy, x], dict(attrs, input_sizes=())), first)


def conv2d_backprop_filter_v2(input, filter, out_backprop, strides, padding,
                              use_cudnn_on_gpu=True, explicit_paddings=[], data_format="NHWC",
                              dilations=[1, 1, 1, 1], name=None) -> Tensor:
    """The gradient of conv2d with respect to its filter, shaped like ``filter`` (whose
    values are not read).

    >>> tf.conv2d_backprop_filter_v2(tf.ones([1, 3, 3, 1]), tf.zeros([2, 2, 1, 1]),
    ...                              tf.ones([1, 2, 2, 1]), [1, 1, 1, 1], "VALID")[:, :, 0, 0]
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[4., 4.],
           [4., 4.]], dtype=float32)>
    """
    return _backprop_v2("Conv2DBackpropFilter", "filter", input, filter, out_backprop, strides,
                        padding, explicit_paddings, data_format, dilations)


def conv2d_backprop_input_v2(input, filter, out_backprop, strides, padding,
                             use_cudnn_on_gpu=True, explicit_paddings=[], data_format="NHWC",
                             dilations=[1, 1, 1, 1], name=None) -> Tensor:
    """The gradient of conv2d with respect to its input, shaped like ``input`` (whose
    values are not read).

    >>> tf.conv2d_backprop_input_v2(tf.zeros([1, 3, 3, 1]), tf.ones([2, 2, 1, 1]),
    ...                             tf.ones([1, 2, 2, 1]), [1, 1, 1, 1], "VALID")[0, :, :, 0]
    <tf.Tensor: shape=(3, 3), dtype=float32, numpy=
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]], dtype=float32)>
    """
    return _backprop_v2("Conv2DBackpropInput", "input", input, filter, out_backprop, strides,
                        padding, explicit_paddings, data_format, dilations)


def extract_volume_patches(input, ksizes, strides, padding, name=None) -> Tensor:
    """Each ``ksizes`` window of ``input`` [N, D, H, W, C] flattened into the depth
    ([kd, kh, kw, C] order), windows ``strides`` apart; SAME pads with zeros.

    >>> tf.extract_volume_patches(tf.reshape(tf.range(8.0), [1, 2, 2, 2, 1]), [1, 2, 2, 2, 1],
    ...                           [1, 1, 1, 1, 1], "VALID")[0, 0, 0, 0]
    <tf.Tensor: shape=(8,), dtype=float32, numpy=array([0., 1., 2., 3., 4., 5., 6., 7.], dtype=float32)>
    """
    x = _tensor(input)
    if len(x.shape) != 5:
        raise InvalidArgumentError(f"input must be 5-dimensional: {list(x.shape)}")
    k, s = _ints(ksizes, "ksizes", 5), _ints(strides, "strides", 5)
    if k[0] != 1 or k[4] != 1 or s[0] != 1 or s[4] != 1:
        raise InvalidArgumentError("Only support ksizes across space.")
    if padding not in ("SAME", "VALID"):
        raise InvalidArgumentError(f"Value for attr 'padding' of \"{padding}\" is not in the "
                                   f"list of allowed values: \"SAME\", \"VALID\"")
    geo = [window(x.shape[i + 1], k[i + 1], s[i + 1], 1, padding) for i in range(3)]
    pads = [[0, 0]] + [[b, a] for _, b, a in geo] + [[0, 0]]
    xp = array.pad(x, pads) if any(b or a for b, a in pads) else x
    parts = []
    for kk in np.ndindex(*k[1:4]):
        spec = [(None, None, 1)] + [(o_k, o_k + (o - 1) * st + 1, st)
                                    for o_k, (o, _, _), st in zip(kk, geo, s[1:4])]
        parts.append(array.strided_slice(xp, tuple(spec + [(None, None, 1)])))
    return parts[0] if len(parts) == 1 else array.concat(parts, -1)


__all__ = ["conv", "conv2d_backprop_filter_v2", "conv2d_backprop_input_v2",
           "extract_volume_patches"]
