"""Keras 3's pooling and spatial layers: ``MaxPooling1D/2D/3D``, ``AveragePooling1D/2D/3D``,
``GlobalMaxPooling1D/2D/3D``, ``GlobalAveragePooling1D/2D/3D`` (``keepdims``),
``UpSampling1D/2D/3D`` (nearest; bilinear for 2-D), ``ZeroPadding1D/2D/3D``,
``Cropping1D/2D/3D``, ``SpatialDropout1D/2D/3D``, and Keras' aliases (``MaxPool2D``, ...).

Pools are ``tf.nn.max_pool``/``avg_pool`` (ops/conv.py) with Keras' defaults (``strides``
None: the pool size; ``padding="valid"``); up-sampling repeats rows with a gather, so its
gradient sums them back; the spatial dropouts are ``Dropout`` with one draw per channel.
"""
import numpy as np

from ..ops import array as A
from ..ops import conv as C
from ..ops import math as M
from ..ops import reduce as R
from ..runtime.tensor import TensorShape
from .conv_layers import _tf_format, normalize_data_format, normalize_padding, normalize_tuple
from .core_layers import Dropout
from .layers import InputSpec, Layer


def _spatial_axes(rank, data_format):
    return list(range(1, rank + 1)) if data_format == "channels_last" else \
        list(range(2, rank + 2))


class _Pooling(Layer):
    rank = 2
    kind = "max"

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, name=None,
                 **kwargs):
        super().__init__(name=name, **kwargs)
        n = self.rank
        self.pool_size = normalize_tuple(pool_size, n, "pool_size")
        self.strides = self.pool_size if strides is None else normalize_tuple(strides, n, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=n + 2)

    def call(self, inputs):
        fmt = _tf_format(self.rank, self.data_format)
        fn = C.max_pool if self.kind == "max" else C.avg_pool
        return fn(inputs, list(self.pool_size), list(self.strides), self.padding.upper(),
                  data_format=fmt)

    def compute_output_shape(self, input_shape):
        shape = list(TensorShape(input_shape))
        for i, ax in enumerate(_spatial_axes(self.rank, self.data_format)):
            size, k, s = shape[ax], self.pool_size[i], self.strides[i]
            if size is not None:
                shape[ax] = (size + s - 1) // s if self.padding == "same" else (size - k) // s + 1
        return TensorShape(shape)

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "padding": self.padding,
                "strides": self.strides, "data_format": self.data_format}


class _AvgPooling(_Pooling):
    kind = "avg"

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, name=None,
                 **kwargs):
        """Keras 3's average pools take no default ``pool_size``."""
        super().__init__(pool_size, strides=strides, padding=padding, data_format=data_format,
                         name=name, **kwargs)


def _pool(name, rank, kind, doc):
    base = _Pooling if kind == "max" else _AvgPooling
    return type(name, (base,), {"rank": rank, "kind": kind, "__doc__": doc})


MaxPooling1D = _pool("MaxPooling1D", 1, "max", """Max pooling over windows of steps.

    >>> tf.keras.layers.MaxPooling1D()(tf.ones([1, 6, 2])).shape
    TensorShape([1, 3, 2])
    """)
MaxPooling2D = _pool("MaxPooling2D", 2, "max", """Max pooling over spatial windows.

    >>> tf.keras.layers.MaxPooling2D()(tf.reshape(tf.range(16.0), [1, 4, 4, 1]))[0, :, :, 0]
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[ 5.,  7.],
           [13., 15.]], dtype=float32)>
    """)
MaxPooling3D = _pool("MaxPooling3D", 3, "max", """Max pooling over 3-D windows.

    >>> tf.keras.layers.MaxPooling3D()(tf.ones([1, 4, 4, 4, 2])).shape
    TensorShape([1, 2, 2, 2, 2])
    """)
AveragePooling1D = _pool("AveragePooling1D", 1, "avg", """Average pooling over windows of steps.

    >>> tf.keras.layers.AveragePooling1D(2)(tf.constant([[[1.0], [3.0]]]))
    <tf.Tensor: shape=(1, 1, 1), dtype=float32, numpy=array([[[2.]]], dtype=float32)>
    """)
AveragePooling2D = _pool("AveragePooling2D", 2, "avg", """Average pooling over spatial windows.

    >>> tf.keras.layers.AveragePooling2D(2)(tf.ones([1, 4, 4, 3])).shape
    TensorShape([1, 2, 2, 3])
    """)
AveragePooling3D = _pool("AveragePooling3D", 3, "avg", """Average pooling over 3-D windows.

    >>> tf.keras.layers.AveragePooling3D(2, padding="same")(tf.ones([1, 3, 3, 3, 1])).shape
    TensorShape([1, 2, 2, 2, 1])
    """)


