"""Keras weight initializers (``tf.keras.initializers``), drawing from ``tapeflow.random``.

Random initializers use the process generator, so ``tapeflow.random.set_seed``
makes a model's initial weights repeatable; the values themselves differ from
TensorFlow's (different random streams), only the distributions match.
"""
import math

import numpy as np

from .. import random as _random
from ..ir import dtypes as D
from ..ops import creation
from ..runtime.tensor import constant as _tensor_constant
from .config_dicts import class_config


def _dtype(dtype):
    return D.as_dtype(dtype or D.float32)


def _shape(shape):
    return tuple(int(d) for d in shape)


def compute_fans(shape):
    """(fan_in, fan_out) of a weight shape, as Keras computes them (conv kernels included)."""
    shape = _shape(shape)
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = math.prod(shape[:-2])
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer:
    """Callable ``(shape, dtype=None) -> Tensor``."""

    def __call__(self, shape, dtype=None, **kwargs):
        raise NotImplementedError

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Zeros(Initializer):
    def __call__(self, shape, dtype=None, **kwargs):
        return creation.zeros(_shape(shape), _dtype(dtype))


class Ones(Initializer):
    def __call__(self, shape, dtype=None, **kwargs):
        return creation.ones(_shape(shape), _dtype(dtype))


class Constant(Initializer):
    def __init__(self, value=0):
        self.value = value

    def __call__(self, shape, dtype=None, **kwargs):
        return _tensor_constant(self.value, dtype=_dtype(dtype), shape=_shape(shape))

    def get_config(self):
        return {"value": self.value}


class RandomNormal(Initializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, **kwargs):
        return _random.normal(_shape(shape), self.mean, self.stddev, _dtype(dtype), self.seed)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class TruncatedNormal(RandomNormal):
    """Normal samples redrawn beyond two standard deviations."""

    def __call__(self, shape, dtype=None, **kwargs):
        return _random.truncated_normal(_shape(shape), self.mean, self.stddev, _dtype(dtype), self.seed)


