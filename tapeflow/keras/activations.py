"""``keras.activations``: Keras 3's activation functions, formula for formula (its TensorFlow
backend), with their keyword arguments; ``get``/``serialize``/``deserialize`` by name.

keras/__init__.py installs them as the functions ``activation="..."`` names."""
from ..ir import dtypes as D
from ..ops import array as A
from ..ops import clip as C
from ..ops import math as M
from ..ops import nn as N
from ..ops import reduce as R
from ..runtime.tensor import convert_to_tensor
from .config_dicts import get_by_identifier


def _t(x):
    x = convert_to_tensor(x)
    return x if x.dtype.is_floating else M.cast(x, D.float32)


def _c(value, like):
    return M.cast(value, like.dtype)


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """``max(x, 0)``, optionally leaky below ``threshold`` and capped at ``max_value``."""
    x = _t(x)
    if negative_slope != 0.0:
        if max_value is None and threshold == 0:
            return N.leaky_relu(x, alpha=negative_slope)
        negative_part = N.relu(M.add(M.negative(x), _c(threshold, x))) if threshold != 0 else N.relu(M.negative(x))
    clip_max = max_value is not None
    if threshold != 0:
        x = M.where(M.greater(x, _c(threshold, x)), x, M.multiply(x, _c(0, x)))
    elif max_value == 6:
        x, clip_max = N.relu6(x), False
    else:
        x = N.relu(x)
    if clip_max:
        x = C.clip_by_value(x, _c(0.0, x), _c(max_value, x))
    if negative_slope != 0.0:
        x = M.subtract(x, M.multiply(_c(negative_slope, x), negative_part))
    return x


def leaky_relu(x, negative_slope=0.2):
    return N.leaky_relu(_t(x), alpha=negative_slope)


def relu6(x):
    return N.relu6(_t(x))


def softmax(x, axis=-1):
    x = _t(x)
    if x.shape.rank is not None and x.shape.rank <= 1:
        raise ValueError(f"Cannot apply softmax to a tensor that is 1D. Received input: {x}")
    return N.softmax(x, axis=axis)


def elu(x, alpha=1.0):
    x = _t(x)
    res = N.elu(x)
    return res if alpha == 1 else M.where(M.greater(x, _c(0, x)), res, M.multiply(_c(alpha, x), res))


def selu(x):
    return N.selu(_t(x))


def softplus(x):
    return N.softplus(_t(x))


def softsign(x):
    return N.softsign(_t(x))


def soft_shrink(x, threshold=0.5):
    x = _t(x)
    t = _c(threshold, x)
    zero = M.multiply(x, _c(0, x))
    return M.where(M.greater(x, t), M.subtract(x, t), M.where(M.less(x, M.negative(t)), M.add(x, t), zero))


def sparse_plus(x):
    x = _t(x)
    zero = M.multiply(x, _c(0, x))
    quarter = M.multiply(_c(0.25, x), M.square(M.add(x, _c(1, x))))
    return M.where(M.less_equal(x, _c(-1, x)), zero, M.where(M.less(x, _c(1, x)), quarter, x))


def silu(x):
    x = _t(x)
    return M.multiply(x, M.sigmoid(x))


swish = silu


def squareplus(x, b=4):
    x = _t(x)
    return M.divide(M.add(x, M.sqrt(M.add(M.square(x), _c(b, x)))), _c(2, x))


def gelu(x, approximate=False):
    return N.gelu(_t(x), approximate=approximate)


def celu(x, alpha=1.0):
    x = _t(x)
    return M.add(M.maximum(x, _c(0.0, x)),
                 M.multiply(_c(alpha, x), M.expm1(M.divide(M.minimum(x, _c(0.0, x)), _c(alpha, x)))))


def glu(x, axis=-1):
    x = _t(x)
    if x.shape[axis] % 2 != 0:
        raise ValueError(f"axis size must be divisible by 2. Received: x.shape={tuple(x.shape)} with "
                         f"axis={axis}")
    x1, x2 = A.split(x, 2, axis=axis)
    return M.multiply(x1, M.sigmoid(x2))


def tanh(x):
    return M.tanh(_t(x))


def tanh_shrink(x):
    x = _t(x)
    return M.subtract(x, M.tanh(x))


def hard_tanh(x):
    x = _t(x)
    return C.clip_by_value(x, _c(-1.0, x), _c(1.0, x))


