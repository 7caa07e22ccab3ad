"""``tf.autodiff.ForwardAccumulator``: JVPs, each case with TensorFlow 2.21's result."""
import numpy as np

import tapeflow as tf


def _close(t, expected):
    np.testing.assert_allclose(np.asarray(t), np.float32(expected), rtol=2e-6, atol=1e-6)


def test_jvp_values_and_unconnected():
    x = tf.constant([1., 2., 3.])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1., 0., 0.])) as acc:
        y = tf.reduce_sum(tf.sin(x) * x)
        z = x * 2.
        w = tf.constant(3.)
    _close(acc.jvp(y), 1.3817732)                 # TF: 1.3817732
    _close(acc.jvp(z), [2., 0., 0.])              # TF: [2. 0. 0.]
    assert acc.jvp(w) is None                     # TF: None
    _close(acc.jvp(w, unconnected_gradients=tf.UnconnectedGradients.ZERO), 0.)   # TF: 0.0


def test_jvp_of_several_primals_and_a_structure():
    x, v = tf.constant([1., 2., 3.]), tf.Variable([0.5, -1., 2.])
    with tf.autodiff.ForwardAccumulator([x, v], [tf.ones(3), tf.constant([1., 2., 3.])]) as acc:
        y = tf.reduce_sum(x * v ** 2)
    _close(acc.jvp(y), 34.25)                     # TF: 34.25
    out = acc.jvp([y, {"a": y}])                  # TF: [34.25, {'a': 34.25}]
    _close(out[0], 34.25)
    _close(out[1]["a"], 34.25)


def test_jvp_inside_a_function(numpy_backend):
    @tf.function
    def f(x):
        with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
            y = tf.tanh(x) ** 2
        return acc.jvp(y)

    _close(f(tf.constant([1., 2., 3.])), [0.6397, 0.13621867, 0.01963465])   # TF


def test_hessian_vector_product_over_a_tape():
    x = tf.constant([1., 2., 3.])
    with tf.autodiff.ForwardAccumulator(x, tf.ones(3)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(x ** 3)
        g = tape.gradient(y, x)
    _close(acc.jvp(g), [6., 12., 18.])            # TF: [ 6. 12. 18.]
