"""tapeflow.grad / value_and_grad (API.md, "Beyond TF"): compiled, equal to the eager tape."""
import numpy as np
import pytest

import tapeflow as tf


def loss(w, x, b):
    return tf.reduce_mean(tf.tanh(x @ w + b) ** 2)


def eager_grads(w, x, b):
    with tf.GradientTape() as tape:
        tape.watch([w, b])
        y = loss(w, x, b)
    return y, tape.gradient(y, [w, b])


def test_value_and_grad_equals_the_eager_tape_and_traces_once(rng):
    vg = tf.value_and_grad(loss, argnums=(0, 2))
    for batch in (4, 4, 4):
        w, x, b = (tf.constant(rng.standard_normal(s)) for s in ((3, 2), (batch, 3), (2,)))
        value, (gw, gb) = vg(w, x, b)
        ref, (rw, rb) = eager_grads(w, x, b)
        np.testing.assert_allclose(value.numpy(), ref.numpy(), rtol=1e-12)
        np.testing.assert_allclose(gw.numpy(), rw.numpy(), rtol=1e-12)
        np.testing.assert_allclose(gb.numpy(), rb.numpy(), rtol=1e-12)
    assert vg.compiled.experimental_get_tracing_count() == 1


def test_grad_of_one_argument_python_numbers_and_unconnected_zeros():
    g = tf.grad(lambda x, y: x * x * 3.0)
    assert float(g(2.0, 5.0)) == 12.0
    gy = tf.grad(lambda x, y: x * 3.0, argnums=1)(2.0, 5.0)
    assert gy.numpy() == 0.0 and gy.dtype == tf.float32    # zeros, as JAX, not None


def test_variables_in_the_closure_are_constants_of_the_gradient():
    v = tf.Variable(3.0)
    g = tf.grad(lambda x: x * v)(tf.constant(2.0))
    assert float(g) == 3.0


def test_mistakes_are_clear():
    with pytest.raises(TypeError, match="one scalar tensor, got \\(2,\\)"):
        tf.grad(lambda x: x * 2.0)(tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="argnums must be"):
        tf.grad(lambda x: x, argnums="0")
    with pytest.raises(IndexError, match="argnums 3 is out of range for 1"):
        tf.grad(lambda x: x, argnums=3)(tf.constant(1.0))
