"""tf.test.compute_gradient against TF 2.21's output for the same calls."""
import numpy as np
import pytest

import tapeflow as tf


def test_jacobians_are_tensorflows():
    th, nu = tf.test.compute_gradient(lambda x, y: x * y[:2], [tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0, 5.0])])
    want = ([[3.0, 0.0], [0.0, 4.0]], [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])   # TF 2.21: both exact
    for got in (th, nu):
        assert [a.tolist() for a in got] == list(want) and got[0].dtype == np.float32
    th, nu = tf.test.compute_gradient(lambda x: tf.sin(x), [tf.constant([[1.0, 2.0]], tf.float64)], delta=1e-4)
    np.testing.assert_allclose(th[0], [[0.54030231, 0.0], [0.0, -0.41614684]], rtol=1e-8)
    np.testing.assert_allclose(nu[0], [[0.5403023, 0.0], [0.0, -0.41614684]], rtol=1e-7)
    th, nu = tf.test.compute_gradient(lambda x: tf.reduce_sum(x * x), [tf.constant(3.0)])
    assert th[0].tolist() == [[6.0]] and nu[0].tolist() == [[6.0]]
    with pytest.raises(ValueError):
        tf.test.compute_gradient(lambda x: x, tf.constant(1.0))
