"""Keras 3's convolution layers: ``Conv1D/2D/3D``, ``Conv1DTranspose/2DTranspose/3DTranspose``,
``DepthwiseConv1D/2D``, ``SeparableConv1D/2D`` and their ``Convolution*`` aliases.

Keras 3's arguments, defaults (``padding="valid"``, ``glorot_uniform`` kernels, zero biases),
weight names and shapes (a kernel ``kernel_size + (in_channels // groups, filters)``; a
transposed one ``kernel_size + (filters, in_channels)``) and ``get_config`` keys, on the
``tf.nn`` functions of ops/conv.py. ``padding="causal"`` (Conv1D) pads the left by
``dilation_rate * (kernel_size - 1)`` and runs a valid convolution, as Keras does.
"""
from ..ops import array as A
from ..ops import conv as C
from ..ops import math as M
from ..runtime.tensor import TensorShape
from . import constraints as constraints_module
from . import initializers
from . import regularizers as regularizers_module
from .layers import InputSpec, Layer, get_activation, serialize_activation


def normalize_tuple(value, n, name, allow_zero=False):
    """Keras' ``standardize_tuple``: an int, or n ints, as a tuple of n positive ints."""
    if isinstance(value, int):
        value = (value,) * n
    try:
        value = tuple(int(v) for v in value)
    except TypeError:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. "
                         f"Received {name}={value}") from None
    if len(value) != n or any(v < (0 if allow_zero else 1) for v in value):
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. "
                         f"Received {name}={value}, including values {'<0' if allow_zero else '<=0'}")
    return value


def normalize_data_format(value):
    value = "channels_last" if value is None else str(value).lower()
    if value not in ("channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be one of 'channels_first', "
                         f"'channels_last'. Received: data_format={value}")
    return value


def normalize_padding(value, allowed=("valid", "same")):
    p = str(value).lower()
    if p not in allowed:
        raise ValueError(f"The `padding` argument must be one of {list(allowed)}. "
                         f"Received: padding={value}")
    return p


def _tf_format(rank, data_format):
    last = {1: "NWC", 2: "NHWC", 3: "NDHWC"}[rank]
    return last if data_format == "channels_last" else last[0] + "C" + last[1:-1]


def _channel_axis(data_format):
    return -1 if data_format == "channels_last" else 1


