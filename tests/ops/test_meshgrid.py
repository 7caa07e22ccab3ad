"""tf.meshgrid, eagerly and inside function, against TensorFlow 2.21's answers."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

X_IN, Y_IN = [1.0, 2.0, 3.0], [10.0, 20.0]


@pytest.mark.parametrize("wrap", ["eager", "function"])
def test_meshgrid_values_and_gradient(wrap, numpy_backend):
    def run(x, y):
        with tf.GradientTape() as t:
            t.watch([x, y])
            X, Y = tf.meshgrid(x, y)
            z = tf.reduce_sum(X * Y * X)
        Xij, Yij = tf.meshgrid(x, y, indexing="ij")
        return X, Y, Xij, Yij, t.gradient(z, [x, y])
    f = run if wrap == "eager" else tf.function(run)
    X, Y, Xij, Yij, (gx, gy) = f(tf.constant(X_IN), tf.constant(Y_IN))
    # TensorFlow 2.21 gives these
    assert X.numpy().tolist() == [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    assert Y.numpy().tolist() == [[10.0, 10.0, 10.0], [20.0, 20.0, 20.0]]
    assert Xij.numpy().tolist() == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
    assert Yij.numpy().tolist() == [[10.0, 20.0], [10.0, 20.0], [10.0, 20.0]]
    np.testing.assert_allclose(gx.numpy(), [60.0, 120.0, 180.0])
    np.testing.assert_allclose(gy.numpy(), [14.0, 14.0])


def test_meshgrid_shapes_and_edge_cases():
    a, b, c = tf.meshgrid(tf.constant(X_IN), tf.constant(Y_IN), tf.constant([5., 6., 7., 8.]))
    assert a.shape == b.shape == c.shape == (2, 3, 4)     # TF 2.21: (2, 3, 4) each
    assert c.numpy()[1, 2].tolist() == [5., 6., 7., 8.]
    one = tf.meshgrid(tf.constant(X_IN))
    assert len(one) == 1 and one[0].shape == (3,)
    assert tf.meshgrid() == []
    # TF 2.21: InvalidArgumentError (the ones are in the first input's dtype)
    with pytest.raises(InvalidArgumentError):
        tf.meshgrid(tf.constant([1.0]), tf.constant([1, 2]))
    with pytest.raises(ValueError, match="indexing"):
        tf.meshgrid(tf.constant([1.0]), indexing="xyz")


def test_meshgrid_with_an_unknown_size(numpy_backend):
    @tf.function(input_signature=[tf.TensorSpec([None]), tf.TensorSpec([None])])
    def f(x, y):
        return tf.meshgrid(x, y)[1]
    assert f(tf.constant(X_IN), tf.constant(Y_IN)).numpy().tolist() == \
        [[10.0, 10.0, 10.0], [20.0, 20.0, 20.0]]
    assert f(tf.constant([1.0]), tf.constant([4.0, 5.0])).numpy().tolist() == [[4.0], [5.0]]
