"""Gradient-check cases of the reductions (see ops/cases.py).

Max/Min inputs are random uniforms, so there are no ties (where the gradient
is split and finite differences disagree by design).
"""
import numpy as np

import tapeflow as tf

from ops.cases import Case
from ops.cases_array import unknown

R = np.random.default_rng(2)


def u(*shape):
    return R.uniform(-2, 2, shape)


def sq(f):
    """``f(x)`` squared, so the second-order check sees a non-zero Hessian."""
    def g(*xs):
        y = f(*xs)
        return y * y
    g.__name__ = getattr(f, "__name__", "sq")
    return g


CASES = {
    "Sum": [Case(lambda x: tf.reduce_sum(x * x, axis=1, keepdims=True), [u(2, 3)]),
            Case(sq(lambda x: tf.reduce_sum(x, axis=(0, -1))), [u(2, 3, 2)]),
            Case(sq(lambda x: tf.reduce_sum(x)), [u(3, 2)])],
    "Mean": [Case(sq(lambda x: tf.reduce_mean(x, axis=-1)), [u(2, 3)]),
             Case(sq(lambda x: tf.reduce_mean(x, axis=(0, 2), keepdims=True)), [u(2, 3, 2)]),
             Case(sq(lambda x: tf.reduce_mean(x)), [u(4)])],
    "Max": [Case(sq(lambda x: tf.reduce_max(x, axis=1)), [u(3, 4)]),
            Case(sq(lambda x: tf.reduce_max(x, axis=(0, 2), keepdims=True)), [u(2, 3, 2)]),
            Case(lambda x: tf.reduce_logsumexp(x * x, axis=-1), [u(2, 3)], note="logsumexp"),
            Case(lambda x: tf.reduce_logsumexp(x, keepdims=True), [u(2, 3)], note="logsumexp all")],
    "Min": [Case(sq(lambda x: tf.reduce_min(x, axis=0)), [u(3, 4)]),
            Case(sq(lambda x: tf.reduce_min(x)), [u(2, 3)])],
    "Prod": [Case(lambda x: tf.reduce_prod(x, axis=1), [u(2, 4)]),
             Case(lambda x: tf.reduce_prod(x, axis=(0, 2), keepdims=True), [u(2, 3, 2)]),
             Case(lambda x: tf.reduce_prod(x), [np.array([[1.5, 0.0], [-0.5, 2.0]])], note="one zero"),
             Case(lambda x: tf.reduce_prod(x, axis=-1),
                  [np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])], note="two zeros"),
             Case(lambda x: tf.reduce_prod(x, axis=[]), [u(2, 2)], note="no axes")],
    "UnsortedSegmentSum": [
        Case(sq(lambda x: tf.math.unsorted_segment_sum(x, tf.constant([2, 0, 2, -1]), 3)), [u(4, 2)]),
        Case(sq(lambda x: tf.math.unsorted_segment_sum(x, tf.constant([[1, 0], [1, 1]]), 2)), [u(2, 2, 3)])],
    "DynamicUnsortedSegmentSum": [   # the count of segments known only at run time
        Case(unknown(lambda x, y: tf.math.unsorted_segment_sum(x * x, tf.constant([2, 0, 2, -1]),
                                                               tf.shape(y)[0]) * y[:, None], 2, 1),
             [u(4, 2), u(3)])],
}
NOT_DIFFERENTIABLE = ["Any", "All", "ArgMax", "ArgMin"]
