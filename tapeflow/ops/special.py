"""Special functions and the rest of ``tf.math``'s elementwise vocabulary.

The primitives are TensorFlow's ops of the same names (ir/defs/special.py); the composites
(``log_sigmoid``, ``erfcinv``, ``lbeta``, ``polyval``, ...) are built from the same ops
TensorFlow's Python builds them from, so values, gradients and their ``None``s agree.
"""
from __future__ import annotations

import numpy as np

from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor
from . import math as m
from .creation import zeros_like
from .nn import softplus
from .reduce import reduce_sum


def _unary(op_name, fn_name, doc):
    def fn(x, name=None) -> Tensor:
        return apply(op_name, [x])
    fn.__name__ = fn.__qualname__ = fn_name
    fn.__doc__ = doc
    return fn


def _binary(op_name, fn_name, args, doc):
    """A function of two tensors named as TensorFlow names them (``args``: "x, y")."""
    first, second = (a.strip() for a in args.split(","))
    namespace = {"apply": apply, "Tensor": Tensor}
    exec(f"def {fn_name}({first}, {second}, name=None) -> Tensor:\n"
         f"    return apply({op_name!r}, [{first}, {second}])\n", namespace)
    fn = namespace[fn_name]
    fn.__doc__ = doc
    return fn


asin = _unary("Asin", "asin", """Inverse sine, in [-pi/2, pi/2]; NaN outside [-1, 1].

    >>> tf.math.asin(tf.constant([0.0, 0.5, 1.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0.       , 0.5235988, 1.5707964], dtype=float32)>
    """)
acos = _unary("Acos", "acos", """Inverse cosine, in [0, pi]; NaN outside [-1, 1].

    >>> tf.math.acos(tf.constant([1.0, 0.5, -1.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0.       , 1.0471976, 3.1415927], dtype=float32)>
    """)
atan = _unary("Atan", "atan", """Inverse tangent, in (-pi/2, pi/2).

    >>> tf.math.atan(tf.constant([0.0, 1.0, -2.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([ 0.       ,  0.7853982, -1.1071488], dtype=float32)>
    """)
sinh = _unary("Sinh", "sinh", """Hyperbolic sine.

    >>> tf.math.sinh(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.       , 1.1752012], dtype=float32)>
    """)
cosh = _unary("Cosh", "cosh", """Hyperbolic cosine.

    >>> tf.math.cosh(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1.       , 1.5430807], dtype=float32)>
    """)
asinh = _unary("Asinh", "asinh", """Inverse hyperbolic sine.

    >>> tf.math.asinh(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.       , 0.8813736], dtype=float32)>
    """)
acosh = _unary("Acosh", "acosh", """Inverse hyperbolic cosine; NaN below 1.

    >>> tf.math.acosh(tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.      , 1.316958], dtype=float32)>
    """)
atanh = _unary("Atanh", "atanh", """Inverse hyperbolic tangent; +-inf at +-1, NaN beyond.

    >>> tf.math.atanh(tf.constant([0.0, 0.5]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.        , 0.54930615], dtype=float32)>
    """)
ceil = _unary("Ceil", "ceil", """Smallest integer not below ``x``; its gradient is None, as in TF.

    >>> tf.math.ceil(tf.constant([-1.5, 0.2, 2.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([-1.,  1.,  2.], dtype=float32)>
    """)
rint = _unary("Rint", "rint", """Nearest integer, halves to even; its gradient is None, as in TF.

    >>> tf.math.rint(tf.constant([0.5, 1.5, -2.7]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([ 0.,  2., -3.], dtype=float32)>
    """)
lgamma = _unary("Lgamma", "lgamma", """``log|Gamma(x)|``; inf at the poles 0, -1, -2, ...

    >>> tf.math.lgamma(tf.constant([0.5, 1.0, 4.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0.5723649, 0.       , 1.7917595], dtype=float32)>
    """)
digamma = _unary("Digamma", "digamma", """``Gamma'(x) / Gamma(x)``; NaN at the poles 0, -1, -2, ...

    >>> tf.math.digamma(tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-0.5772157 ,  0.42278433], dtype=float32)>
    """)
erfc = _unary("Erfc", "erfc", """Complementary error function ``1 - erf(x)``, accurate in the tail.

    >>> tf.math.erfc(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1.       , 0.1572992], dtype=float32)>
    """)
erfinv = _unary("Erfinv", "erfinv", """Inverse of ``erf`` on (-1, 1); +-inf at +-1.

    >>> tf.math.erfinv(tf.constant([0.0, 0.5]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.        , 0.47693625], dtype=float32)>
    """)
ndtri = _unary("Ndtri", "ndtri", """Inverse of the standard normal CDF on (0, 1).

    >>> tf.math.ndtri(tf.constant([0.5, 0.975]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.       , 1.9599644], dtype=float32)>
    """)
