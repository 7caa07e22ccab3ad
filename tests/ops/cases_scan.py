"""Gradient-check cases of the cumulative ops (see ops/cases.py): every exclusive/reverse
combination once, on a 2-D input along either axis; cumprod away from 0 (TF's div_no_nan rule)."""
import numpy as np

import tapeflow as tf

from ops.cases import Case

R = np.random.default_rng(290)
X = R.uniform(-2, 2, (2, 3))
P = R.uniform(0.5, 1.5, (2, 3)) * np.array([1.0, -1.0, 1.0])

CASES = {
    "Cumsum": [Case(lambda x: tf.math.cumsum(x, axis=1) * x, [X]),
               Case(lambda x: tf.math.cumsum(x, axis=0, exclusive=True, reverse=True) * x, [X],
                    note="exclusive reverse")],
    "Cumprod": [Case(lambda x: tf.math.cumprod(x, axis=1, exclusive=True), [P]),
                Case(lambda x: tf.math.cumprod(x, axis=-2, reverse=True), [P], note="reverse")],
    "CumulativeLogsumexp": [
        Case(lambda x: tf.math.cumulative_logsumexp(x, axis=1) * x, [X]),
        Case(lambda x: tf.math.cumulative_logsumexp(x, axis=0, reverse=True, exclusive=True)[:-1],
             [X], note="exclusive reverse (the -inf row left out)")],
}
NOT_DIFFERENTIABLE = []
