"""Gradient-check cases of Dilation2D and its backprop ops (see ops/cases.py).

Inputs are distinct values well apart (a shuffled grid), so no window's maximum is within
the finite-difference step of a tie. TensorFlow has no gradient for the backprop ops
(LookupError, tests/conv/test_conv2_functions.py), so Dilation2D is checked to first order
and the backprops are taken through the forward and compiled samples only.
"""
import numpy as np

from tapeflow.runtime.dispatch import apply

from ops.cases import Case

R = np.random.default_rng(271)


def spread(*shape):
    n = int(np.prod(shape))
    return (R.permutation(n) * 0.1 - n * 0.05).reshape(shape)


def _a(s=1, r=1, pad="SAME"):
    return {"strides": (1, s, s, 1), "rates": (1, r, r, 1), "padding": pad}


X, F, DY = spread(2, 5, 4, 3), spread(2, 3, 3) * 0.01, R.uniform(-1, 1, (2, 5, 4, 3))
XV, DYV = spread(1, 6, 5, 2), R.uniform(-1, 1, (1, 3, 2, 2))


def _dil(attrs):
    def fn(x, f):
        return apply("Dilation2D", [x, f], attrs)
    fn.__name__ = "Dilation2D"
    return fn


def _backprop(op, x, f, dy, attrs):
    def fn(w):
        return apply(op, [x, f, dy], attrs) * w
    fn.__name__ = op
    return fn


CASES = {
    "Dilation2D": [Case(_dil(_a()), [X, F], order=1),
                   Case(_dil(_a(s=2, r=2, pad="VALID")), [spread(1, 6, 5, 2),
                                                          spread(2, 2, 2) * 0.01], order=1)],
    "Dilation2DBackpropInput": [
        Case(_backprop("Dilation2DBackpropInput", X, F, DY, _a()), [R.uniform(-1, 1, X.shape)],
             order=1, note="forward only")],
    "Dilation2DBackpropFilter": [
        Case(_backprop("Dilation2DBackpropFilter", XV, spread(2, 3, 2), DYV,
                       _a(s=2, r=1, pad="VALID")), [R.uniform(-1, 1, (2, 3, 2))],
             order=1, note="forward only")],
}
