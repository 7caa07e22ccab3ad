"""Gradient rules of the special functions, mirroring TensorFlow's ``math_grad.py`` op for op.

TF has no gradient for ``a`` of ``betainc``, ``zeta``'s ``x`` or ``polygamma``'s order (None),
none at all for TruncateMod and IgammaGradA (``LookupError``), and None for the rounding ops
and TruncateDiv.
"""
import numpy as np

from ...ops import creation
from ...ops import math as m
from ...ops import special as s
from ...runtime.registry import gradient, not_differentiable

not_differentiable("Ceil", "Rint", "TruncateDiv")


def _c(value, like):
    return m.constant_like(value, like)


def _no_gradient(name):
    @gradient(name)
    def rule(op, g):
        raise LookupError(f"gradient registry has no entry for: {name}")
    return rule


_no_gradient("TruncateMod")
_no_gradient("IgammaGradA")


def _one_minus_square(x):
    return m.subtract(_c(1, x), m.square(x))


@gradient("Asin", inputs=(0,))
def _asin(op, g):
    return [m.multiply(g, m.reciprocal(m.sqrt(_one_minus_square(op.inputs[0]))))]


@gradient("Acos", inputs=(0,))
def _acos(op, g):
    return [m.multiply(m.negative(g), m.reciprocal(m.sqrt(_one_minus_square(op.inputs[0]))))]


@gradient("Atan", inputs=(0,))
def _atan(op, g):
    x = op.inputs[0]
    return [m.multiply(g, m.reciprocal(m.add(_c(1, x), m.square(x))))]


@gradient("Sinh", inputs=(0,))
def _sinh(op, g):
    return [m.multiply(g, s.cosh(op.inputs[0]))]


@gradient("Cosh", inputs=(0,))
def _cosh(op, g):
    return [m.multiply(g, s.sinh(op.inputs[0]))]


@gradient("Asinh", outputs=(0,))
def _asinh(op, g):
    return [m.divide(g, s.cosh(op.outputs[0]))]


@gradient("Acosh", outputs=(0,))
def _acosh(op, g):
    return [m.divide(g, s.sinh(op.outputs[0]))]


@gradient("Atanh", inputs=(0,))
def _atanh(op, g):
    return [m.multiply(g, m.reciprocal(_one_minus_square(op.inputs[0])))]


@gradient("Erfc", inputs=(0,))
def _erfc(op, g):
    x = op.inputs[0]
    return [m.multiply(m.multiply(g, _c(-2 / np.sqrt(np.pi), g)), m.exp(m.negative(m.square(x))))]


@gradient("Erfinv", outputs=(0,))
def _erfinv(op, g):
    return [m.multiply(m.multiply(g, _c(np.sqrt(np.pi) / 2, g)), m.exp(m.square(op.outputs[0])))]


@gradient("Ndtri", outputs=(0,))
def _ndtri(op, g):
    y = op.outputs[0]
    return [m.multiply(m.multiply(g, _c(np.sqrt(2 * np.pi), g)),
                       m.exp(m.divide(m.square(y), _c(2.0, y))))]


@gradient("Lgamma", inputs=(0,))
def _lgamma(op, g):
    return [m.multiply(g, s.digamma(op.inputs[0]))]


@gradient("Digamma", inputs=(0,))
def _digamma(op, g):
    x = op.inputs[0]
    return [m.multiply(g, s.polygamma(_c(1, x), x))]


@gradient("BesselI0", inputs=(0,))
def _bessel_i0(op, g):
    return [m.multiply(g, s.bessel_i1(op.inputs[0]))]


@gradient("BesselI0e", inputs=(0,), outputs=(0,))
def _bessel_i0e(op, g):
    x, y = op.inputs[0], op.outputs[0]
    return [m.multiply(g, m.subtract(s.bessel_i1e(x), m.multiply(m.sign(x), y)))]


@gradient("BesselI1", inputs=(0,), outputs=(0,))
def _bessel_i1(op, g):
    """1 at x == 0, where the main branch divides by zero (TF's where)."""
    x, y = op.inputs[0], op.outputs[0]
    dy_dx = m.where(m.equal(x, _c(0, x)), _c(1, x), m.subtract(s.bessel_i0(x), m.divide(y, x)))
    return [m.multiply(g, dy_dx)]


