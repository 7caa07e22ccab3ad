"""Gradient rules of the stateless samplers, TensorFlow's (``random_grad.py``): categorical,
Poisson, binomial and the index shuffle have none (``NotDifferentiable``); gamma and the
parameterized truncated normal have the implicit reparameterization gradient of Figurnov et
al. (2018) for their parameters, none for the seed (or key and counter)."""
import numpy as np

from ...ops import array as a
from ...ops import math as m
from ...ops import special as s
from ...ops.reduce import reduce_sum
from ...runtime.registry import gradient, not_differentiable

not_differentiable("StatelessMultinomial", "StatelessRandomPoisson", "StatelessRandomBinomial",
                   "RandomIndexShuffle")


def _c(value, like):
    return m.constant_like(value, like)


def random_gamma_grad(alpha, sample):
    """TensorFlow's ``RandomGammaGrad``: d sample / d alpha at fixed CDF, -dP(a, x)/da over the
    gamma density exp((a - 1) log x - x - lgamma(a))."""
    density = m.exp(m.subtract(m.subtract(m.multiply(m.subtract(alpha, _c(1, alpha)),
                                                     m.log(sample)), sample), s.lgamma(alpha)))
    return m.negative(m.divide(s.igamma_grad_a(alpha, sample), density))


@gradient("StatelessRandomGammaV3", inputs=(2,), outputs=(0,))
def _gamma(op, g):
    alpha, sample = op.inputs[2], op.outputs[0]
    extra = len(op.out_avals[0].shape) - len(op.in_avals[2].shape)
    alpha_b = a.reshape(alpha, (1,) * extra + tuple(op.in_avals[2].shape))
    partial = random_gamma_grad(alpha_b, sample)
    return [None, None, reduce_sum(m.multiply(g, partial), axis=list(range(extra)))]


def _ndtr(x):
    half_sqrt_2 = _c(0.5 * np.sqrt(2.0), x)
    w = m.multiply(x, half_sqrt_2)
    z = m.abs(w)
    one, two = _c(1.0, x), _c(2.0, x)
    y = m.where(m.less(z, half_sqrt_2), m.add(one, m.erf(w)),
                m.where(m.greater(w, _c(0.0, x)), m.subtract(two, s.erfc(z)), s.erfc(z)))
    return m.multiply(_c(0.5, x), y)


@gradient("StatelessParameterizedTruncatedNormal", inputs=(1, 2, 3, 4), outputs=(0,))
def _truncated_normal(op, g):
    mean, stddev, minval, maxval = op.inputs[1:5]
    sample = op.outputs[0]
    lo_std = m.divide(m.subtract(minval, mean), stddev)
    hi_std = m.divide(m.subtract(maxval, mean), stddev)
    x_std = m.divide(m.subtract(sample, mean), stddev)
    cdf = m.divide(m.subtract(_ndtr(x_std), _ndtr(lo_std)),
                   m.subtract(_ndtr(hi_std), _ndtr(lo_std)))
    info = np.finfo(op.out_avals[0].dtype.np)
    cdf = m.minimum(m.maximum(cdf, _c(info.tiny, cdf)), _c(1 - info.eps, cdf))
    half = _c(0.5, x_std)
    x2 = m.square(x_std)
    dmax = m.exp(m.add(m.multiply(half, m.subtract(x2, m.square(hi_std))), m.log(cdf)))
    dmin = m.exp(m.add(m.multiply(half, m.subtract(x2, m.square(lo_std))),
                       m.log1p(m.negative(cdf))))
    extra = list(range(len(op.out_avals[0].shape) - len(op.in_avals[1].shape)))
    return [None, reduce_sum(g, axis=extra), reduce_sum(m.multiply(g, x_std), axis=extra),
            reduce_sum(m.multiply(g, dmin), axis=extra),
            reduce_sum(m.multiply(g, dmax), axis=extra)]
