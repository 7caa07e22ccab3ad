"""Gradient-check cases of fractional pooling (see ops/cases.py).

Seeded, so every evaluation pools the same cells; max-pooling inputs are distinct values
well apart (no near ties). TensorFlow has no gradient for the gradient ops (LookupError,
tests/conv/test_conv2_functions.py): first order only, the gradient ops forward only.
"""
import numpy as np

from tapeflow.runtime.dispatch import apply

from ops.cases import Case

R = np.random.default_rng(2712)


def spread(*shape):
    n = int(np.prod(shape))
    return (R.permutation(n) * 0.1 - n * 0.05).reshape(shape)


def _attrs(ratio, pseudo=False, overlapping=False, seed=87654321, seed2=7):
    return {"pooling_ratio": ratio, "pseudo_random": pseudo, "overlapping": overlapping,
            "deterministic": True, "seed": seed, "seed2": seed2}


def _pool(op, attrs):
    def fn(x):
        return apply(op, [x], attrs)[0]
    fn.__name__ = op
    return fn


X = spread(2, 7, 6, 2)
A1 = _attrs((1.0, 1.44, 1.73, 1.0))
A2 = _attrs((1.0, 1.5, 1.5, 1.0), pseudo=True, overlapping=True)


def _max_grad(x, dy):
    def fn(w):
        y, row, col = apply("FractionalMaxPool", [x], A1)
        return apply("FractionalMaxPoolGrad", [x, y, dy, row, col], {"overlapping": False}) * w
    fn.__name__ = "FractionalMaxPoolGrad"
    return fn


def _avg_grad(x, dy):
    def fn(w):
        _, row, col = apply("FractionalAvgPool", [x], A2)
        return apply("FractionalAvgPoolGrad", [x, dy, row, col], {"overlapping": True}) * w
    fn.__name__ = "FractionalAvgPoolGrad"
    return fn


CASES = {
    "FractionalMaxPool": [Case(_pool("FractionalMaxPool", A1), [X], order=1),
                          Case(_pool("FractionalMaxPool", A2), [X], order=1)],
    "FractionalAvgPool": [Case(_pool("FractionalAvgPool", A1), [X], order=1),
                          Case(_pool("FractionalAvgPool", A2), [X], order=1)],
    "FractionalMaxPoolGrad": [Case(_max_grad(X, R.uniform(-1, 1, (2, 4, 3, 2))),
                                   [R.uniform(-1, 1, X.shape)], order=1, note="forward only")],
    "FractionalAvgPoolGrad": [Case(_avg_grad(X, R.uniform(-1, 1, (2, 4, 4, 2))),
                                   [R.uniform(-1, 1, X.shape)], order=1, note="forward only")],
}