bessel_i0 = _unary("BesselI0", "bessel_i0", """Modified Bessel function of the first kind, order 0.

    >>> tf.math.bessel_i0(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1.      , 1.266066], dtype=float32)>
    """)
bessel_i0e = _unary("BesselI0e", "bessel_i0e", """``exp(-|x|) * bessel_i0(x)``, finite everywhere.

    >>> tf.math.bessel_i0e(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1.       , 0.4657596], dtype=float32)>
    """)
bessel_i1 = _unary("BesselI1", "bessel_i1", """Modified Bessel function of the first kind, order 1.

    >>> tf.math.bessel_i1(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.        , 0.56515914], dtype=float32)>
    """)
bessel_i1e = _unary("BesselI1e", "bessel_i1e", """``exp(-|x|) * bessel_i1(x)``, finite everywhere.

    >>> tf.math.bessel_i1e(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.        , 0.20791042], dtype=float32)>
    """)

atan2 = _binary("Atan2", "atan2", "y, x", """The angle of the point ``(x, y)``, in [-pi, pi].

    >>> tf.math.atan2(tf.constant([1.0, -1.0]), tf.constant([0.0, -1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 1.5707964, -2.3561945], dtype=float32)>
    """)
xlogy = _binary("Xlogy", "xlogy", "x, y", """``x * log(y)``, and 0 wherever ``x`` is 0 (even if y is 0 or NaN).

    >>> tf.math.xlogy(tf.constant([0.0, 2.0]), tf.constant([0.0, 3.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.       , 2.1972246], dtype=float32)>
    """)
xlog1py = _binary("Xlog1py", "xlog1py", "x, y", """``x * log1p(y)``, and 0 wherever ``x`` is 0.

    >>> tf.math.xlog1py(tf.constant([0.0, 2.0]), tf.constant([-1.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.       , 1.3862944], dtype=float32)>
    """)
xdivy = _binary("Xdivy", "xdivy", "x, y", """``x / y``, and 0 wherever ``x`` is 0.

    >>> tf.math.xdivy(tf.constant([0.0, 3.0]), tf.constant([0.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0. , 1.5], dtype=float32)>
    """)
multiply_no_nan = _binary("MulNoNan", "multiply_no_nan", "x, y",
                          """``x * y``, and 0 wherever ``y`` is 0 (even if x is inf or NaN).

    >>> tf.math.multiply_no_nan(tf.constant([float('inf'), 2.0]), tf.constant([0.0, 3.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 6.], dtype=float32)>
    """)
squared_difference = _binary("SquaredDifference", "squared_difference", "x, y", """``(x - y) ** 2``.

    >>> tf.math.squared_difference(tf.constant([1.0, 5.0]), tf.constant([3.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([4., 9.], dtype=float32)>
    """)
truncatediv = _binary("TruncateDiv", "truncatediv", "x, y",
                      """``x / y`` rounded toward zero (C's division); not differentiable.

    >>> tf.truncatediv(tf.constant([7, -7]), tf.constant([2, 2]))
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([ 3, -3], dtype=int32)>
    """)
truncatemod = _binary("TruncateMod", "truncatemod", "x, y",
                      """The remainder of truncating division, with the sign of ``x`` (C's fmod).

    >>> tf.truncatemod(tf.constant([7, -7]), tf.constant([2, 2]))
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([ 1, -1], dtype=int32)>
    """)
igamma = _binary("Igamma", "igamma", "a, x", """Regularized lower incomplete gamma function P(a, x).

    >>> tf.math.igamma(tf.constant([1.0, 2.0]), tf.constant([1.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.63212055, 0.26424113], dtype=float32)>
    """)
igammac = _binary("Igammac", "igammac", "a, x", """Regularized upper incomplete gamma function Q(a, x).

    >>> tf.math.igammac(tf.constant([1.0, 2.0]), tf.constant([1.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.36787945, 0.7357589 ], dtype=float32)>
    """)
zeta = _binary("Zeta", "zeta", "x, q", """Hurwitz zeta function: sum over n of ``(n + q) ** -x``.

    >>> tf.math.zeta(tf.constant([2.0, 4.0]), tf.constant([1.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1.644934 , 1.0823232], dtype=float32)>
    """)
polygamma = _binary("Polygamma", "polygamma", "a, x",
                    """The ``a``-th derivative of digamma; NaN for a non-integer or negative ``a``.

    >>> tf.math.polygamma(tf.constant([0.0, 1.0]), tf.constant([1.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-0.5772157,  1.644934 ], dtype=float32)>
    """)
nextafter = _binary("NextAfter", "nextafter", "x1, x2",
                    """The next representable value after ``x1`` towards ``x2``.

    >>> tf.math.nextafter(tf.constant([1.0]), tf.constant([2.0]))
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([1.0000001], dtype=float32)>
    """)


def igamma_grad_a(a, x):
    """TF's raw op IgammaGradA: the derivative of ``igamma(a, x)`` in ``a``."""
    return apply("IgammaGradA", [a, x])


