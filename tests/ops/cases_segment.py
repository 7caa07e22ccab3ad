"""Gradient-check cases of the segment max, min and product (see ops/cases.py).

Max/Min data are random uniforms, so no ties (where the gradient is split and finite
differences disagree by design); every unsorted max/min segment is filled (an empty one holds
the dtype's lowest value, whose square overflows).
"""
import numpy as np

import tapeflow as tf

from ops.cases import Case

R = np.random.default_rng(29)


def u(*shape):
    return R.uniform(-2, 2, shape)


def sq(f):
    def g(*xs):
        y = f(*xs)
        return y * y
    g.__name__ = getattr(f, "__name__", "sq")
    return g


M = tf.math
CASES = {
    "SegmentMax": [Case(sq(lambda x: M.segment_max(x, tf.constant([0, 0, 2, 2, 2]))), [u(5, 2)])],
    "SegmentMin": [Case(sq(lambda x: M.segment_min(x, tf.constant([0, 1, 1, 3]))), [u(4, 3)])],
    "SegmentProd": [Case(lambda x: M.segment_prod(x, tf.constant([0, 0, 1, 1, 1])), [u(5, 2)]),
                    Case(lambda x: M.segment_prod(x * x, tf.constant([0, 0, 0, 2])),
                         [np.array([1.5, 0.0, -0.5, 2.0])], note="one zero")],
    "UnsortedSegmentMax": [
        Case(sq(lambda x: M.unsorted_segment_max(x, tf.constant([2, 0, 2, -1, 1]), 3)), [u(5, 2)]),
        Case(sq(lambda x: M.unsorted_segment_max(x, tf.constant([[1, 0], [1, 1]]), 2)), [u(2, 2, 3)])],
    "UnsortedSegmentMin": [
        Case(sq(lambda x: M.unsorted_segment_min(x, tf.constant([1, 0, -1, 1]), 2)), [u(4, 3)])],
    "UnsortedSegmentProd": [
        Case(lambda x: M.unsorted_segment_prod(x, tf.constant([2, 0, 2, -1, 2]), 4), [u(5, 2)]),
        Case(lambda x: M.unsorted_segment_prod(x, tf.constant([[1, 0], [1, 1]]), 2),
             [np.array([[[1.5, 0.0], [2.0, -1.0]], [[0.5, 3.0], [-2.0, 0.75]]])], order=1,
             note="one zero: TF's rule divides by the data, so its second order is NaN there")],
}
NOT_DIFFERENTIABLE = []
