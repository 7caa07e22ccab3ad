"""Keras 3's other non-convolutional, non-recurrent layers: activation layers (LeakyReLU, PReLU,
ELU), the merge layers and their functional forms (Multiply, Subtract, Average, Maximum,
Minimum, Dot; ``add``, ``concatenate``, ...), reshaping (Permute, RepeatVector), noise
(GaussianNoise, GaussianDropout, AlphaDropout, SpatialDropout*), Rescaling, Identity,
ActivityRegularization and Normalization (with ``adapt``)."""
import math

import numpy as np

from ..ir import dtypes as D
from ..ops import array as A
from ..ops import linalg as L
from ..ops import math as M
from ..ops import nn as N
from ..ops import reduce as R
from ..runtime.tensor import STATE_paused, TensorShape, convert_to_tensor
from . import constraints as constraints_module
from . import initializers
from . import regularizers as regularizers_module
from . import settings
from .core_layers import Add, Concatenate, _merge_inputs
from .layers import Layer
from .random_bits import SeedGenerator


class LeakyReLU(Layer):
    """``x`` for ``x >= 0``, ``negative_slope * x`` below.

    >>> tf.keras.layers.LeakyReLU(negative_slope=0.5)(tf.constant([[-2.0, 3.0]]))
    <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[-1.,  3.]], dtype=float32)>
    """

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
        super().__init__(**kwargs)
        if negative_slope is None or negative_slope < 0:
            raise ValueError(f"The negative_slope value of a Leaky ReLU layer cannot be None or "
                             f"negative value. Expected a float. Received: negative_slope={negative_slope}")
        self.negative_slope = negative_slope
        self.built = True

    def call(self, inputs):
        return N.leaky_relu(inputs, alpha=self.negative_slope)

    def get_config(self):
        return {**super().get_config(), "negative_slope": self.negative_slope}


