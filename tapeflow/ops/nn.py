"""Neural-network functions: ``tapeflow.nn.*`` (TensorFlow's ``tf.nn`` signatures).

Activations and softmax are primitives; gelu, the cross entropies, l2_loss, dropout
and bias_add are composites built like TensorFlow's own Python wrappers.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import random as _random
from ..errors import InvalidArgumentError
from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor, Variable, convert_to_tensor
from . import array, math, reduce
from .creation import zeros_like
from .math import sigmoid, tanh


def _tensor(x, dtype=None):
    if isinstance(x, Tensor) or hasattr(x, "aval") and not isinstance(x, Variable):
        return x
    return convert_to_tensor(x, dtype=dtype)


def relu(features, name=None) -> Tensor:
    """``max(features, 0)``, elementwise.

    >>> tf.nn.relu(tf.constant([-1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 2.], dtype=float32)>
    """
    return apply("Relu", [features])


def relu6(features, name=None) -> Tensor:
    """``min(max(features, 0), 6)``, elementwise.

    >>> tf.nn.relu6(tf.constant([-1.0, 8.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 6.], dtype=float32)>
    """
    return apply("Relu6", [features])


def elu(features, name=None) -> Tensor:
    """``x`` where positive, ``exp(x) - 1`` elsewhere.

    >>> tf.nn.elu(tf.constant([-1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-0.6321206,  2.       ], dtype=float32)>
    """
    return apply("Elu", [features])


def selu(features, name=None) -> Tensor:
    """Scaled exponential linear unit: ``scale * elu(x)`` with SELU's constants.

    >>> tf.nn.selu(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.      , 1.050701], dtype=float32)>
    """
    return apply("Selu", [features])


def leaky_relu(features, alpha=0.2, name=None) -> Tensor:
    """``features`` where positive, ``alpha * features`` elsewhere.

    Integer features are cast to float32 first, as in TF.

    >>> tf.nn.leaky_relu(tf.constant([-1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-0.2,  2. ], dtype=float32)>
    """
    x = _tensor(features)
    if x.dtype.is_integer:
        x = math.cast(x, D.float32)
    if isinstance(alpha, np.ndarray):
        alpha = alpha.item()
    return apply("LeakyRelu", [x], {"alpha": float(alpha)})


def softplus(features, name=None) -> Tensor:
    """``log(1 + exp(features))``, elementwise.

    log(1 + exp(x)) without overflow: softplus(100.) is 100.

    >>> tf.nn.softplus(tf.constant([0.0, 100.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([  0.6931472, 100.       ], dtype=float32)>
    """
    return apply("Softplus", [features])


def softsign(features, name=None) -> Tensor:
    """``x / (1 + |x|)``, elementwise.

    >>> tf.nn.softsign(tf.constant([-1.0, 3.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-0.5 ,  0.75], dtype=float32)>
    """
    return apply("Softsign", [features])


def _axis(axis):
    if axis is None:
        return -1
    if hasattr(axis, "numpy"):
        axis = axis.numpy()
    return int(axis)


def softmax(logits, axis=None, name=None) -> Tensor:
    """``exp(logits) / sum(exp(logits))`` along ``axis`` (default: the last).

    >>> tf.nn.softmax(tf.constant([0.0, 0.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.5, 0.5], dtype=float32)>
    """
    return apply("Softmax", [logits], {"axis": _axis(axis)})


def log_softmax(logits, axis=None, name=None) -> Tensor:
    """``logits - log(sum(exp(logits)))`` along ``axis`` (default: the last).

    >>> tf.nn.log_softmax(tf.constant([0.0, 0.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-0.6931472, -0.6931472], dtype=float32)>
    """
    return apply("LogSoftmax", [logits], {"axis": _axis(axis)})


def gelu(features, approximate=False, name=None) -> Tensor:
    """Gaussian error linear unit: ``x * P(X <= x)`` for a standard normal X.

    TF's composite: erf form, or the tanh approximation when ``approximate``.

    >>> tf.nn.gelu(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.       , 0.8413447], dtype=float32)>
    """
    x = _tensor(features)
    if not x.dtype.is_floating:
        raise ValueError(f"`features.dtype` must be a floating point tensor. Received: features.dtype={x.dtype}")
    # The constants are Python floats, which take x's dtype: TensorFlow's
    # ``cast(1.4142135623730951, dtype)`` rounds through float32 first and leaves a float64
    # gelu 3.7e-9 off; float64 stays exact here.
    if approximate:
        inner = 0.7978845608028654 * (x + 0.044715 * math.pow(x, 3))
        return 0.5 * x * (1.0 + math.tanh(inner))
    return 0.5 * x * (1.0 + math.erf(x / 1.4142135623730951))


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None) -> Tensor:
    """Cross entropy of ``labels`` against ``softmax(logits)`` along ``axis``.

    -sum(labels * log_softmax(logits)) along ``axis``; labels take the logits' dtype.

    >>> tf.nn.softmax_cross_entropy_with_logits(tf.constant([[0.0, 1.0]]), tf.constant([[0.0, 0.0]]))
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([0.6931472], dtype=float32)>
    """
    logits = _tensor(logits)
    labels = math.cast(_tensor(labels), logits.dtype)
    return math.negative(reduce.reduce_sum(labels * log_softmax(logits, axis=axis), axis=axis))


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None) -> Tensor:
    """Cross entropy of integer ``labels`` against ``softmax(logits)``.

    Cross entropy against integer class ids: the log-softmax entry each label picks, negated.

    >>> tf.nn.sparse_softmax_cross_entropy_with_logits(tf.constant([1]), tf.constant([[0.0, 0.0]]))
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([0.6931472], dtype=float32)>
    """
    logits = _tensor(logits)
    labels = _tensor(labels)
    if logits.ndim == 0:
        raise ValueError(f"Logits cannot be scalars - received shape {list(logits.shape)}.")
    if labels.ndim != logits.ndim - 1:
        raise ValueError(f"Rank mismatch: Rank of labels (received {labels.ndim}) should equal rank of "
                         f"logits minus 1 (received {logits.ndim}).")
    if tuple(labels.shape) != tuple(logits.shape[:-1]):
        raise ValueError(f"Shape mismatch: The shape of labels (received {list(labels.shape)}) should "
                         f"equal the shape of logits except for the last dimension "
                         f"(received {list(logits.shape)}).")
    depth = logits.shape[-1]
    if isinstance(labels, Tensor):
        ids = np.asarray(labels.numpy())
        bad = (ids < 0) | (ids >= depth)
        if bad.any():
            raise InvalidArgumentError(f"Received a label value of {ids[bad].flat[0]} which is outside the "
                                       f"valid range of [0, {depth}).  Label values: {ids}")
    else:
        # traced: the values are known only when the program runs. Gathering the labels from
        # range(depth) is the identity on valid labels and raises InvalidArgumentError on any
        # other, on every backend, where a one-hot row of zeros would silently give a 0 loss.
        labels = array.gather(convert_to_tensor(np.arange(depth, dtype=labels.dtype.np)), labels)
    picked = array.one_hot(labels, depth, on_value=True, off_value=False, dtype=D.bool_)
    log_probs = log_softmax(logits)
    chosen = math.where(picked, log_probs, zeros_like(log_probs))
    return math.negative(reduce.reduce_sum(chosen, axis=-1))


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None) -> Tensor:
    """Binary cross entropy of ``labels`` against ``sigmoid(logits)``, elementwise.

    max(x, 0) - x * z + log1p(exp(-|x|)): TF's overflow-free form, built from the same ops.

    >>> tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.constant([1.0]), logits=tf.constant([0.0]))
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([0.6931472], dtype=float32)>
    """
    logits = _tensor(logits)
    labels = _tensor(labels, logits.dtype)
    if tuple(labels.shape) != tuple(logits.shape):
        raise ValueError(f"`logits` and `labels` must have the same shape, received "
                         f"({list(logits.shape)} vs {list(labels.shape)}).")
    zeros = zeros_like(logits)
    cond = math.greater_equal(logits, zeros)
    relu_logits = math.where(cond, logits, zeros)
    neg_abs_logits = math.where(cond, math.negative(logits), logits)
    return math.add(relu_logits - logits * labels, math.log1p(math.exp(neg_abs_logits)))


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None) -> Tensor:
    """``x`` divided by its L2 norm along ``axis``.

    x / sqrt(max(sum(x^2), epsilon)) along ``axis``.

    >>> tf.nn.l2_normalize(tf.constant([3.0, 4.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.6, 0.8], dtype=float32)>
    """
    x = _tensor(x)
    axis = dim if axis is None else axis
    square_sum = reduce.reduce_sum(math.square(x), axis, keepdims=True)
    return math.multiply(x, math.rsqrt(math.maximum(square_sum, epsilon)))


def l2_loss(t, name=None) -> Tensor:
    """Half the sum of squares of ``t``.

    sum(t ** 2) / 2.

    >>> tf.nn.l2_loss(tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=2.5>
    """
    t = _tensor(t)
    if not t.dtype.is_floating:
        raise InvalidArgumentError(f"L2Loss: t must be a floating point tensor, got {t.dtype.name}")
    return reduce.reduce_sum(math.square(t)) * math.constant_like(0.5, t)


def _noise_shape(x, noise_shape):
    if noise_shape is None:
        return tuple(x.shape)
    if hasattr(noise_shape, "numpy"):
        noise_shape = noise_shape.numpy().tolist()
    dims = list(noise_shape)
    if len(dims) == x.ndim:
        dims = [xd if d is None else d for d, xd in zip(dims, x.shape)]
    return tuple(int(d) for d in dims)


def dropout(x, rate, noise_shape=None, seed=None, name=None) -> Tensor:
    """Zero each element with probability ``rate`` and scale the rest by 1 / (1 - rate).

    The keep mask comes from ``tapeflow.random.uniform`` (so ``seed`` makes it repeatable);
    as in TF: ``x * scale * cast(uniform >= rate)``.

    Returns a tensor of ``x``'s shape; with ``rate=0.0`` it is ``x``:

    >>> tf.nn.dropout(tf.ones([4]), rate=0.0)
    <tf.Tensor: shape=(4,), dtype=float32, numpy=array([1., 1., 1., 1.], dtype=float32)>
    >>> tf.nn.dropout(tf.ones([1000]), rate=0.5, seed=1).shape
    TensorShape([1000])
    """
    if isinstance(rate, numbers.Real) and not isinstance(rate, bool) and not 0 <= rate < 1:
        raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={rate}")
    x = _tensor(x)
    if not x.dtype.is_floating:
        raise ValueError(f"`x.dtype` must be a floating point tensor as `x` will be scaled. Received: "
                         f"x_dtype={x.dtype}")
    if isinstance(rate, numbers.Real) and rate == 0:
        return x
    rate_value = float(np.asarray(rate))
    scaled = x * math.constant_like(1.0 / (1.0 - rate_value), x)
    noise = _random.uniform(_noise_shape(x, noise_shape), dtype=x.dtype, seed=seed)
    keep = math.cast(math.greater_equal(noise, math.constant_like(rate_value, noise)), x.dtype)
    return scaled * keep


def bias_add(value, bias, data_format=None, name=None) -> Tensor:
    """``value + bias`` with ``bias`` along the channel axis.

    value + bias along the channel axis (last, or 1 for 'NC...' formats).

    >>> tf.nn.bias_add(tf.zeros([2, 3]), tf.constant([1.0, 2.0, 3.0]))
    <tf.Tensor: shape=(2, 3), dtype=float32, numpy=
    array([[1., 2., 3.],
           [1., 2., 3.]], dtype=float32)>
    """
    value, bias = _tensor(value), _tensor(bias)
    if value.ndim < 2:
        raise InvalidArgumentError(f"BiasAdd: Input tensor must be at least 2D: {list(value.shape)}")
    if bias.ndim != 1:
        raise InvalidArgumentError(f"BiasAdd: Biases must be 1D: {list(bias.shape)}")
    channel_first = data_format is not None and data_format.startswith("NC")
    channels = value.shape[1] if channel_first else value.shape[-1]
    if bias.shape[0] != channels:
        raise InvalidArgumentError(f"BiasAdd: Must provide as many biases as the channel dimension of the "
                                   f"input tensor: {list(bias.shape)} vs. {list(value.shape)}")
    if channel_first:
        bias = array.reshape(bias, (channels,) + (1,) * (value.ndim - 2))
    return math.add(value, bias)


__all__ = ["relu", "relu6", "elu", "selu", "leaky_relu", "gelu", "softplus", "softsign", "softmax",
           "log_softmax", "sigmoid", "tanh", "softmax_cross_entropy_with_logits",
           "sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
           "l2_normalize", "l2_loss", "dropout", "bias_add"]
