"""Keras 3's ``GroupNormalization``, ``RMSNormalization`` and ``UnitNormalization``.

Each is Keras 3's arithmetic in tapeflow ops (the same order of operations, so float32
results agree to rounding): group statistics over the channels of a group and every
non-batch axis (``x * inv + (beta - mean * inv)``), ``x * rsqrt(mean(x^2) + eps) * scale``,
and ``x * min(rsqrt(sum(x^2)), 1e12)``.
"""
from ..ops import array as A
from ..ops import math as M
from ..ops import reduce as R
from ..runtime.tensor import TensorShape
from . import constraints as constraints_module
from . import initializers
from . import regularizers as regularizers_module
from .layers import InputSpec, Layer


class GroupNormalization(Layer):
    """Normalizes groups of channels (Wu & He 2018): ``groups`` groups along ``axis``;
    ``groups=-1`` is instance normalization, ``groups=1`` layer normalization over all axes.

    >>> layer = tf.keras.layers.GroupNormalization(groups=2)
    >>> layer(tf.constant([[1.0, 3.0, 2.0, 6.0]])).numpy().round(3)
    array([[-1.,  1., -1.,  1.]], dtype=float32)
    """

    supports_masking = True

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, **kwargs):
        if not isinstance(groups, int) or (groups <= 0 and groups != -1):
            raise ValueError(f"Received an invalid value for argument `groups`, expected a "
                             f"positive integer (or `-1` for instance normalization). "
                             f"Received: groups={groups}")
        super().__init__(**kwargs)
        self.beta_regularizer = regularizers_module.get(beta_regularizer)
        self.gamma_regularizer = regularizers_module.get(gamma_regularizer)
        self.beta_constraint = constraints_module.get(beta_constraint)
        self.gamma_constraint = constraints_module.get(gamma_constraint)
        self.groups, self.axis, self.epsilon = groups, axis, epsilon
        self.center, self.scale = center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)

    def build(self, input_shape):
        shape = TensorShape(input_shape)
        dim = shape[self.axis]
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension "
                             f"but the layer received an input with shape {tuple(shape)}.")
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the number "
                             f"of channels ({dim}).")
        if dim % self.groups != 0:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the "
                             f"number of channels ({dim}).")
        self.input_spec = InputSpec(ndim=len(shape), axes={self.axis: dim})
        self.gamma = (self.add_weight(name="gamma", shape=(dim,),
                                      initializer=self.gamma_initializer,
                                      regularizer=self.gamma_regularizer,
                                      constraint=self.gamma_constraint)
                      if self.scale else None)
        self.beta = (self.add_weight(name="beta", shape=(dim,),
                                     initializer=self.beta_initializer,
                                     regularizer=self.beta_regularizer,
                                     constraint=self.beta_constraint)
                     if self.center else None)
        self.built = True

    def call(self, inputs):
        rank = len(inputs.shape)
        dims = [d if d is not None else A.shape(inputs)[i] for i, d in enumerate(inputs.shape)]
        dim = inputs.shape[self.axis]
        group_shape = [-1] + dims[1:]
        group_shape[self.axis] = dim // self.groups
        group_shape.insert(self.axis, self.groups)
        x = A.reshape(inputs, group_shape)
        axes = list(range(1, len(group_shape)))
        axes.pop(-2 if self.axis == -1 else self.axis - 1)
        mean = R.reduce_mean(x, axis=axes, keepdims=True)
        variance = R.reduce_mean(M.square(M.subtract(x, mean)), axis=axes, keepdims=True)
        inv = M.rsqrt(M.add(variance, M.cast(self.epsilon, x.dtype)))
        broadcast = [1] * rank
        broadcast[self.axis] = dim // self.groups
        broadcast.insert(self.axis, self.groups)
        if self.scale:
            inv = M.multiply(inv, A.reshape(self.gamma, broadcast))
        res = M.multiply(M.negative(mean), inv)
        if self.center:
            res = M.add(res, A.reshape(self.beta, broadcast))
        out = M.add(M.multiply(x, inv), res)
        return A.reshape(out, A.shape(inputs) if any(d is None for d in inputs.shape)
                         else list(inputs.shape))

    def get_config(self):
        return {**super().get_config(), "groups": self.groups, "axis": self.axis,
                "epsilon": self.epsilon, "center": self.center, "scale": self.scale,
                "beta_initializer": initializers.serialize(self.beta_initializer),
                "gamma_initializer": initializers.serialize(self.gamma_initializer),
                "beta_regularizer": regularizers_module.serialize(self.beta_regularizer),
                "gamma_regularizer": regularizers_module.serialize(self.gamma_regularizer),
                "beta_constraint": constraints_module.serialize(self.beta_constraint),
                "gamma_constraint": constraints_module.serialize(self.gamma_constraint)}


class RMSNormalization(Layer):
    """Root-mean-square normalization (Zhang & Sennrich 2019):
    ``x * rsqrt(mean(x^2, axis) + epsilon) * scale``, ``scale`` a learned weight.

    >>> tf.keras.layers.RMSNormalization()(tf.constant([[3.0, 4.0]])).numpy().round(4)
    array([[0.8485, 1.1314]], dtype=float32)
    """

    def __init__(self, axis=-1, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.axis, self.epsilon = axis, epsilon

    def build(self, input_shape):
        shape = TensorShape(input_shape)
        if isinstance(self.axis, (list, tuple)):
            self.axis = sorted(self.axis)
            wshape = tuple(shape[d] for d in self.axis)
        else:
            wshape = (shape[self.axis],)
            self.axis = [self.axis]
        self.scale = self.add_weight(name="scale", shape=wshape, initializer="ones")
        self.built = True

    def call(self, x):
        rrms = M.rsqrt(M.add(R.reduce_mean(M.square(x), axis=self.axis, keepdims=True),
                             M.cast(self.epsilon, x.dtype)))
        return M.multiply(M.multiply(x, rrms), self.scale)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon}


class UnitNormalization(Layer):
    """Scales each vector along ``axis`` to unit L2 norm (Keras 3's).

    >>> tf.keras.layers.UnitNormalization()(tf.constant([[3.0, 4.0]])).numpy().tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """

    supports_masking = True

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError(f"Invalid value for `axis` argument: expected an int or a "
                            f"list/tuple of ints. Received: axis={axis}")
        self.built = True

    def call(self, inputs):
        if len(inputs.shape) == 0:
            inputs = A.expand_dims(inputs, 0)
        inv = M.rsqrt(R.reduce_sum(M.square(inputs), axis=self.axis, keepdims=True))
        inv = M.minimum(inv, M.cast(1e12, inputs.dtype))
        return M.multiply(inputs, inv)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


CLASSES = (GroupNormalization, RMSNormalization, UnitNormalization)

__all__ = [c.__name__ for c in CLASSES]
