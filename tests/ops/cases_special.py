"""Gradient-check cases of the special functions (see ops/cases.py).

Inputs stay inside each function's smooth domain: asin/acos/atanh in (-1, 1), acosh above
1, lgamma/digamma/polygamma away from the poles, erfinv in (-1, 1), ndtri in (0, 1), the
incomplete gamma and beta functions at positive parameters, xlogy/xdivy/no-nan divisions
with y away from 0. Second-order checks stop where TF's first derivative has no gradient of
its own (IgammaGradA: order 1 for a).
"""
import numpy as np

import tapeflow as tf
from tapeflow.ops import special

from ops.cases import Case

R = np.random.default_rng(29)


def u(*shape, lo=-2.0, hi=2.0):
    return R.uniform(lo, hi, shape)


def away(*shape, lo=0.3, hi=2.0):
    return R.uniform(lo, hi, shape) * R.choice([-1.0, 1.0], shape)


M = tf.math
MOD_X = np.array([[2.3, -2.3, 5.1], [-0.7, 1.9, -4.4]])
GAMMA_X = np.array([0.3, 1.7, 6.0])
CASES = {
    "Asin": [Case(lambda x: M.asin(x), [u(2, 3, lo=-0.8, hi=0.8)])],
    "Acos": [Case(lambda x: M.acos(x), [u(2, 3, lo=-0.8, hi=0.8)])],
    "Atan": [Case(lambda x: M.atan(x), [u(2, 3)])],
    "Sinh": [Case(lambda x: M.sinh(x), [u(2, 3)])],
    "Cosh": [Case(lambda x: M.cosh(x), [u(2, 3)])],
    "Asinh": [Case(lambda x: M.asinh(x), [u(2, 3)])],
    "Acosh": [Case(lambda x: M.acosh(x), [u(2, 3, lo=1.3, hi=3.0)])],
    "Atanh": [Case(lambda x: M.atanh(x), [u(2, 3, lo=-0.8, hi=0.8)])],
    "Lgamma": [Case(lambda x: M.lgamma(x), [np.array([0.4, 1.5, 3.7, -0.5, -2.3])])],
    "Digamma": [Case(lambda x: M.digamma(x), [np.array([0.4, 1.5, 3.7, -0.5, -2.3])])],
    "Erfc": [Case(lambda x: M.erfc(x), [u(2, 3)])],
    "Erfinv": [Case(lambda x: M.erfinv(x), [u(2, 3, lo=-0.9, hi=0.9)])],
    "Ndtri": [Case(lambda x: M.ndtri(x), [u(2, 3, lo=0.05, hi=0.95)])],
    "BesselI0": [Case(lambda x: M.bessel_i0(x), [u(5, lo=-3, hi=3)])],
    "BesselI0e": [Case(lambda x: M.bessel_i0e(x), [away(5, lo=0.2, hi=3)])],
    "BesselI1": [Case(lambda x: M.bessel_i1(x), [away(5, lo=0.2, hi=3)])],
    "BesselI1e": [Case(lambda x: M.bessel_i1e(x), [away(5, lo=0.2, hi=3)])],
    "Atan2": [Case(lambda y, x: M.atan2(y, x), [u(2, 3), away(3)])],
    "Xlogy": [Case(lambda x, y: M.xlogy(x, y), [u(2, 3), u(3, lo=0.3)])],
    "Xlog1py": [Case(lambda x, y: M.xlog1py(x, y), [u(2, 3), u(3, lo=-0.6)])],
    "Xdivy": [Case(lambda x, y: M.xdivy(x, y), [u(2, 3), away(3, lo=0.5)])],
    "DivNoNan": [Case(lambda x, y: M.divide_no_nan(x, y), [u(2, 3), away(3, lo=0.5)])],
    "MulNoNan": [Case(lambda x, y: M.multiply_no_nan(x, y), [u(2, 3), u(3)])],
    "SquaredDifference": [Case(lambda x, y: M.squared_difference(x, y) * x, [u(2, 3), u(3)])],
    "Igamma": [Case(lambda a, x: M.igamma(a, x), [u(4, lo=0.5, hi=3), u(4, lo=0.2, hi=4)],
                    order=1),
               Case(lambda x: M.igamma(1.7, x), [u(4, lo=0.2, hi=4)], note="second order in x")],
    "Igammac": [Case(lambda a, x: M.igammac(a, x), [u(4, lo=0.5, hi=3), u(4, lo=0.2, hi=4)],
                     order=1),
                Case(lambda x: M.igammac(2.5, x), [u(4, lo=0.2, hi=4)], note="second order in x")],
    "Zeta": [Case(lambda q: M.zeta(3.0, q), [u(4, lo=0.5, hi=3)])],
    "Polygamma": [Case(lambda x: M.polygamma(2.0, x), [u(4, lo=0.5, hi=3)])],
    "Betainc": [Case(lambda x: M.betainc(2.5, 1.5, x), [u(4, lo=0.1, hi=0.9)])],
    "NextAfter": [Case(lambda x, y: M.nextafter(x, y) * x, [u(2, 3), u(3)])],
    # no gradient in TF (LookupError, tests/vocab/test_special.py): the case only takes the
    # op through the tape's forward and the compiled-vs-interpreted samples
    "TruncateMod": [Case(lambda x: tf.truncatemod(tf.constant(MOD_X), 0.7) * x, [u(2, 3)],
                         note="forward only")],
    "IgammaGradA": [Case(lambda x: special.igamma_grad_a(1.5, tf.constant(GAMMA_X)) * x,
                         [u(3)], note="forward only")],
}
NOT_DIFFERENTIABLE = ["Ceil", "Rint", "TruncateDiv"]