class ELU(Layer):
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` below.

    >>> tf.keras.layers.ELU()(tf.constant([[0.0, 1.0]])).numpy().tolist()
    [[0.0, 1.0]]
    """

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha
        self.built = True

    def call(self, inputs):
        res = N.elu(inputs)
        return res if self.alpha == 1 else M.where(M.greater(inputs, M.cast(0, inputs.dtype)), res,
                                                   M.multiply(M.cast(self.alpha, inputs.dtype), res))

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


class ThresholdedReLU(Layer):
    """``x`` where ``x > theta``, else 0.

    >>> tf.keras.layers.ThresholdedReLU(theta=1.0)(tf.constant([[0.5, 2.0]])).numpy().tolist()
    [[0.0, 2.0]]
    """

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        if theta is None or theta < 0:
            raise ValueError(f"The theta value of a Thresholded ReLU layer cannot be None or negative "
                             f"value. Expected a float. Received: theta={theta}")
        self.theta = theta

    def call(self, inputs):
        return M.multiply(inputs, M.cast(M.greater(inputs, M.cast(self.theta, inputs.dtype)), inputs.dtype))

    def get_config(self):
        return {**super().get_config(), "theta": self.theta}


class PReLU(Layer):
    """Leaky ReLU with a learned slope per unit (shared along ``shared_axes``).

    >>> layer = tf.keras.layers.PReLU(alpha_initializer=tf.keras.initializers.Constant(0.5))
    >>> layer(tf.constant([[-2.0, 2.0]])).numpy().tolist()
    [[-1.0, 2.0]]
    """

    def __init__(self, alpha_initializer="Zeros", alpha_regularizer=None, alpha_constraint=None,
                 shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers_module.get(alpha_regularizer)
        self.alpha_constraint = constraints_module.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        else:
            self.shared_axes = list(shared_axes) if isinstance(shared_axes, (list, tuple)) else [shared_axes]

    def build(self, input_shape):
        shape = list(TensorShape(input_shape))[1:]
        for axis in self.shared_axes or []:
            shape[axis - 1] = 1
        self.alpha = self.add_weight(shape=shape, name="alpha", initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer, constraint=self.alpha_constraint)
        self.built = True

    def call(self, inputs):
        pos = N.relu(inputs)
        neg = M.multiply(M.negative(self.alpha), N.relu(M.negative(inputs)))
        return M.add(pos, neg)

    def get_config(self):
        return {**super().get_config(), "alpha_initializer": initializers.serialize(self.alpha_initializer),
                "alpha_regularizer": regularizers_module.serialize(self.alpha_regularizer),
                "alpha_constraint": constraints_module.serialize(self.alpha_constraint),
                "shared_axes": self.shared_axes}


def _fold(fn):
    def call(self, inputs):
        inputs = _merge_inputs(self, inputs)
        out = inputs[0]
        for x in inputs[1:]:
            out = fn(out, x)
        return out
    return call


class Multiply(Layer):
    """The elementwise product of a list of inputs.

    >>> tf.keras.layers.Multiply()([tf.constant([[2.0]]), tf.constant([[3.0]])])
    <tf.Tensor: shape=(1, 1), dtype=float32, numpy=array([[6.]], dtype=float32)>
    """
    call = _fold(M.multiply)


class Maximum(Layer):
    """The elementwise maximum of a list of inputs.

    >>> tf.keras.layers.Maximum()([tf.constant([[1.0, 5.0]]), tf.constant([[3.0, 4.0]])]).numpy().tolist()
    [[3.0, 5.0]]
    """
    call = _fold(M.maximum)


class Minimum(Layer):
    """The elementwise minimum of a list of inputs.

    >>> tf.keras.layers.Minimum()([tf.constant([[1.0, 5.0]]), tf.constant([[3.0, 4.0]])]).numpy().tolist()
    [[1.0, 4.0]]
    """
    call = _fold(M.minimum)


class Subtract(Layer):
    """``inputs[0] - inputs[1]`` (exactly two inputs).

    >>> tf.keras.layers.Subtract()([tf.constant([[5.0]]), tf.constant([[3.0]])]).numpy().tolist()
    [[2.0]]
    """

    def call(self, inputs):
        inputs = _merge_inputs(self, inputs)
        if len(inputs) != 2:
            raise ValueError(f"A `Subtract` layer should be called on exactly 2 inputs. Received: "
                             f"inputs={inputs}")
        return M.subtract(inputs[0], inputs[1])


class Average(Layer):
    """The elementwise mean of a list of inputs.

    >>> tf.keras.layers.Average()([tf.constant([[1.0]]), tf.constant([[3.0]])]).numpy().tolist()
    [[2.0]]
    """

    def call(self, inputs):
        inputs = _merge_inputs(self, inputs)
        out = inputs[0]
        for x in inputs[1:]:
            out = M.add(out, x)
        return M.divide(out, M.cast(len(inputs), out.dtype))


class Dot(Layer):
    """Dot products of two inputs along ``axes`` (cosine proximity with ``normalize``).

    >>> tf.keras.layers.Dot(axes=1)([tf.constant([[1.0, 2.0]]), tf.constant([[3.0, 4.0]])]).numpy().tolist()
    [[11.0]]
    """

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, (int, list, tuple)):
            raise TypeError(f"Invalid type for argument `axes`: it should be a list or an int. "
                            f"Received: axes={axes}")
        self.axes, self.normalize = axes, normalize

    def call(self, inputs):
        inputs = _merge_inputs(self, inputs)
        if len(inputs) != 2:
            raise ValueError(f"A `Dot` layer should be called on exactly 2 inputs. Received: inputs={inputs}")
        x1, x2 = inputs
        axes = [self.axes, self.axes] if isinstance(self.axes, int) else list(self.axes)
        axes = [a % len(x.shape) if a < 0 else a for a, x in zip(axes, (x1, x2))]
        if self.normalize:
            x1 = N.l2_normalize(x1, axis=axes[0])
            x2 = N.l2_normalize(x2, axis=axes[1])
        out = L.tensordot(x1, x2, [[axes[0]], [axes[1]]]) if len(x1.shape) == 1 else _batch_dot(x1, x2, axes)
        return out

    def get_config(self):
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


def _batch_dot(x, y, axes):
    """Keras' ``batch_dot`` for the common ranks: contract ``axes`` sample by sample."""
    xr, yr = len(x.shape), len(y.shape)
    x_perm = [0] + [i for i in range(1, xr) if i != axes[0]] + [axes[0]]
    y_perm = [0, axes[1]] + [i for i in range(1, yr) if i != axes[1]]
    xt, yt = A.transpose(x, x_perm), A.transpose(y, y_perm)
    x_free, y_free = list(xt.shape[1:-1]), list(yt.shape[2:])
    xm = A.reshape(xt, [-1, max(1, int(np.prod(x_free))) if x_free else 1, xt.shape[-1]])
    ym = A.reshape(yt, [-1, yt.shape[1], max(1, int(np.prod(y_free))) if y_free else 1])
    out = L.matmul(xm, ym)
    shape = [-1] + x_free + y_free
    out = A.reshape(out, shape if len(shape) > 1 else [-1])
    if len(out.shape) == 1:
        out = A.expand_dims(out, -1)
    return out


class Permute(Layer):
    """Reorder the non-batch axes by ``dims`` (1-based).

    >>> tf.keras.layers.Permute((2, 1))(tf.zeros((1, 2, 3))).shape
    TensorShape([1, 3, 2])
    """

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Invalid permutation argument `dims` for Permute Layer. The set of indices "
                             f"in `dims` must be consecutive and start from 1. Received dims={dims}")

    def call(self, inputs):
        return A.transpose(inputs, (0,) + self.dims)

    def compute_output_shape(self, input_shape):
        shape = list(TensorShape(input_shape))
        return TensorShape([shape[0]] + [shape[d] for d in self.dims])

    def get_config(self):
        return {**super().get_config(), "dims": self.dims}


class RepeatVector(Layer):
    """``(batch, features)`` to ``(batch, n, features)``.

    >>> tf.keras.layers.RepeatVector(3)(tf.zeros((1, 2))).shape
    TensorShape([1, 3, 2])
    """

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, int):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        self.n = n

    def call(self, inputs):
        if len(inputs.shape) != 2:
            raise ValueError(f"Input of RepeatVector must be 2D. Received: {tuple(inputs.shape)}")
        return A.tile(A.expand_dims(inputs, 1), [1, self.n, 1])

    def get_config(self):
        return {**super().get_config(), "n": self.n}


class Rescaling(Layer):
    """``inputs * scale + offset``.

    >>> tf.keras.layers.Rescaling(1.0 / 255)(tf.constant([[255.0, 51.0]])).numpy().tolist()
    [[1.0, 0.20000001788139343]]
    """

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    def call(self, inputs):
        dtype = self._dtype
        inputs = M.cast(inputs, dtype)
        return M.add(M.multiply(inputs, M.cast(convert_to_tensor(self.scale), dtype)),
                     M.cast(convert_to_tensor(self.offset), dtype))

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


class Identity(Layer):
    """Its input, unchanged.

    >>> tf.keras.layers.Identity()(tf.constant([[1.0, 2.0]])).numpy().tolist()
    [[1.0, 2.0]]
    """

    def call(self, inputs):
        return inputs


class ActivityRegularization(Layer):
    """The identity, adding an L1/L2 penalty of its output to ``losses``.

    >>> layer = tf.keras.layers.ActivityRegularization(l1=0.1)
    >>> layer(tf.constant([[1.0, -2.0]])).numpy().tolist()
    [[1.0, -2.0]]
    >>> [round(float(v), 4) for v in layer.losses]
    [0.3]
    """

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers_module.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = l1, l2

    def call(self, inputs):
        return inputs

    def get_config(self):
        config = super().get_config()
        config.pop("activity_regularizer", None)
        return {**config, "l1": self.l1, "l2": self.l2}


def _normal(generator, shape, dtype):
    """Standard normal draws from two uniform draws (Box-Muller)."""
    u1 = generator.uniform(shape, D.float32)
    u2 = generator.uniform(shape, D.float32)
    radius = M.sqrt(M.multiply(-2.0, M.log(M.maximum(u1, 1e-12))))
    return M.cast(M.multiply(radius, M.cos(M.multiply(2.0 * math.pi, u2))), dtype)


class _Noise(Layer):
    def __init__(self, rate=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        object.__setattr__(self, "seed_generator", SeedGenerator(seed))
        self.built = True


class GaussianNoise(_Noise):
    """Adds ``N(0, stddev)`` noise while training.

    >>> tf.keras.layers.GaussianNoise(0.1)(tf.constant([[1.0, 2.0]])).numpy().tolist()
    [[1.0, 2.0]]
    """

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        if not 0 <= stddev:
            raise ValueError(f"Invalid value received for argument `stddev`. Expected a float value "
                             f"greater than 0. Received: stddev={stddev}")
        self.stddev = stddev

    def call(self, inputs, training=False):
        if not training or self.stddev == 0:
            return inputs
        noise = _normal(self.seed_generator, tuple(inputs.shape), inputs.dtype)
        return M.add(inputs, M.multiply(noise, M.cast(self.stddev, inputs.dtype)))

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}


class GaussianDropout(_Noise):
    """Multiplies by ``N(1, rate / (1 - rate))`` noise while training.

    >>> tf.keras.layers.GaussianDropout(0.5)(tf.constant([[1.0, 2.0]])).numpy().tolist()
    [[1.0, 2.0]]
    """

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value "
                             f"between 0 and 1. Received: rate={rate}")
        self.rate = rate

    def call(self, inputs, training=False):
        if not training or not 0 < self.rate < 1:
            return inputs
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        noise = M.add(M.multiply(_normal(self.seed_generator, tuple(inputs.shape), inputs.dtype),
                                 M.cast(stddev, inputs.dtype)), M.cast(1.0, inputs.dtype))
        return M.multiply(inputs, noise)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}


class AlphaDropout(_Noise):
    """Dropout that keeps SELU's self-normalizing mean and variance while training.

    >>> tf.keras.layers.AlphaDropout(0.2)(tf.constant([[1.0, 2.0]])).numpy().tolist()
    [[1.0, 2.0]]
    """

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value "
                             f"between 0 and 1. Received: rate={rate}")
        self.rate, self.noise_shape = rate, noise_shape

    def call(self, inputs, training=False):
        if not training or not 0 < self.rate < 1:
            return inputs
        alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
        alpha_p = -alpha * scale
        shape = tuple(inputs.shape) if self.noise_shape is None else tuple(
            s if n is None else n for n, s in zip(self.noise_shape, inputs.shape))
        keep = M.cast(M.greater_equal(self.seed_generator.uniform(shape, D.float32), self.rate), inputs.dtype)
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        dropped = M.add(M.multiply(inputs, keep), M.multiply(M.subtract(1.0, keep), M.cast(alpha_p, inputs.dtype)))
        return M.add(M.multiply(M.cast(a, inputs.dtype), dropped), M.cast(b, inputs.dtype))

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed, "noise_shape": self.noise_shape}


class _SpatialDropout(_Noise):
    _rank = 1

    def __init__(self, rate, seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.rate, self.data_format = rate, data_format or settings.image_data_format()

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        shape = list(inputs.shape)
        if self._rank == 1 or self.data_format == "channels_last":
            noise = [shape[0]] + [1] * self._rank + [shape[-1]]
        else:
            noise = [shape[0], shape[1]] + [1] * self._rank
        keep = M.cast(M.greater_equal(self.seed_generator.uniform(tuple(noise), inputs.dtype),
                                      M.cast(self.rate, inputs.dtype)), inputs.dtype)
        return M.multiply(M.multiply(inputs, M.cast(1.0 / (1.0 - self.rate), inputs.dtype)), keep)

    def get_config(self):
        config = {**super().get_config(), "rate": self.rate, "seed": self.seed}
        if self._rank > 1:
            config["data_format"] = self.data_format
        return config


class SpatialDropout1D(_SpatialDropout):
    """Dropout of whole channels of ``(batch, steps, channels)`` inputs.

    >>> tf.keras.layers.SpatialDropout1D(0.5)(tf.ones((1, 2, 2))).numpy().tolist()
    [[[1.0, 1.0], [1.0, 1.0]]]
    """
    _rank = 1

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)


class SpatialDropout2D(_SpatialDropout):
    """Dropout of whole feature maps of 4D inputs.

    >>> tf.keras.layers.SpatialDropout2D(0.5)(tf.ones((1, 1, 1, 2))).numpy().tolist()
    [[[[1.0, 1.0]]]]
    """
    _rank = 2


class SpatialDropout3D(_SpatialDropout):
    """Dropout of whole feature volumes of 5D inputs.

    >>> tf.keras.layers.SpatialDropout3D(0.5)(tf.ones((1, 1, 1, 1, 2))).numpy().tolist()
    [[[[[1.0, 1.0]]]]]
    """
    _rank = 3


class Normalization(Layer):
    """``(x - mean) / sqrt(variance)`` per feature along ``axis``; ``adapt(data)`` learns the
    mean and variance from data (arrays or a dataset), or give them.

    >>> layer = tf.keras.layers.Normalization()
    >>> layer.adapt([[1.0], [3.0]])
    >>> layer(tf.constant([[1.0], [3.0]])).numpy().tolist()
    [[-1.0], [1.0]]
    """

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        self.axis = (axis,) if isinstance(axis, int) else tuple(axis)
        if (mean is None) != (variance is None):
            raise ValueError(f"When setting values directly, both `mean` and `variance` must be set. "
                             f"Received: mean={mean} and variance={variance}")
        self.input_mean, self.input_variance, self.invert = mean, variance, invert

    def build(self, input_shape):
        shape = list(TensorShape(input_shape))
        ndim = len(shape)
        self._keep_axis = sorted(a % ndim for a in self.axis)
        self._broadcast_shape = [shape[d] if d in self._keep_axis else 1 for d in range(ndim)]
        mean_shape = [shape[d] for d in self._keep_axis]
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(name="mean", shape=mean_shape, initializer="zeros", trainable=False)
            self.adapt_variance = self.add_weight(name="variance", shape=mean_shape, initializer="ones",
                                                  trainable=False)
            self.mean = A.reshape(self.adapt_mean.value(), self._broadcast_shape)
            self.variance = A.reshape(self.adapt_variance.value(), self._broadcast_shape)
        else:
            self.mean = A.broadcast_to(convert_to_tensor(np.asarray(self.input_mean, np.float32)),
                                       self._broadcast_shape)
            self.variance = A.broadcast_to(convert_to_tensor(np.asarray(self.input_variance, np.float32)),
                                           self._broadcast_shape)
        self.built = True

    def adapt(self, data, batch_size=None, steps=None):
        """Set the mean and variance to those of ``data`` (population variance)."""
        if hasattr(data, "as_numpy_iterator"):
            batches = [np.asarray(b) for b in data.as_numpy_iterator()]
            array = np.concatenate([b if b.ndim else b[None] for b in batches])
        else:
            array = np.asarray(data.numpy() if hasattr(data, "numpy") else data)
        array = array.astype(np.float64)
        if array.ndim == 1 and self.axis == (-1,):
            array = array[:, None]
        if not self.built:
            with STATE_paused():
                self.build(array.shape)
        reduce_axes = tuple(d for d in range(array.ndim) if d not in self._keep_axis)
        mean = array.mean(axis=reduce_axes)
        variance = array.var(axis=reduce_axes)
        self.adapt_mean.assign(mean.astype(np.float32))
        self.adapt_variance.assign(variance.astype(np.float32))
        self.finalize_state()

    def finalize_state(self):
        if self.input_mean is None and self.built:
            self.mean = A.reshape(self.adapt_mean.value(), self._broadcast_shape)
            self.variance = A.reshape(self.adapt_variance.value(), self._broadcast_shape)

    def call(self, inputs):
        inputs = M.cast(inputs, self._dtype)
        if self.input_mean is None:
            mean = A.reshape(self.adapt_mean, self._broadcast_shape)
            variance = A.reshape(self.adapt_variance, self._broadcast_shape)
        else:
            mean, variance = self.mean, self.variance
        mean, variance = M.cast(mean, inputs.dtype), M.cast(variance, inputs.dtype)
        std = M.maximum(M.sqrt(variance), M.cast(settings.epsilon(), inputs.dtype))
        if self.invert:
            return M.add(mean, M.multiply(inputs, std))
        return M.divide(M.subtract(inputs, mean), std)

    def get_config(self):
        to_list = (lambda v: None if v is None else np.asarray(v).tolist())
        return {**super().get_config(), "axis": list(self.axis) if len(self.axis) != 1 else self.axis[0],
                "invert": self.invert, "mean": to_list(self.input_mean),
                "variance": to_list(self.input_variance)}


def _functional(cls, doc):
    def merge(inputs, **kwargs):
        return cls(**kwargs)(inputs)
    merge.__doc__ = doc
    return merge


add = _functional(Add, """The functional form of ``Add``: ``add([a, b])``.

    >>> tf.keras.layers.add([tf.constant([[1.0]]), tf.constant([[2.0]])]).numpy().tolist()
    [[3.0]]
    """)
subtract = _functional(Subtract, """The functional form of ``Subtract``.

    >>> tf.keras.layers.subtract([tf.constant([[2.0]]), tf.constant([[3.0]])]).numpy().tolist()
    [[-1.0]]
    """)
multiply = _functional(Multiply, """The functional form of ``Multiply``.

    >>> tf.keras.layers.multiply([tf.constant([[2.0]]), tf.constant([[3.0]])]).numpy().tolist()
    [[6.0]]
    """)
average = _functional(Average, """The functional form of ``Average``.

    >>> tf.keras.layers.average([tf.constant([[1.0]]), tf.constant([[2.0]])]).numpy().tolist()
    [[1.5]]
    """)
maximum = _functional(Maximum, """The functional form of ``Maximum``.

    >>> tf.keras.layers.maximum([tf.constant([[1.0]]), tf.constant([[2.0]])]).numpy().tolist()
    [[2.0]]
    """)
minimum = _functional(Minimum, """The functional form of ``Minimum``.

    >>> tf.keras.layers.minimum([tf.constant([[1.0]]), tf.constant([[2.0]])]).numpy().tolist()
    [[1.0]]
    """)


def concatenate(inputs, axis=-1, **kwargs):
    """The functional form of ``Concatenate``.

    >>> tf.keras.layers.concatenate([tf.constant([[1.0]]), tf.constant([[2.0]])]).numpy().tolist()
    [[1.0, 2.0]]
    """
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes=-1, **kwargs):
    """The functional form of ``Dot``.

    >>> tf.keras.layers.dot([tf.constant([[1.0, 2.0]]), tf.constant([[3.0, 4.0]])], axes=1).numpy().tolist()
    [[11.0]]
    """
    return Dot(axes=axes, **kwargs)(inputs)


for _f, _name in ((add, "add"), (subtract, "subtract"), (multiply, "multiply"), (average, "average"),
                  (maximum, "maximum"), (minimum, "minimum")):
    _f.__name__ = _name

CLASSES = (LeakyReLU, ELU, ThresholdedReLU, PReLU, Multiply, Maximum, Minimum, Subtract, Average, Dot,
           Permute, RepeatVector, Rescaling, Identity, ActivityRegularization, GaussianNoise,
           GaussianDropout, AlphaDropout, SpatialDropout1D, SpatialDropout2D, SpatialDropout3D,
           Normalization)
FUNCTIONS = (add, subtract, multiply, average, maximum, minimum, concatenate, dot)

__all__ = [c.__name__ for c in CLASSES] + [f.__name__ for f in FUNCTIONS] + ["CLASSES", "FUNCTIONS"]
