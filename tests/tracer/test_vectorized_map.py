"""``tf.vectorized_map``: one traced row, batched by passes/vectorize; TensorFlow 2.21's results."""
import numpy as np
import pytest

import tapeflow as tf


def test_rows_mapped():
    out = tf.vectorized_map(lambda r: tf.reduce_sum(r * r), tf.constant([[1., 2.], [3., 4.]]))
    assert out.numpy().tolist() == [5., 25.]                               # TF: [ 5. 25.]


def test_structures_and_captures():
    v = tf.Variable([0.5, -1., 2.])
    a, b = tf.vectorized_map(lambda e: (e[0] * 2., e[1] + v[0]),
                             (tf.constant([1., 2.]), tf.constant([[1.], [2.]])))
    assert a.numpy().tolist() == [2., 4.]                                  # TF: [2. 4.]
    assert b.numpy().tolist() == [[1.5], [2.5]]                            # TF: [[1.5] [2.5]]


def test_shapes_and_rows_not_depending_on_the_input():
    assert tuple(tf.vectorized_map(lambda r: tf.matmul(r, tf.ones([2, 3])),
                                   tf.ones([4, 1, 2])).shape) == (4, 1, 3)  # TF: (4, 1, 3)
    assert tf.vectorized_map(lambda r: tf.constant(1.0),
                             tf.ones([4, 2])).numpy().tolist() == [1.] * 4  # TF: [1. 1. 1. 1.]


def test_inside_a_function(numpy_backend):
    @tf.function
    def g(m):
        return tf.vectorized_map(lambda r: tf.linalg.det(r), m)

    np.testing.assert_allclose(g(tf.eye(2, batch_shape=[3]) * 2.).numpy(), [4., 4., 4.])  # TF


def test_differentiable():
    x = tf.constant([[1., 2.], [3., 4.]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        s = tf.reduce_sum(tf.vectorized_map(lambda r: tf.reduce_sum(tf.sin(r)), x))
    np.testing.assert_allclose(tape.gradient(s, x).numpy(), np.cos(np.float32([[1, 2], [3, 4]])),
                               rtol=1e-6)                                  # TF: cos(x)


def test_scalar_elems_are_an_error():
    with pytest.raises(ValueError):   # TF: an (IndexError) error too
        tf.vectorized_map(lambda r: r, tf.constant(1.))
