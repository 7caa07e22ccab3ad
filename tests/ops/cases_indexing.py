"""Gradient-check cases of the indexing ops (see ops/cases.py). Index tuples are constants;
tensor_scatter_nd_max/min without ties (TF shares a tie's gradient)."""
import numpy as np

import tapeflow as tf

from ops.cases import Case

R = np.random.default_rng(291)


def u(*shape):
    return R.uniform(-2, 2, shape)


IDX = np.array([[1, 0], [0, 2], [1, 0]])          # a duplicate row: gathered twice, added twice
ROWS = np.array([[1], [0]])

CASES = {
    "ReverseV2": [Case(lambda x: tf.reverse(x, [0, -1]) * x, [u(2, 3)])],
    "Roll": [Case(lambda x: tf.roll(x, [1, -2], [0, 1]) * x, [u(2, 3)])],
    "GatherNd": [Case(lambda x: tf.gather_nd(x, IDX) * tf.reduce_sum(tf.gather_nd(x, ROWS)), [u(2, 3)])],
    "ScatterNd": [Case(lambda v: tf.scatter_nd(IDX, v * v, [2, 3]), [u(3)])],
    "TensorScatterUpdate": [Case(lambda x, v: tf.tensor_scatter_nd_update(x, ROWS, v) * x,
                                 [u(2, 3), u(2, 3)])],
    "TensorScatterAdd": [Case(lambda x, v: tf.tensor_scatter_nd_add(x * x, IDX, v * x[0, 0]),
                              [u(2, 3), u(3)])],
    "TensorScatterSub": [Case(lambda x, v: tf.tensor_scatter_nd_sub(x, IDX, v * v) * x,
                              [u(2, 3), u(3)])],
    "TensorScatterMax": [Case(lambda x, v: tf.tensor_scatter_nd_max(x, ROWS, v) * x,
                              [np.array([[0.5, -1.0, 1.5], [-0.5, 2.0, 0.25]]),
                               np.array([[1.0, 0.0, -2.0], [0.0, -0.75, 1.0]])])],
    "TensorScatterMin": [Case(lambda x, v: tf.tensor_scatter_nd_min(x, ROWS, v) * x,
                              [np.array([[0.5, -1.0, 1.5], [-0.5, 2.0, 0.25]]),
                               np.array([[1.0, 0.0, -2.0], [0.0, -0.75, 1.0]])])],
}
NOT_DIFFERENTIABLE = []
