"""ParallelConcat's gradient is TensorFlow's LookupError (tests/vocab/test_math_extras.py), so
its case runs it on constants inside a function (parallel_stack refuses eager execution)."""
import numpy as np

import tapeflow as tf

from ops.cases import Case

A, B = np.array([[0.5, -1.0, 2.0]]), np.array([[1.5, 0.25, -0.75]])


@tf.function(jit_compile=False)
def _stacked(x):
    return tf.parallel_stack([tf.constant(A), tf.constant(B)]) * x


CASES = {"ParallelConcat": [Case(_stacked, [np.random.default_rng(5).uniform(-2, 2, (2, 1, 3))])]}
NOT_DIFFERENTIABLE = []
