"""Convolution and pooling functions: ``tf.nn.conv2d``, ``max_pool2d``, ... with TensorFlow's
signatures, on the channels-last ops of ir/defs/conv.py.

``data_format="NCHW"`` (and NCW, NCDHW) transposes to channels-last and back around the op,
which is what TensorFlow's CPU gives. 1-D convolutions and pools are their 2-D ops on a unit
height, as TensorFlow's ``conv1d``. Transposed convolutions are the input-gradient ops
(``Conv2DBackpropInput``). ``space_to_depth``, ``depth_to_space``, ``space_to_batch`` and
``batch_to_space`` are reshapes and transposes.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor, Variable, convert_to_tensor
from . import array

_LAST = {3: "NWC", 4: "NHWC", 5: "NDHWC"}


def _tensor(x):
    if isinstance(x, Tensor) or hasattr(x, "aval") and not isinstance(x, Variable):
        return x
    return convert_to_tensor(x)


def _channels_first(data_format, n):
    if data_format is None:
        return False
    fmt = data_format.upper()
    if fmt.startswith("NC"):
        return True
    if fmt.startswith("N") and fmt.endswith("C"):
        return False
    raise ValueError(f"`data_format` must be channels-first or channels-last ('{_LAST[n + 2]}'), "
                     f"got {data_format!r}")


def _to_last(x, first):
    if not first:
        return x
    r = len(x.shape)
    return array.transpose(x, [0] + list(range(2, r)) + [1])


def _to_first(x, first):
    if not first:
        return x
    r = len(x.shape)
    return array.transpose(x, [0, r - 1] + list(range(1, r - 1)))


def _sequence(value, n, name, first, default=1):
    """TensorFlow's ``_get_sequence``: an int or a list of 1, n or n + 2 ints, as the n + 2
    entries of a channels-last attribute (1 for batch and channels)."""
    if value is None:
        return (default,) * (n + 2)
    if hasattr(value, "numpy"):
        value = value.numpy().tolist()
    if isinstance(value, numbers.Integral):
        value = [int(value)]
    value = [int(v) for v in value]
    if len(value) == 1:
        value = value * n
    if len(value) == n:
        return (1,) + tuple(value) + (1,)
    if len(value) == n + 2:
        if first:
            value = [value[0]] + value[2:] + [value[1]]
        return tuple(value)
    raise ValueError(f"{name} should be of length 1, {n} or {n + 2}. Received: {name}={value} "
                     f"of length {len(value)}")


def _padding(padding, n, first):
    """(padding attribute, explicit_paddings) from a string or a list of [before, after]."""
    if isinstance(padding, str):
        if padding not in ("SAME", "VALID"):
            raise ValueError(f"`padding` must be 'SAME', 'VALID' or a list of pairs, got "
                             f"{padding!r}")
        return padding, ()
    pads = [[int(v) for v in p] for p in (padding.numpy().tolist() if hasattr(padding, "numpy")
                                           else padding)]
    if len(pads) != n + 2 or any(len(p) != 2 for p in pads):
        raise ValueError(f"When padding is explicit, it must be a list of {n + 2} [before, after] "
                         f"pairs. Received: padding={padding}")
    if first:
        pads = [pads[0]] + pads[2:] + [pads[1]]
    if pads[0] != [0, 0] or pads[-1] != [0, 0]:
        raise ValueError(f"Explicit padding of the batch and channel dimensions must be 0. "
                         f"Received: padding={padding}")
    return "EXPLICIT", tuple(v for p in pads for v in p)


def _conv_attrs(n, strides, padding, dilations, first, explicit=True):
    pad, ex = _padding(padding, n, first)
    attrs = {"strides": _sequence(strides, n, "strides", first), "padding": pad,
             "dilations": _sequence(dilations, n, "dilations", first)}
    if explicit:
        attrs["explicit_paddings"] = ex
    elif ex:
        raise ValueError(f"explicit padding is not supported by the {n}-D op: padding={padding}")
    return attrs


def _static_shape(shape, what):
    if hasattr(shape, "numpy"):
        shape = shape.numpy().tolist()
    try:
        return tuple(int(v) for v in shape)
    except TypeError:
        raise TypeError(f"{what} must be a list of ints or a constant int tensor here (a size "
                        f"known only when the program runs is not supported), got {shape!r}") \
            from None


# -- convolutions ---------------------------------------------------------------------

def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None,
           name=None) -> Tensor:
    """2-D convolution of ``input`` [N, H, W, C] by ``filters`` [kh, kw, C / groups, O].

    >>> tf.nn.conv2d(tf.ones([1, 3, 3, 1]), tf.ones([2, 2, 1, 1]), 1, "VALID")[0, :, :, 0]
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[4., 4.],
           [4., 4.]], dtype=float32)>
    """
    first = _channels_first(data_format, 2)
    x = _to_last(_tensor(input), first)
    y = apply("Conv2D", [x, filters], _conv_attrs(2, strides, padding, dilations, first))
    return _to_first(y, first)


def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None,
           name=None) -> Tensor:
    """3-D convolution of ``input`` [N, D, H, W, C] by ``filters`` [kd, kh, kw, C, O].

    >>> tf.nn.conv3d(tf.ones([1, 4, 4, 4, 2]), tf.ones([2, 2, 2, 2, 3]), [1, 2, 2, 2, 1], "VALID").shape
    TensorShape([1, 2, 2, 2, 3])
    """
    first = _channels_first(data_format, 3)
    x = _to_last(_tensor(input), first)
    y = apply("Conv3D", [x, filters], _conv_attrs(3, strides, padding, dilations, first, False))
    return _to_first(y, first)


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None,
           name=None) -> Tensor:
    """1-D convolution of ``input`` [N, W, C] by ``filters`` [k, C, O]: a 2-D one of height 1.

    >>> tf.nn.conv1d(tf.ones([1, 5, 1]), tf.ones([3, 1, 1]), 1, "VALID")[0, :, 0]
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([3., 3., 3.], dtype=float32)>
    """
    first = _channels_first(data_format, 1)
    x = _to_last(_tensor(input), first)
    s = _sequence(stride, 1, "stride", first)
    d = _sequence(dilations, 1, "dilations", first)
    pad = padding if isinstance(padding, str) else [[0, 0]] + list(_pairs_last(padding, first))
    y = conv2d(array.expand_dims(x, 1), array.expand_dims(filters, 0), (1, 1) + s[1:],
               pad, dilations=(1, 1) + d[1:])
    return _to_first(array.squeeze(y, [1]), first)


def _pairs_last(padding, first):
    pads = [list(p) for p in (padding.numpy().tolist() if hasattr(padding, "numpy") else padding)]
    return [pads[0]] + pads[2:] + [pads[1]] if first else pads


def convolution(input, filters, strides=None, padding="VALID", data_format=None,
                dilations=None, name=None) -> Tensor:
    """An N-D convolution, by the rank of ``input`` (3: conv1d, 4: conv2d, 5: conv3d).

    >>> tf.nn.convolution(tf.ones([1, 5, 5, 2]), tf.ones([3, 3, 2, 4]), padding="SAME").shape
    TensorShape([1, 5, 5, 4])
    """
    x = _tensor(input)
    rank = len(x.shape)
    fn = {3: conv1d, 4: conv2d, 5: conv3d}.get(rank)
    if fn is None:
        raise ValueError(f"`input` must have rank 3, 4 or 5 (1 to 3 spatial dimensions), got "
                         f"shape {list(x.shape)}")
    return fn(x, filters, 1 if strides is None else strides, padding,
              data_format=data_format or _LAST[rank], dilations=dilations)


def _transpose_conv(op, n, input, filters, output_shape, strides, padding, data_format,
                    dilations, explicit=True):
    first = _channels_first(data_format, n)
    x = _to_last(_tensor(input), first)
    shape = _static_shape(output_shape, "output_shape")
    if len(shape) != n + 2:
        raise ValueError(f"output_shape must have length {n + 2}, got {list(shape)}")
    if first:
        shape = (shape[0],) + shape[2:] + (shape[1],)
    attrs = _conv_attrs(n, strides, padding, dilations, first, explicit)
    attrs["input_sizes"] = shape
    return _to_first(apply(op, [filters, x], attrs), first)


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC",
                     dilations=None, name=None) -> Tensor:
    """The transpose (gradient) of conv2d: ``filters`` is [kh, kw, out_channels, in_channels].

    >>> tf.nn.conv2d_transpose(tf.ones([1, 2, 2, 3]), tf.ones([2, 2, 1, 3]), [1, 4, 4, 1], 2).shape
    TensorShape([1, 4, 4, 1])
    """
    return _transpose_conv("Conv2DBackpropInput", 2, input, filters, output_shape, strides,
                           padding, data_format, dilations)


def conv3d_transpose(input, filters, output_shape, strides, padding="SAME",
                     data_format="NDHWC", dilations=None, name=None) -> Tensor:
    """The transpose of conv3d: ``filters`` is [kd, kh, kw, out_channels, in_channels].

    >>> tf.nn.conv3d_transpose(tf.ones([1, 2, 2, 2, 3]), tf.ones([2, 2, 2, 1, 3]), [1, 4, 4, 4, 1],
    ...                     [1, 2, 2, 2, 1]).shape
    TensorShape([1, 4, 4, 4, 1])
    """
    return _transpose_conv("Conv3DBackpropInputV2", 3, input, filters, output_shape, strides,
                           padding, data_format, dilations, explicit=False)


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NWC",
                     dilations=None, name=None) -> Tensor:
    """The transpose of conv1d: conv2d_transpose on a unit height.

    >>> tf.nn.conv1d_transpose(tf.ones([1, 3, 2]), tf.ones([2, 1, 2]), [1, 6, 1], 2)[0, :, 0]
    <tf.Tensor: shape=(6,), dtype=float32, numpy=array([2., 2., 2., 2., 2., 2.], dtype=float32)>
    """
    first = _channels_first(data_format, 1)
    x = _to_last(_tensor(input), first)
    shape = list(_static_shape(output_shape, "output_shape"))
    if len(shape) != 3:
        raise ValueError(f"output_shape must have length 3, got {shape}")
    if first:
        shape = [shape[0], shape[2], shape[1]]
    s = _sequence(strides, 1, "strides", first)
    d = _sequence(dilations, 1, "dilations", first)
    pad = padding if isinstance(padding, str) else [[0, 0]] + list(_pairs_last(padding, first))
    y = conv2d_transpose(array.expand_dims(x, 1), array.expand_dims(filters, 0),
                         [shape[0], 1] + shape[1:], (1, 1) + s[1:], pad,
                         dilations=(1, 1) + d[1:])
    return _to_first(array.squeeze(y, [1]), first)


def conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=None,
                   dilations=None, name=None) -> Tensor:
    """The transpose of an N-D convolution, by the length of ``output_shape``.

    >>> tf.nn.conv_transpose(tf.ones([1, 3, 2]), tf.ones([2, 1, 2]), [1, 6, 1], 2).shape
    TensorShape([1, 6, 1])
    """
    n = len(_static_shape(output_shape, "output_shape")) - 2
    fn = {1: conv1d_transpose, 2: conv2d_transpose, 3: conv3d_transpose}.get(n)
    if fn is None:
        raise ValueError(f"output_shape must have length 3, 4 or 5, got {output_shape}")
    return fn(input, filters, output_shape, strides, padding,
              data_format=data_format or _LAST[n + 2], dilations=dilations)


def atrous_conv2d(value, filters, rate, padding, name=None) -> Tensor:
    """conv2d with dilation ``rate`` (TensorFlow goes through space_to_batch: the same values).

    >>> tf.nn.atrous_conv2d(tf.ones([1, 5, 5, 1]), tf.ones([2, 2, 1, 1]), 2, "VALID").shape
    TensorShape([1, 3, 3, 1])
    """
    if int(rate) < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    return conv2d(value, filters, 1, padding, dilations=int(rate))


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None) -> Tensor:
    """The transpose of atrous_conv2d.

    >>> tf.nn.atrous_conv2d_transpose(tf.ones([1, 3, 3, 1]), tf.ones([2, 2, 1, 1]), [1, 5, 5, 1], 2,
    ...                            "VALID").shape
    TensorShape([1, 5, 5, 1])
    """
    if int(rate) < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"padding must be either VALID or SAME: {padding}")
    return conv2d_transpose(value, filters, output_shape, 1, padding, dilations=int(rate))


def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None,
                     name=None) -> Tensor:
    """Each input channel convolved with its own ``filter[:, :, c, :]`` [kh, kw, C, M]: C * M
    output channels.

    >>> tf.nn.depthwise_conv2d(tf.ones([1, 4, 4, 3]), tf.ones([2, 2, 3, 2]), [1, 1, 1, 1], "VALID").shape
    TensorShape([1, 3, 3, 6])
    """
    first = _channels_first(data_format, 2)
    x = _to_last(_tensor(input), first)
    attrs = _conv_attrs(2, strides, padding, dilations, first)
    return _to_first(apply("DepthwiseConv2dNative", [x, filter], attrs), first)


def depthwise_conv2d_backprop_input(input_sizes, filter, out_backprop, strides, padding,
                                    data_format="NHWC", dilations=(1, 1, 1, 1),
                                    name=None) -> Tensor:
    """The gradient of depthwise_conv2d with respect to its input.

    >>> tf.nn.depthwise_conv2d_backprop_input([1, 4, 4, 3], tf.ones([2, 2, 3, 2]), tf.ones([1, 3, 3, 6]),
    ...                                    [1, 1, 1, 1], "VALID")[0, :, 0, 0]
    <tf.Tensor: shape=(4,), dtype=float32, numpy=array([2., 4., 4., 2.], dtype=float32)>
    """
    first = _channels_first(data_format, 2)
    shape = _static_shape(input_sizes, "input_sizes")
    if first:
        shape = (shape[0],) + shape[2:] + (shape[1],)
    attrs = dict(_conv_attrs(2, strides, padding, dilations, first), input_sizes=shape)
    dy = _to_last(_tensor(out_backprop), first)
    return _to_first(apply("DepthwiseConv2dNativeBackpropInput", [filter, dy], attrs), first)


def depthwise_conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,
                                     data_format="NHWC", dilations=(1, 1, 1, 1),
                                     name=None) -> Tensor:
    """The gradient of depthwise_conv2d with respect to its filter.

    >>> tf.nn.depthwise_conv2d_backprop_filter(tf.ones([1, 4, 4, 3]), [2, 2, 3, 2], tf.ones([1, 3, 3, 6]),
    ...                                     [1, 1, 1, 1], "VALID")[:, :, 0, 0]
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[9., 9.],
           [9., 9.]], dtype=float32)>
    """
    first = _channels_first(data_format, 2)
    attrs = dict(_conv_attrs(2, strides, padding, dilations, first),
                 filter_sizes=_static_shape(filter_sizes, "filter_sizes"))
    x, dy = _to_last(_tensor(input), first), _to_last(_tensor(out_backprop), first)
    return apply("DepthwiseConv2dNativeBackpropFilter", [x, dy], attrs)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,
                     data_format=None, dilations=None, name=None) -> Tensor:
    """A depthwise convolution then a 1x1 convolution mixing the channels.

    >>> tf.nn.separable_conv2d(tf.ones([1, 4, 4, 3]), tf.ones([2, 2, 3, 1]), tf.ones([1, 1, 3, 5]),
    ...                     [1, 1, 1, 1], "VALID").shape
    TensorShape([1, 3, 3, 5])
    """
    first = _channels_first(data_format, 2)
    x = _to_last(_tensor(input), first)
    depth = depthwise_conv2d(x, depthwise_filter, strides, padding, dilations=dilations)
    return _to_first(conv2d(depth, pointwise_filter, 1, "VALID"), first)


# -- pooling --------------------------------------------------------------------------

def _pool(op, n, input, ksize, strides, padding, data_format, explicit=True):
    first = _channels_first(data_format, n)
    x = _to_last(_tensor(input), first)
    pad, ex = _padding(padding, n, first)
    if ex and not explicit:
        raise ValueError(f"explicit padding is not supported here: padding={padding}")
    attrs = {"ksize": _sequence(ksize, n, "ksize", first),
             "strides": _sequence(strides, n, "strides", first), "padding": pad}
    if op == "MaxPool":
        attrs["explicit_paddings"] = ex
        _check_pool_padding(attrs)
    elif op == "AvgPool":
        attrs["explicit_paddings"] = ()
    return _to_first(apply(op, [x], attrs), first)


def _check_pool_padding(attrs):
    ex = attrs["explicit_paddings"]
    for i, k in enumerate(attrs["ksize"][1:-1], 1):
        if ex and ex[2 * i] >= k:
            raise ValueError(f"Left padding {ex[2 * i]} needs to be smaller than the window "
                             f"size {k}")
        if ex and ex[2 * i + 1] >= k:
            raise ValueError(f"Right padding {ex[2 * i + 1]} needs to be smaller than the "
                             f"window size {k}")


def _pool1d(op, input, ksize, strides, padding, data_format):
    first = _channels_first(data_format, 1)
    x = _to_last(_tensor(input), first)
    k = _sequence(ksize, 1, "ksize", first)
    s = _sequence(strides, 1, "strides", first)
    pad = padding if isinstance(padding, str) else [[0, 0]] + list(_pairs_last(padding, first))
    y = _pool(op, 2, array.expand_dims(x, 1), (1, 1) + k[1:], (1, 1) + s[1:], pad, "NHWC",
              explicit=op == "MaxPool")
    return _to_first(array.squeeze(y, [1]), first)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None) -> Tensor:
    """The maximum of each window of ``input`` [N, H, W, C].

    >>> tf.nn.max_pool2d(tf.reshape(tf.range(16.0), [1, 4, 4, 1]), 2, 2, "VALID")[0, :, :, 0]
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[ 5.,  7.],
           [13., 15.]], dtype=float32)>
    """
    return _pool("MaxPool", 2, input, ksize, strides, padding, data_format)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None) -> Tensor:
    """The maximum of each window of ``input`` [N, D, H, W, C].

    >>> tf.nn.max_pool3d(tf.ones([1, 4, 4, 4, 1]), 2, 2, "VALID").shape
    TensorShape([1, 2, 2, 2, 1])
    """
    return _pool("MaxPool3D", 3, input, ksize, strides, padding, data_format, explicit=False)


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None) -> Tensor:
    """The maximum of each window of ``input`` [N, W, C].

    >>> tf.nn.max_pool1d(tf.constant([[[1.0], [3.0], [2.0], [0.0]]]), 2, 2, "VALID")[0, :, 0]
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 2.], dtype=float32)>
    """
    return _pool1d("MaxPool", input, ksize, strides, padding, data_format)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None) -> Tensor:
    """The mean of each window of ``input`` [N, H, W, C] (padding not counted).

    >>> tf.nn.avg_pool2d(tf.reshape(tf.range(4.0), [1, 2, 2, 1]), 2, 2, "VALID")[0, 0, 0, 0]
    <tf.Tensor: shape=(), dtype=float32, numpy=1.5>
    """
    if not isinstance(padding, str):
        raise TypeError(f"Expected string for argument 'padding' not {padding!r}.")
    return _pool("AvgPool", 2, input, ksize, strides, padding, data_format)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None) -> Tensor:
    """The mean of each window of ``input`` [N, D, H, W, C] (padding not counted).

    >>> tf.nn.avg_pool3d(tf.ones([1, 4, 4, 4, 1]), 2, 2, "SAME").shape
    TensorShape([1, 2, 2, 2, 1])
    """
    if not isinstance(padding, str):
        raise TypeError(f"Expected string for argument 'padding' not {padding!r}.")
    return _pool("AvgPool3D", 3, input, ksize, strides, padding, data_format, explicit=False)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None) -> Tensor:
    """The mean of each window of ``input`` [N, W, C] (padding not counted).

    >>> tf.nn.avg_pool1d(tf.constant([[[1.0], [3.0], [2.0]]]), 2, 2, "SAME")[0, :, 0]
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 2.], dtype=float32)>
    """
    if not isinstance(padding, str):
        raise TypeError(f"Expected string for argument 'padding' not {padding!r}.")
    return _pool1d("AvgPool", input, ksize, strides, padding, data_format)


def _by_rank(fns, input, what):
    x = _tensor(input)
    rank = len(x.shape)
    if rank not in fns:
        raise ValueError(f"`input` must have rank 3, 4 or 5 for {what}, got shape "
                         f"{list(x.shape)}")
    return x, fns[rank], rank


def max_pool(input, ksize, strides, padding, data_format=None, name=None) -> Tensor:
    """max_pool1d/2d/3d by the rank of ``input``.

    >>> tf.nn.max_pool(tf.ones([1, 6, 2]), 3, 3, "VALID").shape
    TensorShape([1, 2, 2])
    """
    x, fn, rank = _by_rank({3: max_pool1d, 4: max_pool2d, 5: max_pool3d}, input, "max_pool")
    return fn(x, ksize, strides, padding, data_format=data_format or _LAST[rank])


def avg_pool(input, ksize, strides, padding, data_format=None, name=None) -> Tensor:
    """avg_pool1d/2d/3d by the rank of ``input``.

    >>> tf.nn.avg_pool(tf.ones([1, 6, 6, 2]), 3, 3, "VALID").shape
    TensorShape([1, 2, 2, 2])
    """
    x, fn, rank = _by_rank({3: avg_pool1d, 4: avg_pool2d, 5: avg_pool3d}, input, "avg_pool")
    return fn(x, ksize, strides, padding, data_format=data_format or _LAST[rank])


def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC",
                         output_dtype=D.int64, include_batch_in_index=False,
                         name=None) -> tuple[Tensor, Tensor]:
    """(max_pool2d, the flat index of each maximum: ``(y * width + x) * channels + c``, plus
    ``b * height * width * channels`` with ``include_batch_in_index``).

    >>> y, argmax = tf.nn.max_pool_with_argmax(tf.reshape(tf.range(8.0), [1, 2, 2, 2]), 2, 2, "VALID")
    >>> argmax
    <tf.Tensor: shape=(1, 1, 1, 2), dtype=int64, numpy=array([[[[6, 7]]]])>
    """
    if data_format != "NHWC":
        raise ValueError(f"Data formats other than 'NHWC' are not yet supported, got "
                         f"{data_format!r}")
    attrs = {"ksize": _sequence(ksize, 2, "ksize", False),
             "strides": _sequence(strides, 2, "strides", False), "padding": padding,
             "Targmax": D.as_dtype(output_dtype),
             "include_batch_in_index": bool(include_batch_in_index)}
    return tuple(apply("MaxPoolWithArgmax", [input], attrs))


# -- moving space into depth or batch -------------------------------------------------

def _block(block_size):
    b = int(block_size)
    if b < 2:
        raise ValueError(f"Value for attr 'block_size' of {b} must be at least 2")
    return b


def space_to_depth(input, block_size, data_format="NHWC", name=None) -> Tensor:
    """Each b x b block of pixels becomes b * b * C channels (row-major within the block).

    >>> tf.nn.space_to_depth(tf.reshape(tf.range(4.0), [1, 2, 2, 1]), 2)
    <tf.Tensor: shape=(1, 1, 1, 4), dtype=float32, numpy=array([[[[0., 1., 2., 3.]]]], dtype=float32)>
    """
    b = _block(block_size)
    first = _channels_first(data_format, 2)
    x = _to_last(_tensor(input), first)
    n, h, w, c = x.shape
    if h % b or w % b:
        raise ValueError(f"Image height {h} and width {w} should be divisible by "
                         f"block_size: {b}")
    y = array.reshape(x, [-1, h // b, b, w // b, b, c])
    y = array.transpose(y, [0, 1, 3, 2, 4, 5])
    return _to_first(array.reshape(y, [-1, h // b, w // b, b * b * c]), first)


def depth_to_space(input, block_size, data_format="NHWC", name=None) -> Tensor:
    """The inverse of space_to_depth: b * b * C' channels become a b x b block of pixels.

    >>> tf.nn.depth_to_space(tf.reshape(tf.range(4.0), [1, 1, 1, 4]), 2)[0, :, :, 0]
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[0., 1.],
           [2., 3.]], dtype=float32)>
    """
    b = _block(block_size)
    first = _channels_first(data_format, 2)
    x = _to_last(_tensor(input), first)
    n, h, w, c = x.shape
    if c % (b * b):
        raise ValueError(f"Input depth dimension {c} should be divisible by: {b * b}")
    y = array.reshape(x, [-1, h, w, b, b, c // (b * b)])
    y = array.transpose(y, [0, 1, 3, 2, 4, 5])
    return _to_first(array.reshape(y, [-1, h * b, w * b, c // (b * b)]), first)


def space_to_batch(input, block_shape, paddings, name=None) -> Tensor:
    """The spatial dimensions padded, cut into blocks, the block offsets moved into the batch
    (TensorFlow's SpaceToBatchND).

    >>> tf.space_to_batch(tf.ones([1, 4, 4, 1]), [2, 2], [[0, 0], [0, 0]]).shape
    TensorShape([4, 2, 2, 1])
    """
    x = _tensor(input)
    block = [int(v) for v in np.atleast_1d(np.asarray(
        block_shape.numpy() if hasattr(block_shape, "numpy") else block_shape))]
    m = len(block)
    pads = np.asarray(paddings.numpy() if hasattr(paddings, "numpy") else paddings).reshape(m, 2)
    shape = list(x.shape)
    rest = shape[m + 1:]
    full = [[0, 0]] + pads.tolist() + [[0, 0]] * len(rest)
    xp = array.pad(x, full)
    sizes = [shape[i + 1] + int(pads[i].sum()) for i in range(m)]
    for i, (s, b) in enumerate(zip(sizes, block)):
        if s % b:
            raise ValueError(f"padded_shape[{i}]={s} is not divisible by block_shape[{i}]={b}")
    split = [shape[0]] + [v for s, b in zip(sizes, block) for v in (s // b, b)] + rest
    y = array.reshape(xp, split)
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + \
        list(range(1 + 2 * m, 1 + 2 * m + len(rest)))
    y = array.transpose(y, perm)
    return array.reshape(y, [shape[0] * int(np.prod(block))] + [s // b for s, b in zip(sizes, block)]
                         + rest)


def batch_to_space(input, block_shape, crops, name=None) -> Tensor:
    """The inverse of space_to_batch: block offsets moved from the batch back into space,
    then ``crops`` cut off (TensorFlow's BatchToSpaceND).

    >>> tf.batch_to_space(tf.ones([4, 2, 2, 1]), [2, 2], [[0, 0], [0, 1]]).shape
    TensorShape([1, 4, 3, 1])
    """
    x = _tensor(input)
    block = [int(v) for v in np.atleast_1d(np.asarray(
        block_shape.numpy() if hasattr(block_shape, "numpy") else block_shape))]
    m = len(block)
    crops = np.asarray(crops.numpy() if hasattr(crops, "numpy") else crops).reshape(m, 2)
    shape = list(x.shape)
    prod = int(np.prod(block))
    if shape[0] % prod:
        raise ValueError(f"Input batch dimension ({shape[0]}) is not divisible by product of "
                         f"block sizes ({prod})")
    n = shape[0] // prod
    rest = shape[m + 1:]
    y = array.reshape(x, block + [n] + shape[1:])
    perm = [m] + [v for i in range(m) for v in (m + 1 + i, i)] + \
        list(range(2 * m + 1, 2 * m + 1 + len(rest)))
    y = array.transpose(y, perm)
    y = array.reshape(y, [n] + [s * b for s, b in zip(shape[1:m + 1], block)] + rest)
    spec = [(None, None, 1)] + [(int(c0), int(s * b - c1), 1)
                                for (c0, c1), s, b in zip(crops, shape[1:m + 1], block)]
    spec += [(None, None, 1)] * len(rest)
    return array.strided_slice(y, tuple(spec))


__all__ = ["conv1d", "conv2d", "conv3d", "convolution", "conv1d_transpose", "conv2d_transpose",
           "conv3d_transpose", "conv_transpose", "atrous_conv2d", "atrous_conv2d_transpose",
           "depthwise_conv2d", "depthwise_conv2d_backprop_input",
           "depthwise_conv2d_backprop_filter", "separable_conv2d", "max_pool", "max_pool1d",
           "max_pool2d", "max_pool3d", "avg_pool", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "max_pool_with_argmax", "space_to_depth", "depth_to_space", "space_to_batch",
           "batch_to_space"]
