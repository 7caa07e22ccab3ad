"""Elementwise math: ``tapeflow.math.*`` (and the top-level aliases).

Each function keeps TensorFlow's signature and argument conventions; the
composites (``truediv``, ...) are built
from the same primitive ops TensorFlow uses, so their gradients, and which of
them are ``None``, come out the same.
"""
import numpy as np

from ..errors import InferError
from ..ir import dtypes as D
from ..ir.shapes import broadcast_shapes
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor, Variable, convert_to_tensor, wrap


def constant_like(value, x):
    """A scalar constant with the dtype of ``x`` (for use inside gradient rules)."""
    return wrap(np.asarray(value, dtype=x.dtype.np))


def _tensor(x, dtype_hint=None):
    """``x`` as a tensor (symbolic tensors of the tracer pass through; Variables are read)."""
    if isinstance(x, Tensor) or (hasattr(x, "aval") and not isinstance(x, Variable)):
        return x
    return convert_to_tensor(x, dtype_hint=dtype_hint)


# -- identity-like -------------------------------------------------------------------

def identity(input, name=None):
    return apply("Identity", [input])


def stop_gradient(input, name=None):
    """The value of ``input``, but no gradient flows through it."""
    return apply("StopGradient", [input])


def cast(x, dtype, name=None):
    """TF returns a Tensor or Variable of the right dtype as is (no op, nothing recorded)."""
    dtype = D.as_dtype(dtype)
    if isinstance(x, (Tensor, Variable)) and x.dtype == dtype:
        return x
    x = _tensor(x)
    if x.dtype == dtype:
        return x
    return apply("Cast", [x], {"dtype": dtype})


# -- arithmetic ----------------------------------------------------------------------

def add(x, y, name=None):
    return apply("Add", [x, y])


def subtract(x, y, name=None):
    return apply("Sub", [x, y])


def multiply(x, y, name=None):
    return apply("Mul", [x, y])


def scalar_mul(scalar, x, name=None):
    scalar = convert_to_tensor(scalar, dtype=x.dtype)
    if scalar.ndim != 0:
        raise ValueError(f"The input scalar must be a 0-D value. Received shape {scalar.shape}.")
    return apply("Mul", [scalar, x])


def realdiv(x, y, name=None):
    return apply("RealDiv", [x, y])


# TF's truediv casts small ints to float32 and wide ints to float64 before dividing.
_TRUEDIV_FLOAT = {D.int8: D.float32, D.int16: D.float32, D.uint8: D.float32,
                  D.int32: D.float64, D.int64: D.float64}


def truediv(x, y, name=None):
    """``x / y`` in floating point; ``x`` and ``y`` must share a dtype (TypeError otherwise).

    A Python ``x`` takes ``y``'s dtype when it can: TF converts it that way
    before calling truediv from ``y.__rtruediv__``, which lands here too.
    """
    x = _tensor(x, dtype_hint=getattr(y, "dtype", None))
    y = _tensor(y, dtype_hint=x.dtype)
    if x.dtype != y.dtype:
        raise TypeError(f"`x` and `y` must have the same dtype, got {x.dtype!r} != {y.dtype!r}.")
    if x.dtype.is_bool:
        raise TypeError(f"Invalid dtype {x.dtype!r} in __truediv__.")
    target = _TRUEDIV_FLOAT.get(x.dtype)
    if target is not None:
        x, y = cast(x, target), cast(y, target)
    return apply("RealDiv", [x, y])


def divide(x, y, name=None):
    """TF: converts ``x`` with ``y``'s dtype if ``x`` is not a tensor, then ``x / y``."""
    return truediv(x, y)


def floordiv(x, y, name=None):
    return apply("FloorDiv", [x, y])


def floormod(x, y, name=None):
    return apply("FloorMod", [x, y])


mod = floormod


def pow(x, y, name=None):
    return apply("Pow", [x, y])


def negative(x, name=None):
    return apply("Neg", [x])


def add_n(inputs, name=None):
    """Sum of same-shaped tensors; a single input is returned as is, like TF."""
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError("Inputs must be an iterable of at least one Tensor/IndexedSlices with the "
                         "same dtype and shape.")
    tensors = [_tensor(t) for t in inputs]
    if len(tensors) == 1:
        return tensors[0]
    return apply("AddN", tensors)


# -- unary ---------------------------------------------------------------------------

