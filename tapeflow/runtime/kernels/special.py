"""NumPy kernels of the special functions (ir/defs/special.py), with TensorFlow's values.

SciPy computes the functions; where TensorFlow's Eigen kernels define a point differently
the kernel follows TensorFlow: ``digamma`` is NaN at the poles, ``lgamma(-inf)`` is inf,
``igamma(a, 0)`` is 0 for every ``a``, ``betainc`` is NaN for ``a <= 0``, ``polygamma`` of
a non-integer order is NaN, ``erfinv`` is ``ndtri((x + 1) / 2) / sqrt(2)`` as Eigen computes
it, and ``bessel_i0``/``bessel_i1`` are ``exp(|x|)`` times the scaled functions (so inf
gives NaN, as in TF).
"""
import math

import numpy as np

from ..registry import kernel
from .math import _check_int_divisor, _quiet, _scipy_special


def _in_dtype(fn):
    """The result in the inputs' dtype (SciPy computes float16 in float32)."""
    def run(*args):
        dtype = np.result_type(*args)
        return np.asarray(fn(*args)).astype(dtype, copy=False)
    run.__name__ = getattr(fn, "__name__", "kernel")
    return run


def _sp(name):
    return _scipy_special(name)


def _nan_where(cond, value):
    return np.where(cond, np.asarray(np.nan, dtype=np.result_type(value)), value)


def _lgamma(x):
    return np.where(x == -np.inf, np.inf, _sp("gammaln")(x)).astype(np.asarray(x).dtype)


def _digamma(x):
    x = np.asarray(x)
    pole = ((x <= 0) & (x == np.floor(x))) | (x == -np.inf)
    return _nan_where(pole, _sp("psi")(x)).astype(x.dtype)


def _erfinv(x):
    x = np.asarray(x)
    half = np.asarray(0.5, x.dtype)
    return (_sp("ndtri")(half * (x + 1)) * np.sqrt(half)).astype(x.dtype)


def _scaled_times_exp(scaled):
    def run(x):
        x = np.asarray(x)
        return (np.exp(np.abs(x)) * _sp(scaled)(x)).astype(x.dtype)
    return run


def _zero_where_x_is_zero(fn):
    """xlogy, xlog1py, xdivy: 0 wherever x is 0, whatever y is (NaN included)."""
    def run(x, y):
        return np.where(x == 0, np.zeros_like(np.asarray(x) * y), fn(x, y))
    return run


def _truncatediv(x, y):
    _check_int_divisor(x, y)
    if np.asarray(x).dtype.kind in "iu":
        q = np.floor_divide(x, y)
        return q + ((q < 0) & (q * y != x)).astype(q.dtype)
    return np.trunc(np.true_divide(x, y))


def _truncatemod(x, y):
    _check_int_divisor(x, y)
    return np.fmod(x, y)


def _igamma(a, x):
    """P(a, x): 0 at x == 0 for every a (even NaN), NaN for x < 0 or a <= 0."""
    out = _nan_where((x < 0) | (a <= 0), _sp("gammainc")(a, x))
    return np.where(x == 0, np.zeros_like(out), out).astype(np.result_type(a, x))


def _igammac(a, x):
    out = _nan_where((x < 0) | (a <= 0), _sp("gammaincc")(a, x))
    return np.where((x == 0) & (a > 0), np.ones_like(out), out).astype(np.result_type(a, x))


def igamma_grad_a_scalar(a, x):
    """dP(a, x)/da from the series P = sum_n exp((a+n) log x - x - lgamma(a+n+1)): each term
    times (log x - digamma(a+n+1)). The same sum as the compiled helper (codegen/special_math)."""
    from scipy import special  # lazy: see math._scipy_special
    if not (a > 0 and x > 0) or math.isinf(x):
        return 0.0 if (x == 0 or math.isinf(x)) and a > 0 else math.nan
    logx = math.log(x)
    log_term = a * logx - x - math.lgamma(a + 1)
    psi = float(special.psi(a + 1))
    total, n = 0.0, 0
    while n < 100000:
        term = math.exp(log_term) * (logx - psi)
        total += term
        if n > x and abs(term) <= 1e-17 * abs(total):
            break
        n += 1
        log_term += logx - math.log(a + n)
        psi += 1.0 / (a + n)
    return total


def _igamma_grad_a(a, x):
    out = np.vectorize(igamma_grad_a_scalar, otypes=[np.float64])(a, x)
    return out.astype(np.result_type(a, x))


def _zeta(x, q):
    out = _sp("zeta")(x, q)
    out = np.where(x == 1, np.inf, _nan_where((x < 1) | np.isnan(x) | np.isnan(q), out))
    pole = (q <= 0) & (q == np.floor(q)) & (x > 1)
    return np.where(pole, np.inf, out).astype(np.result_type(x, q))


def _polygamma(n, x):
    n, x = np.broadcast_arrays(np.asarray(n), np.asarray(x))
    order = n + 1
    factorial = np.exp(_sp("gammaln")(order))
    sign = np.where(np.fmod(order, 2) == 0, 1.0, -1.0)
    out = np.where(n == 0, _digamma(x), sign * factorial * _zeta(order, x))
    return _nan_where((n != np.floor(n)) | (n < 0), out).astype(np.result_type(n, x))


def _betainc(a, b, x):
    bad = (a <= 0) | (b <= 0) | (x < 0) | (x > 1)
    return _nan_where(bad, _sp("betainc")(a, b, x)).astype(np.result_type(a, b, x))


for _name, _fn in {
    "Asin": np.arcsin, "Acos": np.arccos, "Atan": np.arctan, "Sinh": np.sinh, "Cosh": np.cosh,
    "Asinh": np.arcsinh, "Acosh": np.arccosh, "Atanh": np.arctanh, "Ceil": np.ceil,
    "Rint": np.rint, "Lgamma": _lgamma, "Digamma": _digamma, "Erfc": _sp("erfc"),
    "Erfinv": _erfinv, "Ndtri": _sp("ndtri"),
    "BesselI0e": _sp("i0e"), "BesselI1e": _sp("i1e"),
    "BesselI0": _scaled_times_exp("i0e"), "BesselI1": _scaled_times_exp("i1e"),
    "Atan2": np.arctan2,
    "Xlogy": _zero_where_x_is_zero(lambda x, y: x * np.log(y)),
    "Xlog1py": _zero_where_x_is_zero(lambda x, y: x * np.log1p(y)),
    "Xdivy": _zero_where_x_is_zero(np.true_divide),
    "DivNoNan": lambda x, y: np.where(y == 0, np.zeros_like(x * y), np.true_divide(x, y)),
    "MulNoNan": lambda x, y: np.where(y == 0, np.zeros_like(x * y), np.multiply(x, y)),
    "SquaredDifference": lambda x, y: np.square(np.subtract(x, y)),
    "TruncateDiv": _truncatediv, "TruncateMod": _truncatemod,
    "Igamma": _igamma, "Igammac": _igammac, "IgammaGradA": _igamma_grad_a,
    "Zeta": _zeta, "Polygamma": _polygamma, "Betainc": _betainc, "NextAfter": np.nextafter,
}.items():
    kernel(_name)(_quiet(_in_dtype(_fn)))