class _GlobalPooling(Layer):
    rank = 2
    kind = "max"

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = normalize_data_format(data_format)
        self.keepdims = bool(keepdims)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs, mask=None):
        axes = _spatial_axes(self.rank, self.data_format)
        if self.kind == "max":
            return R.reduce_max(inputs, axis=axes, keepdims=self.keepdims)
        if mask is not None and self.rank == 1:
            m = M.cast(mask, inputs.dtype)
            m = A.expand_dims(m, 2 if self.data_format == "channels_last" else 1)
            total = R.reduce_sum(M.multiply(inputs, m), axis=axes, keepdims=self.keepdims)
            return M.truediv(total, R.reduce_sum(m, axis=axes, keepdims=self.keepdims))
        return R.reduce_mean(inputs, axis=axes, keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        shape = list(TensorShape(input_shape))
        axes = _spatial_axes(self.rank, self.data_format)
        if self.keepdims:
            return TensorShape([1 if i in axes else d for i, d in enumerate(shape)])
        return TensorShape([d for i, d in enumerate(shape) if i not in axes])

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format,
                "keepdims": self.keepdims}


def _global(name, rank, kind):
    return type(name, (_GlobalPooling,), {
        "rank": rank, "kind": kind,
        "__doc__": f"The {'maximum' if kind == 'max' else 'mean'} over every spatial position "
                   f"({rank}-D); ``keepdims`` keeps them as size-1 axes.\n\n"
                   f"    >>> tf.keras.layers.{name}()(tf.ones([2{', 3' * rank}, 4])).shape\n"
                   f"    TensorShape([2, 4])\n    "})


GlobalMaxPooling1D = _global("GlobalMaxPooling1D", 1, "max")
GlobalMaxPooling2D = _global("GlobalMaxPooling2D", 2, "max")
GlobalMaxPooling3D = _global("GlobalMaxPooling3D", 3, "max")
GlobalAveragePooling1D = _global("GlobalAveragePooling1D", 1, "avg")
GlobalAveragePooling2D = _global("GlobalAveragePooling2D", 2, "avg")
GlobalAveragePooling3D = _global("GlobalAveragePooling3D", 3, "avg")


# -- up-sampling, padding, cropping ------------------------------------------------------