@gradient("BesselI1e", inputs=(0,), outputs=(0,))
def _bessel_i1e(op, g):
    x, y = op.inputs[0], op.outputs[0]
    main = m.subtract(s.bessel_i0e(x), m.multiply(y, m.add(m.sign(x), m.reciprocal(x))))
    return [m.multiply(g, m.where(m.equal(x, _c(0, x)), _c(0.5, x), main))]


@gradient("Atan2", inputs=(0, 1))
def _atan2(op, g):
    y, x = op.inputs
    grad_inv = m.divide(g, m.add(m.square(y), m.square(x)))
    return [m.multiply(x, grad_inv), m.multiply(m.negative(y), grad_inv)]


def _not_zero(x):
    return m.cast(m.not_equal(x, _c(0, x)), x.dtype)


@gradient("Xlogy", inputs=(0, 1))
def _xlogy(op, g):
    x, y = op.inputs
    return [m.multiply(s.xlogy(_not_zero(x), y), g), m.multiply(s.xdivy(x, y), g)]


@gradient("Xlog1py", inputs=(0, 1))
def _xlog1py(op, g):
    x, y = op.inputs
    return [m.multiply(s.xlog1py(_not_zero(x), y), g),
            m.multiply(s.xdivy(x, m.add(y, _c(1.0, y))), g)]


@gradient("Xdivy", inputs=(0, 1))
def _xdivy(op, g):
    x, y = op.inputs
    return [m.multiply(s.xdivy(_not_zero(x), y), g),
            m.multiply(s.xdivy(m.negative(x), m.pow(y, _c(2, y))), g)]


@gradient("DivNoNan", inputs=(0, 1))
def _div_no_nan(op, g):
    x, y = op.inputs
    gx = s.divide_no_nan(g, y)
    gy = m.multiply(g, s.divide_no_nan(s.divide_no_nan(m.negative(x), y), y))
    return [gx, gy]


@gradient("MulNoNan", inputs=(0, 1))
def _mul_no_nan(op, g):
    x, y = op.inputs
    return [s.multiply_no_nan(g, y), s.multiply_no_nan(x, g)]


@gradient("SquaredDifference", inputs=(0, 1))
def _squared_difference(op, g):
    x, y = op.inputs
    x_grad = m.multiply(m.multiply(_c(2.0, g), g), m.subtract(x, y))
    return [x_grad if op.wants[0] else None, m.negative(x_grad) if op.wants[1] else None]


def _igamma_partials(op, g):
    a, x = op.inputs
    partial_a = s.igamma_grad_a(a, x)
    partial_x = m.exp(m.subtract(m.add(m.negative(x), m.multiply(m.subtract(a, _c(1, a)), m.log(x))),
                                 s.lgamma(a)))
    return m.multiply(partial_a, g), m.multiply(partial_x, g)


@gradient("Igamma", inputs=(0, 1))
def _igamma(op, g):
    return list(_igamma_partials(op, g))


@gradient("Igammac", inputs=(0, 1))
def _igammac(op, g):
    ga, gx = _igamma_partials(op, g)
    return [m.negative(ga), m.negative(gx)]


@gradient("Betainc", inputs=(0, 1, 2))
def _betainc(op, g):
    """Only x's gradient; TF leaves a's and b's None."""
    a, b, x = op.inputs
    log_beta = m.subtract(m.add(s.lgamma(a), s.lgamma(b)), s.lgamma(m.add(a, b)))
    partial_x = m.exp(m.subtract(m.add(s.xlog1py(m.subtract(b, _c(1, b)), m.negative(x)),
                                       s.xlogy(m.subtract(a, _c(1, a)), x)), log_beta))
    return [None, None, m.multiply(partial_x, g)]


@gradient("Zeta", inputs=(0, 1))
def _zeta(op, g):
    x, q = op.inputs
    partial_q = m.multiply(m.negative(x), s.zeta(m.add(x, _c(1, x)), q))
    return [None, m.multiply(partial_q, g)]


@gradient("Polygamma", inputs=(0, 1))
def _polygamma(op, g):
    n, x = op.inputs
    return [None, m.multiply(s.polygamma(m.add(n, _c(1, n)), x), g)]


@gradient("NextAfter", inputs=(0, 1))
def _nextafter(op, g):
    x1, x2 = op.inputs
    return [m.multiply(creation.ones_like(x1), g), m.multiply(creation.zeros_like(x2), g)]