def hard_shrink(x, threshold=0.5):
    x = _t(x)
    return M.where(M.greater(M.abs(x), _c(threshold, x)), x, M.multiply(x, _c(0, x)))


def threshold(x, threshold, default_value):
    x = _t(x)
    return M.where(M.greater(x, _c(threshold, x)), x, M.add(M.multiply(x, _c(0, x)), _c(default_value, x)))


def sigmoid(x):
    return M.sigmoid(_t(x))


def exponential(x):
    return M.exp(_t(x))


def hard_sigmoid(x):
    """``relu6(x + 3) / 6``."""
    x = _t(x)
    return M.divide(N.relu6(M.add(x, _c(3.0, x))), _c(6.0, x))


def log_sigmoid(x):
    x = _t(x)
    return M.negative(N.softplus(M.negative(x)))


def sparse_sigmoid(x):
    x = _t(x)
    half = M.multiply(_c(0.5, x), M.add(x, _c(1, x)))
    return M.where(M.less_equal(x, _c(-1, x)), M.multiply(x, _c(0, x)),
                   M.where(M.greater_equal(x, _c(1, x)), M.add(M.multiply(x, _c(0, x)), _c(1, x)), half))


def hard_silu(x):
    x = _t(x)
    return M.multiply(x, hard_sigmoid(x))


hard_swish = hard_silu


def linear(x):
    return x


def mish(x):
    """``x * tanh(softplus(x))``."""
    x = _t(x)
    return M.multiply(x, M.tanh(N.softplus(x)))


def log_softmax(x, axis=-1):
    return N.log_softmax(_t(x), axis=axis)


def sparsemax(x, axis=-1):
    """The Euclidean projection of ``x`` onto the simplex (Martins & Astudillo)."""
    x = _t(x)
    if axis not in (-1, x.shape.rank - 1):
        perm = list(range(x.shape.rank))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        return A.transpose(sparsemax(A.transpose(x, perm), -1), perm)
    zi, zj = A.expand_dims(x, -1), A.expand_dims(x, -2)
    at_least = M.cast(M.greater_equal(zj, zi), x.dtype)          # [..., i, j]: z_j >= z_i
    k = R.reduce_sum(at_least, axis=-1)
    s = R.reduce_sum(M.multiply(at_least, zj), axis=-1)
    support = M.cast(M.greater(M.add(_c(1.0, x), M.multiply(k, x)), s), x.dtype)
    count = R.reduce_sum(support, axis=-1, keepdims=True)
    tau = M.divide(M.subtract(R.reduce_sum(M.multiply(support, x), axis=-1, keepdims=True), _c(1.0, x)), count)
    return M.maximum(M.subtract(x, tau), _c(0.0, x))


ALL = {f.__name__: f for f in (
    relu, leaky_relu, relu6, softmax, elu, selu, softplus, softsign, soft_shrink, sparse_plus, silu,
    squareplus, gelu, celu, glu, tanh, tanh_shrink, hard_tanh, hard_shrink, threshold, sigmoid,
    exponential, hard_sigmoid, log_sigmoid, sparse_sigmoid, hard_silu, linear, mish, log_softmax,
    sparsemax)}
ALL.update({"swish": silu, "hard_swish": hard_silu})


def serialize(activation):
    """The name of a Keras activation function."""
    name = getattr(activation, "__name__", None)
    if name in ALL and ALL[name] is activation:
        return name
    for key, fn in ALL.items():
        if fn is activation:
            return key
    if name is not None:
        return name
    raise ValueError(f"Unknown activation function '{activation}' cannot be serialized due to invalid "
                     f"function name. Make sure to use an activation name that matches the references "
                     f"defined in activations.py or use `@keras.saving.register_keras_serializable()`")


def deserialize(config, custom_objects=None):
    objects = dict(custom_objects or {})
    if isinstance(config, dict):
        config = config.get("config") if isinstance(config.get("config"), str) else config.get("class_name")
    if config in objects:
        return objects[config]
    if config in ALL:
        return ALL[config]
    raise ValueError(f"Unknown activation function '{config}'.")


def get(identifier):
    """The activation function an identifier names (None is ``linear``)."""
    return get_by_identifier(identifier, deserialize, "activation function", none=linear)


__all__ = sorted(ALL) + ["serialize", "deserialize", "get"]
