"""``keras.constraints``: projections the optimizer applies to a weight after each update
(``kernel_constraint=``)."""
from ..ops import clip as C
from ..ops import math as M
from ..ops import reduce as R
from ..runtime.tensor import convert_to_tensor
from . import settings
from .config_dicts import class_config, from_class_config, get_by_identifier


class Constraint:
    """Base class: ``constraint(w)`` is the projected weight."""

    def __call__(self, w):
        return w

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _norms(w, axis):
    return M.sqrt(R.reduce_sum(M.square(w), axis=axis, keepdims=True))


class MaxNorm(Constraint):
    """Rescale slices whose L2 norm along ``axis`` exceeds ``max_value``."""

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        w = convert_to_tensor(w)
        norms = _norms(w, self.axis)
        desired = C.clip_by_value(norms, M.cast(0, norms.dtype), M.cast(self.max_value, norms.dtype))
        return M.multiply(w, M.divide(desired, M.add(norms, settings.epsilon())))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """Negative entries become 0."""

    def __call__(self, w):
        w = convert_to_tensor(w)
        return M.maximum(w, M.cast(0, w.dtype))


class UnitNorm(Constraint):
    """Slices along ``axis`` rescaled to unit L2 norm."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        w = convert_to_tensor(w)
        return M.divide(w, M.add(_norms(w, self.axis), settings.epsilon()))

    def get_config(self):
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """Norms along ``axis`` moved (at ``rate``) into ``[min_value, max_value]``."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        w = convert_to_tensor(w)
        norms = _norms(w, self.axis)
        clipped = C.clip_by_value(norms, M.cast(self.min_value, norms.dtype), M.cast(self.max_value, norms.dtype))
        desired = M.add(M.multiply(self.rate, clipped), M.multiply(1 - self.rate, norms))
        return M.multiply(w, M.divide(desired, M.add(norms, settings.epsilon())))

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate,
                "axis": self.axis}


max_norm, non_neg, unit_norm, min_max_norm = MaxNorm, NonNeg, UnitNorm, MinMaxNorm
CLASSES = {c.__name__: c for c in (Constraint, MaxNorm, NonNeg, UnitNorm, MinMaxNorm)}
_NAMES = {"max_norm": MaxNorm, "non_neg": NonNeg, "unit_norm": UnitNorm, "min_max_norm": MinMaxNorm}


_ATTACHED = {}   # id of a Variable -> its constraint (tapeflow Variables have no constraint slot)


def attach(variable, constraint):
    """Make ``constraint`` the one the optimizer applies to ``variable`` after each update."""
    if constraint is None:
        _ATTACHED.pop(variable._id, None)
    else:
        _ATTACHED[variable._id] = constraint


def of(variable):
    """The constraint attached to ``variable``, or None."""
    return _ATTACHED.get(variable._id)


def serialize(constraint):
    if constraint is None:
        return None
    return class_config(constraint, "keras.constraints")


def deserialize(config, custom_objects=None):
    objects = dict(custom_objects or {})
    name = config if isinstance(config, str) else (config.get("class_name") if isinstance(config, dict) else None)
    cls = objects.get(name) or CLASSES.get(name) or _NAMES.get(name)
    if cls is None:
        raise ValueError(f"Could not interpret constraint identifier: {config}")
    return cls() if isinstance(config, str) else from_class_config(config, cls)


def get(identifier):
    return get_by_identifier(identifier, deserialize, "constraint")


__all__ = ["Constraint", "MaxNorm", "NonNeg", "UnitNorm", "MinMaxNorm", "max_norm", "non_neg",
           "unit_norm", "min_max_norm", "serialize", "deserialize", "get", "attach", "of"]
