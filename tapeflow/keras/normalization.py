"""Normalization layers: ``BatchNormalization`` (moments of the batch) and ``LayerNormalization``
(moments of each sample), in TensorFlow's op order so that float32 results agree.

The moving statistics of batch normalization are updated by ``assign`` with the tapes
paused, as TensorFlow's updates are not differentiable.
"""
import numpy as np

from ..ir import dtypes as D
from ..ops import array as A
from ..ops import math as M
from ..ops import reduce as R
from ..runtime.tensor import STATE_paused, TensorShape
from . import initializers
from .auto_config import OWN_INITS
from .layers import InputSpec, Layer

# -- BatchNormalization ------------------------------------------------------------------

def moments(x, axes, keepdims=False):
    """``tf.nn.moments``: mean, and the biased variance around a stop_gradient'ed mean."""
    mean = R.reduce_mean(x, axes, keepdims=True)
    sq = getattr(M, "squared_difference", None)
    centered = M.stop_gradient(mean)
    variance = R.reduce_mean(sq(x, centered) if sq else M.square(M.subtract(x, centered)),
                             axes, keepdims=True)
    if not keepdims:
        mean, variance = A.squeeze(mean, axes), A.squeeze(variance, axes)
    return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon):
    """``tf.nn.batch_normalization``, in TensorFlow's op order (so float32 results agree)."""
    inv = M.rsqrt(M.add(variance, variance_epsilon))
    if scale is not None:
        inv = M.multiply(inv, scale)
    shift = M.subtract(offset, M.multiply(mean, inv)) if offset is not None \
        else M.negative(M.multiply(mean, inv))
    return M.add(M.multiply(x, inv), shift)


def _validate_axis(axis, rank):
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"Invalid value for `axis` argument. Expected 0 <= axis < {rank}. "
                             f"Received: axis={axis}")
    axes = [a % rank for a in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"Duplicate axis: {tuple(axis) if isinstance(axis, list) else axis}")
    return axes


