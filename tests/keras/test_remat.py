"""keras.remat (tf.recompute_grad on Keras' TensorFlow backend): same values and gradients, the
forward run keeps nothing on the tape, and the backward pass runs the function again."""
import numpy as np

import tapeflow as tf


def _chain(x, scale=1.0):
    for _ in range(4):
        x = tf.sin(x) * x
    return x * scale


def test_remat_recomputes_in_the_backward_and_keeps_nothing():
    calls = []

    def f(x, scale=1.0):
        calls.append(1)
        return _chain(x, scale)

    x = tf.constant(np.linspace(0.5, 2.0, 50, dtype=np.float32))
    with tf.GradientTape() as plain_tape:
        plain_tape.watch(x)
        y_plain = _chain(x, 2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.keras.remat(f)(x, scale=2.0)
    assert len(calls) == 1
    assert tape.saved_bytes() < plain_tape.saved_bytes() / 4      # no intermediate kept
    np.testing.assert_array_equal(y.numpy(), y_plain.numpy())
    g = tape.gradient(y, x)
    assert len(calls) == 2                                        # ran again for the gradient
    np.testing.assert_allclose(g.numpy(), plain_tape.gradient(y_plain, x).numpy(), rtol=1e-6)


def test_remat_of_a_layer_gives_its_weights_gradients_eager_and_compiled(numpy_backend):
    layer = tf.keras.layers.Dense(3, activation="tanh")
    layer.build((None, 2))
    x = tf.constant([[1.0, -2.0], [0.5, 0.25]])

    def grads(fn):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(fn(x) ** 2)
        return tape.gradient(y, layer.trainable_variables)

    expected = grads(layer)
    rematted = tf.keras.remat(layer)
    for got in (grads(rematted), tf.function(lambda: grads(rematted))()):
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-6)
