"""``keras.regularizers``: penalties on weights (``kernel_regularizer=``) or outputs
(``activity_regularizer=``) that layers add to ``model.losses`` and so to ``fit``'s loss."""
import math

from ..ops import linalg as L
from ..ops import math as M
from ..ops import reduce as R
from ..runtime.tensor import convert_to_tensor
from . import settings
from .config_dicts import class_config, from_class_config, get_by_identifier


def validate_float_arg(value, name):
    if (not isinstance(value, (float, int)) or math.isinf(value) or math.isnan(value) or value < 0):
        raise ValueError(f"Invalid value for argument {name}: expected a non-negative float."
                         f"Received: {name}={value}")
    return float(value)


class Regularizer:
    """Base class: ``regularizer(weight)`` is a scalar penalty."""

    def __call__(self, x):
        return 0.0

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_config(self):
        raise NotImplementedError(f"{self} does not implement get_config()")


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x ** 2)``."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = validate_float_arg(0.0 if l1 is None else l1, name="l1")
        self.l2 = validate_float_arg(0.0 if l2 is None else l2, name="l2")

    def __call__(self, x):
        x = convert_to_tensor(x)
        out = M.cast(0.0, x.dtype)
        if self.l1 != 0.0:
            out = M.add(out, M.multiply(M.cast(self.l1, x.dtype), R.reduce_sum(M.abs(x))))
        if self.l2 != 0.0:
            out = M.add(out, M.multiply(M.cast(self.l2, x.dtype), R.reduce_sum(M.square(x))))
        return out

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(Regularizer):
    """``l1 * sum(|x|)``."""

    def __init__(self, l1=0.01):
        self.l1 = validate_float_arg(0.01 if l1 is None else l1, name="l1")

    def __call__(self, x):
        x = convert_to_tensor(x)
        return M.multiply(M.cast(self.l1, x.dtype), R.reduce_sum(M.abs(x)))

    def get_config(self):
        return {"l1": float(self.l1)}


class L2(Regularizer):
    """``l2 * sum(x ** 2)``."""

    def __init__(self, l2=0.01):
        self.l2 = validate_float_arg(0.01 if l2 is None else l2, name="l2")

    def __call__(self, x):
        x = convert_to_tensor(x)
        return M.multiply(M.cast(self.l2, x.dtype), R.reduce_sum(M.square(x)))

    def get_config(self):
        return {"l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """``factor`` times the mean absolute cosine between distinct rows (or columns)."""

    def __init__(self, factor=0.01, mode="rows"):
        self.factor = validate_float_arg(factor, name="factor")
        if mode not in {"rows", "columns"}:
            raise ValueError(f'Invalid value for argument `mode`. Expected one of {{"rows", "columns"}}. '
                             f"Received: mode={mode}")
        self.mode = mode

    def __call__(self, inputs):
        inputs = convert_to_tensor(inputs)
        if len(inputs.shape) != 2:
            raise ValueError(f"Inputs to OrthogonalRegularizer must have rank 2. Received: "
                             f"inputs.shape={tuple(inputs.shape)}")
        axis = 1 if self.mode == "rows" else 0
        norm = M.sqrt(R.reduce_sum(M.square(inputs), axis=axis, keepdims=True))
        inputs = M.divide(inputs, M.maximum(norm, settings.epsilon()))
        if self.mode == "rows":
            product, size = L.matmul(inputs, inputs, transpose_b=True), inputs.shape[0]
        else:
            product, size = L.matmul(inputs, inputs, transpose_a=True), inputs.shape[1]
        off_diagonal = M.multiply(product, M.subtract(1.0, L.eye(size, dtype=inputs.dtype)))
        pairs = size * (size - 1.0) / 2.0
        return M.divide(M.multiply(self.factor * 0.5, R.reduce_sum(M.abs(off_diagonal))), pairs)

    def get_config(self):
        return {"factor": float(self.factor), "mode": self.mode}


l1, l2, l1_l2, orthogonal_regularizer = L1, L2, L1L2, OrthogonalRegularizer
CLASSES = {c.__name__: c for c in (Regularizer, L1, L2, L1L2, OrthogonalRegularizer)}
_NAMES = {"l1": L1, "l2": L2, "l1_l2": L1L2, "l1l2": L1L2, "orthogonal_regularizer": OrthogonalRegularizer}


def serialize(regularizer):
    if regularizer is None:
        return None
    return class_config(regularizer, "keras.regularizers")


def deserialize(config, custom_objects=None):
    objects = dict(custom_objects or {})
    if isinstance(config, str):
        cls = objects.get(config) or CLASSES.get(config) or _NAMES.get(config)
        if cls is None:
            raise ValueError(f"Could not interpret regularizer identifier: {config}")
        return cls()
    name = config.get("class_name") if isinstance(config, dict) else None
    cls = objects.get(name) or CLASSES.get(name) or _NAMES.get(name)
    if cls is None:
        raise ValueError(f"Could not interpret regularizer identifier: {config}")
    return from_class_config(config, cls)


def get(identifier):
    """A regularizer from None, a name ('l2'), a config dict, or a callable."""
    return get_by_identifier(identifier, deserialize, "regularizer")


__all__ = ["Regularizer", "L1", "L2", "L1L2", "OrthogonalRegularizer", "l1", "l2", "l1_l2",
           "orthogonal_regularizer", "serialize", "deserialize", "get"]