def betainc(a, b, x, name=None) -> Tensor:
    """Regularized incomplete beta function I_x(a, b); a, b, x of one shape, or scalars.

    >>> tf.math.betainc(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0]), tf.constant([0.25, 0.5]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.25, 0.5 ], dtype=float32)>
    """
    return apply("Betainc", [a, b, x])


def _int_to_float(x, y):
    """TF's ``*_no_nan`` divisions cast integers to float as ``truediv`` does."""
    x = m._tensor(x, dtype_hint=getattr(y, "dtype", None))
    y = m._tensor(y, dtype_hint=x.dtype)
    if x.dtype.is_integer:
        wide = m._TRUEDIV_FLOAT.get(x.dtype, D.float64)
        x, y = m.cast(x, wide), m.cast(y, wide)
    return x, y


def divide_no_nan(x, y, name=None) -> Tensor:
    """``x / y``, and 0 wherever ``y`` is 0 (integers are divided in floating point).

    >>> tf.math.divide_no_nan(tf.constant([3.0, 3.0]), tf.constant([0.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0. , 1.5], dtype=float32)>
    """
    x, y = _int_to_float(x, y)
    return apply("DivNoNan", [x, y])


def reciprocal_no_nan(x, name=None) -> Tensor:
    """``1 / x``, and 0 wherever ``x`` is 0.

    >>> tf.math.reciprocal_no_nan(tf.constant([0.0, 4.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.  , 0.25], dtype=float32)>
    """
    x = m._tensor(x)
    return divide_no_nan(m.constant_like(1, x), x)


def log_sigmoid(x, name=None) -> Tensor:
    """``log(sigmoid(x))``, computed as ``-softplus(-x)`` (TF's composite).

    >>> tf.math.log_sigmoid(tf.constant([0.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-0.6931472, -0.126928 ], dtype=float32)>
    """
    x = m._tensor(x)
    return m.negative(softplus(m.negative(x)))


def logical_xor(x, y, name="LogicalXor") -> Tensor:
    """``(x or y) and not (x and y)``, TF's composite of three logical ops.

    >>> tf.math.logical_xor([True, True, False], [True, False, False])
    <tf.Tensor: shape=(3,), dtype=bool, numpy=array([False,  True, False])>
    """
    return m.logical_and(m.logical_or(x, y), m.logical_not(m.logical_and(x, y)))


def erfcinv(x, name=None) -> Tensor:
    """Inverse of ``erfc`` on (0, 2): ``-ndtri(x / 2) / sqrt(2)`` as TensorFlow computes it.

    >>> tf.math.erfcinv(tf.constant([1.0, 0.5]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-0.        ,  0.47693625], dtype=float32)>
    """
    x = m._tensor(x)
    return m.multiply(m.negative(ndtri(m.multiply(x, m.constant_like(0.5, x)))),
                      m.constant_like(np.sqrt(0.5), x))


def lbeta(x, name=None) -> Tensor:
    """``log|Beta(x)|`` over the last axis: sum of lgamma minus lgamma of the sum.

    An empty last axis gives 0 (TF: log(1)); a scalar is refused as in TF's reduction.

    >>> tf.math.lbeta(tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-0.6931472, -4.0943446], dtype=float32)>
    """
    x = m._tensor(x)
    if x.shape.rank is not None and x.shape.rank == 0:
        raise ValueError("lbeta needs a tensor of rank >= 1: it reduces the last axis")
    log_prod_gamma_x = reduce_sum(lgamma(x), axis=[-1])
    sum_x = reduce_sum(x, axis=[-1])
    return m.subtract(log_prod_gamma_x, lgamma(sum_x))


def polyval(coeffs, x, name=None) -> Tensor:
    """``coeffs[0] * x**(n-1) + ... + coeffs[n-1]`` by Horner's rule (a list of coefficients).

    >>> tf.math.polyval([2.0, 1.0, 3.0], tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 6., 13.], dtype=float32)>
    """
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(f"Argument coeffs must be list type found {type(coeffs)}.")
    x = m._tensor(x)
    if not coeffs:
        return zeros_like(x)
    p = m._tensor(coeffs[0], dtype_hint=x.dtype)
    for c in coeffs[1:]:
        p = m.add(c, m.multiply(p, x))
    return p


# tf.math's names (truncatediv and truncatemod are top-level only in TF)
__all__ = ["asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "ceil", "rint",
           "lgamma", "digamma", "erfc", "erfinv", "ndtri", "bessel_i0", "bessel_i0e",
           "bessel_i1", "bessel_i1e", "atan2", "xlogy", "xlog1py", "xdivy", "multiply_no_nan",
           "squared_difference", "igamma", "igammac", "zeta", "polygamma", "nextafter",
           "betainc", "divide_no_nan", "reciprocal_no_nan", "log_sigmoid", "logical_xor",
           "erfcinv", "lbeta", "polyval"]
