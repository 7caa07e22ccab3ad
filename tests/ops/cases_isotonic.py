"""Gradient-check cases of IsotonicRegression (see ops/cases.py): inputs with clear gaps between
the pools' means, so small steps keep the segments (where the solution is smooth)."""
import numpy as np

import tapeflow as tf

from ops.cases import Case

ROWS = np.array([[1.0, 3.0, 2.0, 4.0], [5.0, 1.0, 1.5, 6.0], [0.5, -0.25, 0.75, -2.0]])


def _sq(y):
    return y * y


CASES = {
    "IsotonicRegression": [
        Case(lambda x: _sq(tf.nn.isotonic_regression(x)[0]), [ROWS]),
        Case(lambda x: _sq(tf.nn.isotonic_regression(x, decreasing=False, axis=0)[0]), [ROWS.T.copy()]),
        Case(lambda x: tf.nn.isotonic_regression(x * x)[0], [np.array([0.5, 1.5, -1.0, 2.5, 0.25])])],
}
NOT_DIFFERENTIABLE = []