class RandomUniform(Initializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None, **kwargs):
        return _random.uniform(_shape(shape), self.minval, self.maxval, _dtype(dtype), self.seed)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class VarianceScaling(Initializer):
    """Scale / fan (in, out or their average), as a truncated normal, normal or uniform."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        if scale <= 0.0:
            raise ValueError(f"`scale` must be positive float. Received: scale={scale}.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype=None, **kwargs):
        shape, dtype = _shape(shape), _dtype(dtype)
        fan_in, fan_out = compute_fans(shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, fan)
        if self.distribution == "truncated_normal":
            # std of a unit normal truncated to [-2, 2] (scipy.stats.truncnorm.std(-2, 2))
            stddev = math.sqrt(scale) / 0.87962566103423978
            return _random.truncated_normal(shape, 0.0, stddev, dtype, self.seed)
        if self.distribution == "untruncated_normal":
            return _random.normal(shape, 0.0, math.sqrt(scale), dtype, self.seed)
        limit = math.sqrt(3.0 * scale)
        return _random.uniform(shape, -limit, limit, dtype, self.seed)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed}


def _scaling(cls_name, scale, mode, distribution):
    def __init__(self, seed=None):
        VarianceScaling.__init__(self, scale, mode, distribution, seed)

    def get_config(self):
        return {"seed": self.seed}

    return type(cls_name, (VarianceScaling,), {"__init__": __init__, "get_config": get_config,
                                               "__doc__": f"VarianceScaling({scale}, {mode!r}, "
                                                          f"{distribution!r})."})


GlorotUniform = _scaling("GlorotUniform", 1.0, "fan_avg", "uniform")
GlorotNormal = _scaling("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
HeUniform = _scaling("HeUniform", 2.0, "fan_in", "uniform")
HeNormal = _scaling("HeNormal", 2.0, "fan_in", "truncated_normal")
LecunUniform = _scaling("LecunUniform", 1.0, "fan_in", "uniform")
LecunNormal = _scaling("LecunNormal", 1.0, "fan_in", "truncated_normal")

class Identity(Initializer):
    """``gain`` times the identity matrix (2D shapes only)."""

    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None, **kwargs):
        shape, dtype = _shape(shape), _dtype(dtype)
        if len(shape) != 2:
            raise ValueError(f"Identity matrix initializer can only be used for 2D matrices. Received: "
                             f"shape={shape} of rank {len(shape)}.")
        return _tensor_constant((np.eye(*shape) * self.gain).astype(dtype.np), dtype=dtype)

    def get_config(self):
        return {"gain": self.gain}


class Orthogonal(Initializer):
    """A random orthogonal matrix (the Q of a normal matrix's QR), times ``gain``."""

    def __init__(self, gain=1.0, seed=None):
        self.gain, self.seed = gain, seed

    def __call__(self, shape, dtype=None, **kwargs):
        shape, dtype = _shape(shape), _dtype(dtype)
        if len(shape) < 2:
            raise ValueError(f"The tensor to initialize must be at least two-dimensional. Received: "
                             f"shape={shape} of rank {len(shape)}.")
        rows = int(np.prod(shape[:-1]))
        cols = shape[-1]
        flat = (max(cols, rows), min(cols, rows))
        a = np.asarray(_random.normal(flat, 0.0, 1.0, dtype, self.seed).numpy(), np.float64)
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return _tensor_constant((self.gain * q).reshape(shape).astype(dtype.np), dtype=dtype)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


IdentityInitializer, OrthogonalInitializer = Identity, Orthogonal
zeros, ones, constant = Zeros, Ones, Constant
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
variance_scaling = VarianceScaling
glorot_uniform, glorot_normal, he_uniform, he_normal = GlorotUniform, GlorotNormal, HeUniform, HeNormal
lecun_uniform, lecun_normal = LecunUniform, LecunNormal
identity, orthogonal = Identity, Orthogonal

_BY_NAME = {
    "identity": Identity, "orthogonal": Orthogonal,
    "zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
    "random_uniform": RandomUniform, "truncated_normal": TruncatedNormal,
    "variance_scaling": VarianceScaling, "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal, "he_uniform": HeUniform, "he_normal": HeNormal,
    "lecun_uniform": LecunUniform, "lecun_normal": LecunNormal,
}
_BY_NAME.update({cls.__name__: cls for cls in list(_BY_NAME.values())})


def serialize(initializer):
    """Keras 3's form: ``{"module", "class_name", "config", "registered_name"}``."""
    if initializer is None:
        return None
    if not isinstance(initializer, Initializer) and callable(initializer) and hasattr(
            initializer, "__name__"):
        # a plain function (``tf.random.normal``): Keras 3 saves its name only, as here, and
        # cannot load it back (TypeError); tapeflow neither imports nor runs code from a file
        return {"module": "builtins", "class_name": "function",
                "config": getattr(initializer, "__name__"), "registered_name": "function"}
    if not isinstance(initializer, Initializer) or type(initializer).__name__ not in _BY_NAME:
        raise NotImplementedError(f"cannot serialize initializer {initializer!r}: only Keras' named "
                                  f"initializers can be saved")
    return class_config(initializer, "keras.initializers")


def deserialize(config):
    """The initializer ``serialize`` described; a dict naming an unknown class is a ValueError."""
    if not isinstance(config, dict) or not isinstance(config.get("class_name"), str):
        raise ValueError(f"initializer config must be a dict with a class_name: {config!r:.100}")
    if config["class_name"] == "function":
        raise TypeError(f"cannot load the initializer function {str(config.get('config')):.60}: "
                        f"a saved model stores only its name (as Keras 3 does), and tapeflow "
                        f"runs no code from a file. Build the model in Python and use "
                        f"load_weights.")
    cls = _BY_NAME.get(config["class_name"])
    inner = config.get("config", {})
    if cls is None or not isinstance(inner, dict):
        raise ValueError(f"Unknown initializer: '{config['class_name']:.60}'.")
    return cls.from_config(inner)


def get(identifier):
    """An initializer from a name ('glorot_uniform' or 'GlorotUniform'), an instance or a callable."""
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, type):
        return identifier()
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    raise ValueError(f"Unknown initializer: '{identifier}'. Please ensure you are using a "
                     f"`keras.utils.custom_object_scope` and that this object is included in the scope.")


__all__ = ["Identity", "IdentityInitializer", "Orthogonal", "OrthogonalInitializer", "zeros", "ones",
           "constant", "random_normal", "random_uniform", "truncated_normal", "variance_scaling",
           "glorot_uniform", "glorot_normal", "he_uniform", "he_normal", "lecun_uniform", "lecun_normal",
           "identity", "orthogonal", "Initializer", "Zeros", "Ones", "Constant", "RandomNormal", "RandomUniform",
           "TruncatedNormal", "VarianceScaling", "GlorotUniform", "GlorotNormal", "HeUniform",
           "HeNormal", "LecunUniform", "LecunNormal", "get", "serialize", "deserialize"]