class _BaseConv(Layer):
    """What every convolution layer shares: arguments, bias, activation, config."""

    rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        n = self.rank
        self.filters = None if filters is None else int(filters)
        if self.filters is not None and self.filters <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive "
                             f"value. Received filters={filters}.")
        self.groups = int(groups)
        if self.groups <= 0:
            raise ValueError(f"The number of groups must be a positive integer. "
                             f"Received: groups={groups}.")
        if self.filters is not None and self.filters % self.groups:
            raise ValueError(f"The number of filters must be evenly divisible by the number of "
                             f"groups. Received: groups={groups}, filters={filters}.")
        self.kernel_size = normalize_tuple(kernel_size, n, "kernel_size")
        self.strides = normalize_tuple(strides, n, "strides")
        self.dilation_rate = normalize_tuple(dilation_rate, n, "dilation_rate")
        allowed = ("valid", "same", "causal") if n == 1 and not self._transpose else ("valid", "same")
        self.padding = normalize_padding(padding, allowed)
        self.data_format = normalize_data_format(data_format)
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers_module.get(kernel_regularizer)
        self.bias_regularizer = regularizers_module.get(bias_regularizer)
        self.kernel_constraint = constraints_module.get(kernel_constraint)
        self.bias_constraint = constraints_module.get(bias_constraint)
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"`strides > 1` not supported in conjunction with "
                             f"`dilation_rate > 1`. Received: strides={self.strides} and "
                             f"dilation_rate={self.dilation_rate}")
        self.input_spec = InputSpec(min_ndim=n + 2)

    _transpose = False

    def _in_channels(self, input_shape):
        shape = TensorShape(input_shape)
        c = shape[_channel_axis(self.data_format)]
        if c is None:
            raise ValueError(f"The channel dimension of the inputs should be defined. The input "
                             f"shape received is {tuple(shape)}, where axis "
                             f"{_channel_axis(self.data_format)} (0-based) is the channel "
                             f"dimension, which found to be `None`.")
        return int(c)

    def _kernel_shape(self, channels):
        if channels % self.groups:
            raise ValueError(f"The number of input channels must be evenly divisible by the "
                             f"number of groups. Received groups={self.groups}, but the input "
                             f"has {channels} channels (full input shape is ...).")
        return self.kernel_size + (channels // self.groups, self.filters)

    def build(self, input_shape):
        channels = self._in_channels(input_shape)
        self.kernel = self.add_weight("kernel", shape=self._kernel_shape(channels),
                                      initializer=self.kernel_initializer, dtype=self._dtype,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = (self.add_weight("bias", shape=(self.filters,),
                                     initializer=self.bias_initializer, dtype=self._dtype,
                                     regularizer=self.bias_regularizer,
                                     constraint=self.bias_constraint)
                     if self.use_bias else None)
        self.input_spec = InputSpec(min_ndim=self.rank + 2,
                                    axes={_channel_axis(self.data_format): channels})
        self.built = True

    def _finish(self, outputs):
        if self.use_bias:
            bias = self.bias
            if self.data_format == "channels_first":
                bias = A.reshape(bias, (1, -1) + (1,) * self.rank)
            outputs = M.add(outputs, bias)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs

    def _convolve(self, inputs):
        fmt = _tf_format(self.rank, self.data_format)
        padding = self.padding
        if padding == "causal":
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            pads = [[0, 0], [left, 0], [0, 0]] if self.data_format == "channels_last" else \
                [[0, 0], [0, 0], [left, 0]]
            inputs = A.pad(inputs, pads)
            padding = "valid"
        return C.convolution(inputs, self.kernel, list(self.strides), padding.upper(),
                             data_format=fmt, dilations=list(self.dilation_rate))

    def call(self, inputs):
        if inputs.dtype != self._dtype:
            inputs = M.cast(inputs, self._dtype)
        return self._finish(self._convolve(inputs))

    def compute_output_shape(self, input_shape):
        shape = TensorShape(input_shape)
        spatial = list(shape[1:-1] if self.data_format == "channels_last" else shape[2:])
        out = []
        for i, size in enumerate(spatial):
            if size is None:
                out.append(None)
                continue
            keff = (self.kernel_size[i] - 1) * self.dilation_rate[i] + 1
            s = self.strides[i]
            if self.padding == "same" or self.padding == "causal":
                out.append((size + s - 1) // s)
            else:
                out.append((size - keff) // s + 1)
        if self.data_format == "channels_last":
            return TensorShape([shape[0]] + out + [self.filters])
        return TensorShape([shape[0], self.filters] + out)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding,
                "data_format": self.data_format, "dilation_rate": self.dilation_rate,
                "groups": self.groups, "activation": serialize_activation(self.activation),
                "use_bias": self.use_bias,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": regularizers_module.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers_module.serialize(self.bias_regularizer),
                "activity_regularizer": regularizers_module.serialize(self.activity_regularizer),
                "kernel_constraint": constraints_module.serialize(self.kernel_constraint),
                "bias_constraint": constraints_module.serialize(self.bias_constraint)}


class Conv1D(_BaseConv):
    """1-D convolution (temporal): inputs [batch, steps, channels] (channels_last).

    >>> layer = tf.keras.layers.Conv1D(2, 3, kernel_initializer="ones")
    >>> layer(tf.ones([1, 5, 1])).numpy().tolist()
    [[[3.0, 3.0], [3.0, 3.0], [3.0, 3.0]]]
    """
    rank = 1


class Conv2D(_BaseConv):
    """2-D convolution: inputs [batch, height, width, channels] (channels_last).

    >>> layer = tf.keras.layers.Conv2D(4, 3, padding="same")
    >>> layer(tf.ones([2, 5, 5, 3])).shape
    TensorShape([2, 5, 5, 4])
    >>> layer.kernel.shape
    TensorShape([3, 3, 3, 4])
    """
    rank = 2


class Conv3D(_BaseConv):
    """3-D convolution: inputs [batch, depth, height, width, channels] (channels_last).

    >>> tf.keras.layers.Conv3D(2, 2)(tf.ones([1, 3, 3, 3, 1])).shape
    TensorShape([1, 2, 2, 2, 2])
    """
    rank = 3


def _deconv_length(size, k, padding, stride, dilation, output_padding=None):
    """Keras' ``compute_conv_transpose_output_length`` (deconv_output_length)."""
    if size is None:
        return None
    k = k + (k - 1) * (dilation - 1)
    if output_padding is None:
        if padding == "valid":
            return size * stride + max(k - stride, 0)
        return size * stride
    pad = k // 2 if padding == "same" else 0
    return (size - 1) * stride + k - 2 * pad + output_padding


class _BaseConvTranspose(_BaseConv):
    _transpose = True

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate, groups=1,
                         activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         **kwargs)
        self.output_padding = None if output_padding is None else \
            normalize_tuple(output_padding, self.rank, "output_padding", allow_zero=True)
        if self.output_padding is not None:
            for p, s in zip(self.output_padding, self.strides):
                if p >= s:
                    raise ValueError(f"Strides must be greater than output padding. Received "
                                     f"strides={self.strides}, output_padding="
                                     f"{self.output_padding}.")

    def _kernel_shape(self, channels):
        return self.kernel_size + (self.filters, channels)

    def compute_output_shape(self, input_shape):
        shape = TensorShape(input_shape)
        spatial = list(shape[1:-1] if self.data_format == "channels_last" else shape[2:])
        op = self.output_padding or (None,) * self.rank
        out = [_deconv_length(s, self.kernel_size[i], self.padding, self.strides[i],
                              self.dilation_rate[i], op[i]) for i, s in enumerate(spatial)]
        if self.data_format == "channels_last":
            return TensorShape([shape[0]] + out + [self.filters])
        return TensorShape([shape[0], self.filters] + out)

    def _convolve(self, inputs):
        shape = self.compute_output_shape(inputs.shape)
        dims = [None if d is None else int(d) for d in shape]
        if None in dims:
            raise ValueError(f"{type(self).__name__} needs the sizes of its inputs; got "
                             f"shape {tuple(inputs.shape)}")
        return C.conv_transpose(inputs, self.kernel, dims, list(self.strides),
                                self.padding.upper(),
                                data_format=_tf_format(self.rank, self.data_format),
                                dilations=list(self.dilation_rate))

    def get_config(self):
        config = super().get_config()
        config.pop("groups")
        config["output_padding"] = self.output_padding
        return config


class Conv1DTranspose(_BaseConvTranspose):
    """The transpose of Conv1D (a "deconvolution").

    >>> tf.keras.layers.Conv1DTranspose(2, 3, strides=2)(tf.ones([1, 4, 1])).shape
    TensorShape([1, 9, 2])
    """
    rank = 1


class Conv2DTranspose(_BaseConvTranspose):
    """The transpose of Conv2D: kernel [kh, kw, filters, in_channels].

    >>> tf.keras.layers.Conv2DTranspose(3, 2, strides=2)(tf.ones([1, 4, 4, 5])).shape
    TensorShape([1, 8, 8, 3])
    """
    rank = 2


class Conv3DTranspose(_BaseConvTranspose):
    """The transpose of Conv3D.

    >>> tf.keras.layers.Conv3DTranspose(2, 2, strides=2)(tf.ones([1, 2, 2, 2, 1])).shape
    TensorShape([1, 4, 4, 4, 2])
    """
    rank = 3


class _BaseDepthwise(_BaseConv):
    def __init__(self, kernel_size, strides=1, padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(None, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate,
                         activation=activation, use_bias=use_bias,
                         kernel_initializer=depthwise_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=depthwise_regularizer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=depthwise_constraint,
                         bias_constraint=bias_constraint, **kwargs)
        self.depth_multiplier = int(depth_multiplier)

    def build(self, input_shape):
        channels = self._in_channels(input_shape)
        self.kernel = self.add_weight("kernel",
                                      shape=self.kernel_size + (channels, self.depth_multiplier),
                                      initializer=self.kernel_initializer, dtype=self._dtype,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.filters = channels * self.depth_multiplier
        self.bias = (self.add_weight("bias", shape=(self.filters,),
                                     initializer=self.bias_initializer, dtype=self._dtype,
                                     regularizer=self.bias_regularizer,
                                     constraint=self.bias_constraint)
                     if self.use_bias else None)
        self.built = True

    def _convolve(self, inputs):
        fmt = "NHWC" if self.data_format == "channels_last" else "NCHW"
        kernel = self.kernel
        strides, dil = list(self.strides), list(self.dilation_rate)
        if self.rank == 1:
            axis = 1 if self.data_format == "channels_last" else 2
            inputs = A.expand_dims(inputs, axis)
            kernel = A.expand_dims(kernel, 0)
            strides, dil = [1] + strides, [1] + dil
        full = [1] + strides + [1] if fmt == "NHWC" else [1, 1] + strides
        y = C.depthwise_conv2d(inputs, kernel, full, self.padding.upper(), data_format=fmt,
                               dilations=dil)
        if self.rank == 1:
            y = A.squeeze(y, [1 if self.data_format == "channels_last" else 2])
        return y

    def compute_output_shape(self, input_shape):
        channels = TensorShape(input_shape)[_channel_axis(self.data_format)]
        self.filters = None if channels is None else channels * self.depth_multiplier
        return super().compute_output_shape(input_shape)

    def get_config(self):
        config = super().get_config()
        for k in ("filters", "groups"):
            config.pop(k)
        config["depth_multiplier"] = self.depth_multiplier
        config["depthwise_initializer"] = config.pop("kernel_initializer")
        config["depthwise_regularizer"] = config.pop("kernel_regularizer")
        config["depthwise_constraint"] = config.pop("kernel_constraint")
        return config


class DepthwiseConv1D(_BaseDepthwise):
    """Each input channel convolved with its own ``depth_multiplier`` filters (1-D).

    >>> tf.keras.layers.DepthwiseConv1D(3, depth_multiplier=2)(tf.ones([1, 5, 3])).shape
    TensorShape([1, 3, 6])
    """
    rank = 1


class DepthwiseConv2D(_BaseDepthwise):
    """Each input channel convolved with its own ``depth_multiplier`` filters (2-D).

    >>> tf.keras.layers.DepthwiseConv2D(3, depth_multiplier=2)(tf.ones([1, 5, 5, 3])).shape
    TensorShape([1, 3, 3, 6])
    """
    rank = 2


class _BaseSeparable(_BaseConv):
    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate,
                         activation=activation, use_bias=use_bias,
                         kernel_initializer=depthwise_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=depthwise_regularizer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=depthwise_constraint,
                         bias_constraint=bias_constraint, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.pointwise_regularizer = regularizers_module.get(pointwise_regularizer)
        self.pointwise_constraint = constraints_module.get(pointwise_constraint)

    def build(self, input_shape):
        channels = self._in_channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.kernel_initializer, dtype=self._dtype,
            regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", shape=(1,) * self.rank + (channels * self.depth_multiplier,
                                                           self.filters),
            initializer=self.pointwise_initializer, dtype=self._dtype,
            regularizer=self.pointwise_regularizer, constraint=self.pointwise_constraint)
        self.bias = (self.add_weight("bias", shape=(self.filters,),
                                     initializer=self.bias_initializer, dtype=self._dtype,
                                     regularizer=self.bias_regularizer,
                                     constraint=self.bias_constraint)
                     if self.use_bias else None)
        self.built = True

    def _convolve(self, inputs):
        fmt = "NHWC" if self.data_format == "channels_last" else "NCHW"
        dw, pw = self.depthwise_kernel, self.pointwise_kernel
        strides, dil = list(self.strides), list(self.dilation_rate)
        if self.rank == 1:
            axis = 1 if self.data_format == "channels_last" else 2
            inputs = A.expand_dims(inputs, axis)
            dw, pw = A.expand_dims(dw, 0), A.expand_dims(pw, 0)
            strides, dil = [1] + strides, [1] + dil
        full = [1] + strides + [1] if fmt == "NHWC" else [1, 1] + strides
        y = C.separable_conv2d(inputs, dw, pw, full, self.padding.upper(), data_format=fmt,
                               dilations=dil)
        if self.rank == 1:
            y = A.squeeze(y, [1 if self.data_format == "channels_last" else 2])
        return y

    def get_config(self):
        config = super().get_config()
        config.pop("groups")
        config["depth_multiplier"] = self.depth_multiplier
        config["depthwise_initializer"] = config.pop("kernel_initializer")
        config["depthwise_regularizer"] = config.pop("kernel_regularizer")
        config["depthwise_constraint"] = config.pop("kernel_constraint")
        config["pointwise_initializer"] = initializers.serialize(self.pointwise_initializer)
        config["pointwise_regularizer"] = regularizers_module.serialize(self.pointwise_regularizer)
        config["pointwise_constraint"] = constraints_module.serialize(self.pointwise_constraint)
        return config


class SeparableConv1D(_BaseSeparable):
    """A depthwise then a pointwise (1x1) convolution (1-D).

    >>> tf.keras.layers.SeparableConv1D(4, 3, padding="same")(tf.ones([1, 5, 3])).shape
    TensorShape([1, 5, 4])
    """
    rank = 1


class SeparableConv2D(_BaseSeparable):
    """A depthwise then a pointwise (1x1) convolution (2-D).

    >>> tf.keras.layers.SeparableConv2D(4, 3)(tf.ones([1, 5, 5, 3])).shape
    TensorShape([1, 3, 3, 4])
    """
    rank = 2


CLASSES = (Conv1D, Conv2D, Conv3D, Conv1DTranspose, Conv2DTranspose, Conv3DTranspose,
           DepthwiseConv1D, DepthwiseConv2D, SeparableConv1D, SeparableConv2D)
ALIASES = {"Convolution1D": Conv1D, "Convolution2D": Conv2D, "Convolution3D": Conv3D,
           "Convolution1DTranspose": Conv1DTranspose, "Convolution2DTranspose": Conv2DTranspose,
           "Convolution3DTranspose": Conv3DTranspose, "SeparableConvolution1D": SeparableConv1D,
           "SeparableConvolution2D": SeparableConv2D}

__all__ = [c.__name__ for c in CLASSES] + list(ALIASES)
