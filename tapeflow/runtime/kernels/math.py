"""NumPy kernels of the elementwise math ops (the eager reference semantics).

Kernels run with floating-point warnings silenced: TensorFlow returns inf/NaN
for ``log(0)`` or ``1/0`` without a word, and so do we. Where NumPy's result
differs from TensorFlow's (float floor division, the sign of a zero
remainder, integer division by zero) the kernel follows TensorFlow.
"""
import functools

import numpy as np

from ..registry import kernel


def _scipy_special(name):
    """SciPy's ufunc ``name``, imported on first use: ``scipy.special`` takes a quarter of a
    second to import, a third of ``import tapeflow``, and most programs never call it."""
    def run(*args):
        from scipy import special  # lazy: see above
        return getattr(special, name)(*args)
    run.__name__ = name
    return run


def _quiet(fn):
    @functools.wraps(fn)
    def run(*args, **kw):
        with np.errstate(all="ignore"):
            return fn(*args, **kw)
    return run


def _elementwise(name, fn):
    kernel(name)(_quiet(fn))


def _is_int(a):
    return np.asarray(a).dtype.kind in "iu"


def _check_int_divisor(x, y):
    if _is_int(x) and np.any(np.asarray(y) == 0):
        raise ValueError("Integer division by zero")


def _floordiv(x, y):
    """TF: floor(x / y) for floats (NumPy's fmod-based floor_divide can differ by one)."""
    _check_int_divisor(x, y)
    return np.floor_divide(x, y) if _is_int(x) else np.floor(np.true_divide(x, y))


def _floormod(x, y):
    """TF: fmod, then shifted by y when the signs differ (a zero keeps x's sign)."""
    _check_int_divisor(x, y)
    if _is_int(x):
        return np.mod(x, y)
    r = np.fmod(x, y)
    return np.where((r != 0) & ((y < 0) != (r < 0)), r + y, r)


def _no_nan_where_dy_is_zero(fn):
    """TF's sqrt/rsqrt/reciprocal gradient kernels give 0 where dy is 0, even if y is 0 or inf."""
    def grad(y, dy):
        return np.where(dy == 0, np.zeros_like(dy), fn(y, dy))
    return grad


def _add_n(*xs):
    total = xs[0]
    for x in xs[1:]:
        total = np.add(total, x)
    return total


for _name, _fn in {
    "Identity": lambda x: x,
    "StopGradient": lambda x: x,
    "Cast": lambda x, dtype: np.asarray(x).astype(dtype.np),
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "RealDiv": np.true_divide,
    "FloorDiv": _floordiv, "FloorMod": _floormod, "Pow": np.power, "AddN": _add_n,
    "Maximum": np.maximum, "Minimum": np.minimum,
    "Neg": np.negative, "Square": np.square, "Abs": np.abs, "Sign": np.sign,
    "Sqrt": np.sqrt, "Rsqrt": lambda x: 1 / np.sqrt(x), "Reciprocal": np.reciprocal,
    "Exp": np.exp, "Log": np.log, "Log1p": np.log1p, "Expm1": np.expm1,
    "Sin": np.sin, "Cos": np.cos, "Tan": np.tan, "Tanh": np.tanh,
    "Sigmoid": _scipy_special("expit"), "Erf": _scipy_special("erf"),
    "Floor": np.floor, "Round": np.round,  # np.round rounds half to even, as TF does
    "Less": np.less, "LessEqual": np.less_equal, "Greater": np.greater,
    "GreaterEqual": np.greater_equal, "Equal": np.equal, "NotEqual": np.not_equal,
    "LogicalAnd": np.logical_and, "LogicalOr": np.logical_or, "LogicalNot": np.logical_not,
    "IsFinite": np.isfinite, "IsNan": np.isnan, "IsInf": np.isinf,
    "SelectV2": np.where,
    "SqrtGrad": _no_nan_where_dy_is_zero(lambda y, dy: (0.5 * dy) / y),
    "RsqrtGrad": _no_nan_where_dy_is_zero(lambda y, dy: -0.5 * (dy * y) * (y * y)),
    "ReciprocalGrad": _no_nan_where_dy_is_zero(lambda y, dy: -y * y * dy),
}.items():
    _elementwise(_name, _fn)