class BatchNormalization(Layer):
    """A layer normalizing its inputs by the batch's (or the moving) mean and variance.

    Normalizes with the batch's moments when training, with moving averages otherwise.

    With ``training=True`` the batch mean and variance are tapeflow ops, so the
    gradient (and jacobian) couples the examples of a batch, as in TensorFlow;
    the moving averages are then moved toward them, outside any gradient:
    ``moving -= (moving - batch) * (1 - momentum)``. 4-D/5-D inputs follow
    TensorFlow's fused kernel, whose moving variance uses the unbiased
    (n / (n - 1)) batch variance.

    Args:
      axis: the features axis (the last by default).
      momentum: the moving averages' momentum.
      epsilon: added to the variance before the square root.
      center, scale: learn an offset (beta) and a scale (gamma).

    >>> bn = tf.keras.layers.BatchNormalization()
    >>> x = tf.constant([[1.0], [3.0]])
    >>> bn(x, training=True)
    <tf.Tensor: shape=(2, 1), dtype=float32, numpy=
    array([[-0.9995004],
           [ 0.9995005]], dtype=float32)>
    >>> bn.moving_mean.numpy()
    array([0.02], dtype=float32)
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", moving_mean_initializer="zeros",
                 moving_variance_initializer="ones", beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, renorm=False, fused=None,
                 trainable=True, virtual_batch_size=None, adjustment=None, name=None, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        if not isinstance(axis, (list, tuple, int)):
            raise TypeError(f"Expected an int or a list/tuple of ints for the argument 'axis', but "
                            f"received: {axis!r}")
        if renorm or virtual_batch_size is not None or adjustment is not None or any(
                x is not None for x in (beta_regularizer, gamma_regularizer, beta_constraint,
                                        gamma_constraint)):
            raise NotImplementedError("tapeflow BatchNormalization does not support renorm, "
                                      "virtual batches, adjustment, regularizers or constraints yet")
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        self.momentum, self.epsilon = momentum, epsilon
        self.center, self.scale = center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        if fused is None and not self._fused_can_be_used():
            fused = False
        elif fused and not self._fused_can_be_used():
            raise ValueError("Passing `fused=True` is only supported when axis is 1 or 3 for input "
                             "rank = 4 or 1 or 4 for input rank = 5, with a float32 compute dtype. "
                             f"Got axis {self.axis}")
        self.fused = fused

    def _fused_can_be_used(self):
        axis = [self.axis] if isinstance(self.axis, int) else self.axis
        return len(axis) == 1 and axis[0] in (-4, -3, -1, 1, 3, 4) and self._dtype in (D.float16, D.float32)

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        rank = len(input_shape)
        self.axis = _validate_axis(self.axis, rank)
        if self.fused in (None, True):
            if self.fused and rank not in (4, 5):
                raise ValueError("Batch normalization layers with `fused=True` only support 4D or 5D "
                                 f"input tensors. Received tensor with shape: {tuple(input_shape)}")
            self.fused = rank in (4, 5)
        if self.fused:
            if self.axis == [1] or self.axis == [rank - 1]:
                pass
            elif rank == 5:
                self.fused = False
            else:
                raise ValueError("Unsupported axis. The use of `fused=True` is only possible with "
                                 f"`axis=1` or `axis=3` for 4D input tensors. Received: axis={tuple(self.axis)}")
        axis_to_dim = {a: input_shape[a] for a in self.axis}
        if any(d is None for d in axis_to_dim.values()):
            raise ValueError(f"Input has undefined `axis` dimension. Received input with shape "
                             f"{tuple(input_shape)} and axis={tuple(self.axis)}")
        self.input_spec = InputSpec(ndim=rank, axes=axis_to_dim)
        if len(axis_to_dim) == 1:
            param_shape = (next(iter(axis_to_dim.values())),)
        else:
            param_shape = tuple(axis_to_dim.get(i, 1) for i in range(rank))
        self._param_shape = param_shape
        dt = D.float32 if self._dtype == D.float16 else self._dtype  # fp16 layers keep fp32 params
        self.gamma = self.add_weight("gamma", param_shape, dt, self.gamma_initializer, trainable=True) \
            if self.scale else None
        self.beta = self.add_weight("beta", param_shape, dt, self.beta_initializer, trainable=True) \
            if self.center else None
        self.moving_mean = self.add_weight("moving_mean", param_shape, dt, self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", param_shape, dt,
                                               self.moving_variance_initializer, trainable=False)
        self.built = True

    def _training_value(self, training):
        """None means inference (Keras's learning phase 0); a frozen layer always infers."""
        if training is None or not self.trainable:
            return False
        return bool(training)

    def call(self, inputs, training=None):
        inputs = M.cast(inputs, self._dtype)
        training = self._training_value(training)
        ndims = inputs.shape.rank
        reduction_axes = [i for i in range(ndims) if i not in self.axis]
        broadcast_shape = [1] * ndims
        broadcast_shape[self.axis[0]] = inputs.shape[self.axis[0]]

        def broadcast(v):
            if v is not None and len(v.shape) != ndims and reduction_axes != list(range(ndims - 1)):
                return A.reshape(v, broadcast_shape)
            return v

        if self.fused:
            return self._fused_call(inputs, training, reduction_axes, broadcast)
        if training:
            mean, variance = moments(inputs, reduction_axes, keepdims=len(self.axis) > 1)
            self._assign_moving_average(self.moving_mean, mean)
            self._assign_moving_average(self.moving_variance, variance)
        else:
            mean, variance = self.moving_mean, self.moving_variance
        return batch_normalization(inputs, broadcast(mean), broadcast(variance), broadcast(self.beta),
                                   broadcast(self.gamma), self.epsilon)

    def _assign_moving_average(self, variable, value):
        """``variable -= (variable - value) * (1 - momentum)``, off the tapes."""
        decay = np.asarray(np.float32(1.0 - self.momentum), dtype=variable.dtype.np)
        with STATE_paused():
            delta = M.multiply(M.subtract(variable, M.cast(M.stop_gradient(value), variable.dtype)), decay)
            variable.assign_sub(delta)

    def _fused_call(self, inputs, training, reduction_axes, broadcast):
        """TensorFlow's FusedBatchNormV3 (4-D/5-D): same math, its moving-average formula."""
        epsilon = max(self.epsilon, 1.001e-5)
        gamma = self.gamma if self.scale else np.ones(self._param_shape, self._dtype.np)
        beta = self.beta if self.center else np.zeros(self._param_shape, self._dtype.np)
        if training:
            mean, variance = moments(inputs, reduction_axes)
            self._fused_moving_update(inputs, mean, variance)
        else:
            mean, variance = self.moving_mean, self.moving_variance
        scaling = M.multiply(M.rsqrt(M.add(variance, epsilon)), gamma)
        return M.add(M.multiply(M.subtract(inputs, broadcast(mean)), broadcast(scaling)), broadcast(beta))

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "momentum": self.momentum,
                "epsilon": self.epsilon, "center": self.center, "scale": self.scale,
                "beta_initializer": initializers.serialize(self.beta_initializer),
                "gamma_initializer": initializers.serialize(self.gamma_initializer),
                "moving_mean_initializer": initializers.serialize(self.moving_mean_initializer),
                "moving_variance_initializer": initializers.serialize(self.moving_variance_initializer),
                "beta_regularizer": None, "gamma_regularizer": None, "beta_constraint": None,
                "gamma_constraint": None}

    def _fused_moving_update(self, inputs, mean, variance):
        np_dtype = self.moving_mean.dtype.np
        rest = int(np.prod(inputs.shape)) // int(np.prod(self._param_shape))
        adjust = np_dtype.type(rest) / np_dtype.type(max(rest - 1, 1))
        factor = np_dtype.type(1.0 - self.momentum)
        keep = np_dtype.type(1) - factor
        with STATE_paused():
            mean, variance = M.stop_gradient(mean), M.stop_gradient(variance)
            self.moving_mean.assign(M.add(M.multiply(self.moving_mean, keep), M.multiply(mean, factor)))
            self.moving_variance.assign(M.add(M.multiply(self.moving_variance, keep),
                                              M.multiply(M.multiply(variance, adjust), factor)))