class _UpSampling(Layer):
    rank = 2

    def __init__(self, size=2, data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.size = normalize_tuple(size, self.rank, "size")
        self.data_format = normalize_data_format(data_format)
        if interpolation not in ("nearest", "bilinear") or \
                (interpolation == "bilinear" and self.rank != 2):
            allowed = '"nearest", "bilinear"' if self.rank == 2 else '"nearest"'
            raise ValueError(f"`interpolation` argument should be one of: {allowed}. "
                             f"Received: \"{interpolation}\".")
        self.interpolation = interpolation
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        x = inputs
        for i, ax in enumerate(_spatial_axes(self.rank, self.data_format)):
            n, k = int(x.shape[ax]), self.size[i]
            if self.interpolation == "nearest":
                x = A.gather(x, np.arange(n * k) // k, axis=ax)
            else:
                x = _bilinear_axis(x, ax, n, k)
        return x

    def compute_output_shape(self, input_shape):
        shape = list(TensorShape(input_shape))
        for i, ax in enumerate(_spatial_axes(self.rank, self.data_format)):
            if shape[ax] is not None:
                shape[ax] *= self.size[i]
        return TensorShape(shape)

    def get_config(self):
        config = {**super().get_config(), "size": self.size, "data_format": self.data_format}
        if self.rank == 2:
            config["interpolation"] = self.interpolation
        elif self.rank == 1:
            config = {k: v for k, v in config.items() if k != "data_format"}
            config["size"] = self.size[0]
        return config


def _bilinear_axis(x, axis, n, k):
    """Linear interpolation along one axis at half-pixel centres (tf.image.resize's
    ``bilinear``, separable per axis): source (i + 0.5) / k - 0.5, clamped at the edges."""
    src = np.maximum((np.arange(n * k) + 0.5) / k - 0.5, 0.0)
    lo = np.minimum(np.floor(src).astype(np.int64), n - 1)
    hi = np.minimum(lo + 1, n - 1)
    frac = (src - lo).astype(x.dtype.name)
    shape = [1] * len(x.shape)
    shape[axis] = n * k
    frac = A.reshape(frac, shape)
    a, b = A.gather(x, lo, axis=axis), A.gather(x, hi, axis=axis)
    return M.add(a, M.multiply(M.subtract(b, a), frac))


class UpSampling1D(_UpSampling):
    """Each step repeated ``size`` times.

    >>> tf.keras.layers.UpSampling1D(3)(tf.constant([[[1.0], [2.0]]]))[0, :, 0]
    <tf.Tensor: shape=(6,), dtype=float32, numpy=array([1., 1., 1., 2., 2., 2.], dtype=float32)>
    """
    rank = 1

    def __init__(self, size=2, **kwargs):
        super().__init__(size=size, **kwargs)


class UpSampling2D(_UpSampling):
    """Rows and columns repeated ``size`` times (or interpolated: ``"bilinear"``).

    >>> tf.keras.layers.UpSampling2D()(tf.reshape(tf.range(4.0), [1, 2, 2, 1]))[0, :, :, 0]
    <tf.Tensor: shape=(4, 4), dtype=float32, numpy=
    array([[0., 0., 1., 1.],
           [0., 0., 1., 1.],
           [2., 2., 3., 3.],
           [2., 2., 3., 3.]], dtype=float32)>
    """
    rank = 2


class UpSampling3D(_UpSampling):
    """Each spatial axis repeated ``size`` times (nearest).

    >>> tf.keras.layers.UpSampling3D()(tf.ones([1, 1, 2, 3, 4])).shape
    TensorShape([1, 2, 4, 6, 4])
    """
    rank = 3

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(size=size, data_format=data_format, **kwargs)


def _pairs(value, rank, name):
    """An int, ``rank`` ints or ``rank`` pairs as ``rank`` (before, after) pairs."""
    if isinstance(value, int):
        return ((value, value),) * rank
    value = tuple(value)
    if rank == 1 and len(value) == 2 and all(isinstance(v, int) for v in value):
        return (tuple(int(v) for v in value),)
    if len(value) != rank:
        raise ValueError(f"`{name}` should have {rank} elements. Received: {name}={value}.")
    out = []
    for v in value:
        if isinstance(v, int):
            out.append((v, v))
        else:
            v = tuple(int(a) for a in v)
            if len(v) != 2:
                raise ValueError(f"`{name}` should have two elements per axis. "
                                 f"Received: {name}={value}.")
            out.append(v)
    return tuple(out)


class _ZeroPadding(Layer):
    rank = 2

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.padding = _pairs(padding, self.rank, "padding")
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        pads = [[0, 0]] * (self.rank + 2)
        for p, ax in zip(self.padding, _spatial_axes(self.rank, self.data_format)):
            pads[ax] = list(p)
        return A.pad(inputs, pads)

    def compute_output_shape(self, input_shape):
        shape = list(TensorShape(input_shape))
        for (a, b), ax in zip(self.padding, _spatial_axes(self.rank, self.data_format)):
            if shape[ax] is not None:
                shape[ax] += a + b
        return TensorShape(shape)

    def get_config(self):
        config = {**super().get_config(), "padding": self.padding,
                  "data_format": self.data_format}
        if self.rank == 1:
            config["padding"] = self.padding[0]
        return config


class ZeroPadding1D(_ZeroPadding):
    """Zeros added before and after the steps.

    >>> tf.keras.layers.ZeroPadding1D((1, 2))(tf.ones([1, 2, 1]))[0, :, 0]
    <tf.Tensor: shape=(5,), dtype=float32, numpy=array([0., 1., 1., 0., 0.], dtype=float32)>
    """
    rank = 1

    def __init__(self, padding=1, **kwargs):
        super().__init__(padding=padding, **kwargs)


class ZeroPadding2D(_ZeroPadding):
    """Rows and columns of zeros around the image.

    >>> tf.keras.layers.ZeroPadding2D(((1, 0), (0, 2)))(tf.ones([1, 2, 2, 1])).shape
    TensorShape([1, 3, 4, 1])
    """
    rank = 2


class ZeroPadding3D(_ZeroPadding):
    """Zeros around each of the three spatial axes.

    >>> tf.keras.layers.ZeroPadding3D()(tf.ones([1, 1, 2, 3, 4])).shape
    TensorShape([1, 3, 4, 5, 4])
    """
    rank = 3


class _Cropping(Layer):
    rank = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.cropping = _pairs(cropping, self.rank, "cropping")
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        spec = [(None, None, 1)] * (self.rank + 2)
        for (a, b), ax in zip(self.cropping, _spatial_axes(self.rank, self.data_format)):
            size = inputs.shape[ax]
            if size is not None and a + b >= size:
                raise ValueError(f"Values in `cropping` argument should be smaller than the "
                                 f"corresponding spatial dimension of the input. Received: "
                                 f"input_shape={tuple(inputs.shape)}, cropping={self.cropping}")
            spec[ax] = (a, -b if b else None, 1)
        return A.strided_slice(inputs, tuple(spec))

    def compute_output_shape(self, input_shape):
        shape = list(TensorShape(input_shape))
        for (a, b), ax in zip(self.cropping, _spatial_axes(self.rank, self.data_format)):
            if shape[ax] is not None:
                shape[ax] -= a + b
        return TensorShape(shape)

    def get_config(self):
        config = {**super().get_config(), "cropping": self.cropping,
                  "data_format": self.data_format}
        if self.rank == 1:
            config.pop("data_format")
            config["cropping"] = self.cropping[0]
        return config


class Cropping1D(_Cropping):
    """Steps cut off at the start and the end.

    >>> tf.keras.layers.Cropping1D((1, 2))(tf.ones([1, 6, 2])).shape
    TensorShape([1, 3, 2])
    """
    rank = 1

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(cropping=cropping, **kwargs)


class Cropping2D(_Cropping):
    """Rows and columns cut off around the image.

    >>> tf.keras.layers.Cropping2D(((1, 0), (0, 2)))(tf.ones([1, 4, 4, 1])).shape
    TensorShape([1, 3, 2, 1])
    """
    rank = 2


class Cropping3D(_Cropping):
    """Cut off around each of the three spatial axes.

    >>> tf.keras.layers.Cropping3D()(tf.ones([1, 3, 4, 5, 1])).shape
    TensorShape([1, 1, 2, 3, 1])
    """
    rank = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(cropping=cropping, data_format=data_format, **kwargs)


class _SpatialDropout(Dropout):
    rank = 2

    def __init__(self, rate, seed=None, name=None, dtype=None, **kwargs):
        data_format = kwargs.pop("data_format", None)
        super().__init__(rate, seed=seed, name=name, dtype=dtype, **kwargs)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs, training=False):
        shape = list(inputs.shape)
        for ax in _spatial_axes(self.rank, self.data_format):
            shape[ax] = 1
        self.noise_shape = tuple(shape)
        try:
            return super().call(inputs, training=training)
        finally:
            self.noise_shape = None

    def get_config(self):
        config = {k: v for k, v in super().get_config().items() if k != "noise_shape"}
        if self.rank > 1:
            config["data_format"] = self.data_format
        return config


class SpatialDropout1D(_SpatialDropout):
    """Dropout of whole channels (one draw per sample and channel), for 1-D feature maps.

    >>> tf.keras.layers.SpatialDropout1D(0.5)(tf.ones([1, 3, 2]))  # inference: the identity
    <tf.Tensor: shape=(1, 3, 2), dtype=float32, numpy=
    array([[[1., 1.],
            [1., 1.],
            [1., 1.]]], dtype=float32)>
    """
    rank = 1


class SpatialDropout2D(_SpatialDropout):
    """Dropout of whole feature maps (one draw per sample and channel).

    >>> y = tf.keras.layers.SpatialDropout2D(0.5, seed=1)(tf.ones([1, 2, 2, 3]), training=True)
    >>> bool((y[0, 0, 0] == y[0, 1, 1]).numpy().all())
    True
    """
    rank = 2

    def __init__(self, rate, data_format=None, seed=None, name=None, dtype=None, **kwargs):
        super().__init__(rate, seed=seed, name=name, dtype=dtype, data_format=data_format,
                         **kwargs)


class SpatialDropout3D(SpatialDropout2D):
    """Dropout of whole 3-D feature maps.

    >>> tf.keras.layers.SpatialDropout3D(0.5)(tf.ones([1, 1, 1, 1, 2])).shape
    TensorShape([1, 1, 1, 1, 2])
    """
    rank = 3


CLASSES = (MaxPooling1D, MaxPooling2D, MaxPooling3D, AveragePooling1D, AveragePooling2D,
           AveragePooling3D, GlobalMaxPooling1D, GlobalMaxPooling2D, GlobalMaxPooling3D,
           GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalAveragePooling3D,
           UpSampling1D, UpSampling2D, UpSampling3D, ZeroPadding1D, ZeroPadding2D,
           ZeroPadding3D, Cropping1D, Cropping2D, Cropping3D, SpatialDropout1D,
           SpatialDropout2D, SpatialDropout3D)
ALIASES = {"MaxPool1D": MaxPooling1D, "MaxPool2D": MaxPooling2D, "MaxPool3D": MaxPooling3D,
           "AvgPool1D": AveragePooling1D, "AvgPool2D": AveragePooling2D,
           "AvgPool3D": AveragePooling3D, "GlobalMaxPool1D": GlobalMaxPooling1D,
           "GlobalMaxPool2D": GlobalMaxPooling2D, "GlobalMaxPool3D": GlobalMaxPooling3D,
           "GlobalAvgPool1D": GlobalAveragePooling1D, "GlobalAvgPool2D": GlobalAveragePooling2D,
           "GlobalAvgPool3D": GlobalAveragePooling3D}

__all__ = [c.__name__ for c in CLASSES] + list(ALIASES)