def _unary(op_name, fn_name, doc=None):
    def fn(x, name=None):
        return apply(op_name, [x])
    fn.__name__ = fn.__qualname__ = fn_name
    fn.__doc__ = doc
    return fn


square = _unary("Square", "square")
sqrt = _unary("Sqrt", "sqrt")
rsqrt = _unary("Rsqrt", "rsqrt")
reciprocal = _unary("Reciprocal", "reciprocal")
exp = _unary("Exp", "exp")
log = _unary("Log", "log")
log1p = _unary("Log1p", "log1p")
expm1 = _unary("Expm1", "expm1")
sin = _unary("Sin", "sin")
cos = _unary("Cos", "cos")
tan = _unary("Tan", "tan")
tanh = _unary("Tanh", "tanh")
sigmoid = _unary("Sigmoid", "sigmoid")
abs = _unary("Abs", "abs")
sign = _unary("Sign", "sign", "-1, 0 or 1; its gradient is zeros (not None), as in TF.")
floor = _unary("Floor", "floor", "Rounds down; its gradient is None, as in TF.")
erf = _unary("Erf", "erf")


def round(x, name=None):
    """Half to even, as TF; integer tensors are returned unchanged (TF does not run an op)."""
    x = _tensor(x)
    if x.dtype.is_integer:
        return x
    return apply("Round", [x])


def maximum(x, y, name=None):
    return apply("Maximum", [x, y])


def minimum(x, y, name=None):
    return apply("Minimum", [x, y])


def where(condition, x=None, y=None, name=None):
    """Elementwise select with three-way broadcasting (TF2's ``where``, op SelectV2)."""
    if x is None and y is None:
        raise NotImplementedError("tapeflow.where(condition) without x and y (indices of true "
                                  "elements) is not supported; pass x and y")
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return apply("SelectV2", [condition, x, y])


# TF's fused gradient kernels (tf.raw_ops), used by the gradient rules of Sqrt, Rsqrt, Reciprocal.

def sqrt_grad(y, dy):
    return apply("SqrtGrad", [y, dy])


def rsqrt_grad(y, dy):
    return apply("RsqrtGrad", [y, dy])


def reciprocal_grad(y, dy):
    return apply("ReciprocalGrad", [y, dy])


# -- comparisons and logic -----------------------------------------------------------

def less(x, y, name=None):
    return apply("Less", [x, y])


def less_equal(x, y, name=None):
    return apply("LessEqual", [x, y])


def greater(x, y, name=None):
    return apply("Greater", [x, y])


def greater_equal(x, y, name=None):
    return apply("GreaterEqual", [x, y])


def _broadcastable(x, y):
    shapes = [tuple(v.shape) if hasattr(v, "shape") else np.shape(v) for v in (x, y)]
    try:
        broadcast_shapes(*shapes)
    except InferError:
        return False
    return True


def equal(x, y, name=None, incompatible_shape_error=True):
    """With ``incompatible_shape_error=False`` (``Tensor.__eq__``), shapes that do not broadcast
    give a scalar False instead of an error."""
    if not incompatible_shape_error and not _broadcastable(x, y):
        return wrap(np.asarray(False))
    return apply("Equal", [x, y])


def not_equal(x, y, name=None, incompatible_shape_error=True):
    if not incompatible_shape_error and not _broadcastable(x, y):
        return wrap(np.asarray(True))
    return apply("NotEqual", [x, y])


def is_finite(x, name=None):
    return apply("IsFinite", [x])


def is_nan(x, name=None):
    return apply("IsNan", [x])


def is_inf(x, name=None):
    return apply("IsInf", [x])


def logical_and(x, y, name=None):
    return apply("LogicalAnd", [x, y])


def logical_or(x, y, name=None):
    return apply("LogicalOr", [x, y])


def logical_not(x, name=None):
    return apply("LogicalNot", [x])


__all__ = ["identity", "stop_gradient", "cast", "add", "subtract", "multiply", "scalar_mul",
           "realdiv", "truediv", "divide", "floordiv", "floormod", "mod", "pow", "negative",
           "add_n", "square", "sqrt", "rsqrt", "reciprocal", "exp", "log", "log1p", "expm1", "sin",
           "cos", "tan", "tanh", "sigmoid", "abs", "sign", "floor", "round", "erf", "maximum",
           "minimum", "where", "less", "less_equal", "greater",
           "greater_equal", "equal", "not_equal", "is_finite", "is_nan", "is_inf", "logical_and", "logical_or", "logical_not",
           "Variable"]