class LayerNormalization(Layer):
    """A layer normalizing each sample over ``axis`` (mean 0, variance 1), then ``* gamma + beta``.

    >>> tf.keras.layers.LayerNormalization()(tf.constant([[1.0, 3.0]]))
    <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[-0.9995004,  0.9995005]], dtype=float32)>
    """

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, rms_scaling=False,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        if rms_scaling or any(x is not None for x in (beta_regularizer, gamma_regularizer,
                                                      beta_constraint, gamma_constraint)):
            raise NotImplementedError("tapeflow's LayerNormalization has no rms_scaling, "
                                      "regularizers or constraints")
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        self.epsilon, self.center, self.scale = epsilon, center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)

    def build(self, input_shape):
        shape = TensorShape(input_shape)
        rank = len(shape)
        self._axes = sorted(_validate_axis(self.axis, rank))
        param_shape = [shape[a] for a in self._axes]
        self.gamma = self.add_weight("gamma", shape=param_shape, initializer=self.gamma_initializer,
                                     dtype=self._dtype, trainable=True) if self.scale else None
        self.beta = self.add_weight("beta", shape=param_shape, initializer=self.beta_initializer,
                                    dtype=self._dtype, trainable=True) if self.center else None
        self.built = True

    def call(self, inputs):
        rank = len(inputs.shape)
        broadcast = [inputs.shape[i] if i in self._axes else 1 for i in range(rank)]
        mean, variance = moments(inputs, self._axes, keepdims=True)
        gamma = None if self.gamma is None else A.reshape(self.gamma, broadcast)
        beta = None if self.beta is None else A.reshape(self.beta, broadcast)
        return batch_normalization(inputs, mean, variance, beta, gamma, self.epsilon)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale, "rms_scaling": False,
                "beta_initializer": initializers.serialize(self.beta_initializer),
                "gamma_initializer": initializers.serialize(self.gamma_initializer),
                "beta_regularizer": None, "gamma_regularizer": None, "beta_constraint": None,
                "gamma_constraint": None}



OWN_INITS.update({BatchNormalization.__init__, LayerNormalization.__init__})
CLASSES = (BatchNormalization, LayerNormalization)

__all__ = ["BatchNormalization", "LayerNormalization", "moments", "batch_normalization"]
