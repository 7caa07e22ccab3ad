"""custom_gradient (plain, variables=, structures, keyword arguments), RegisterGradient, overrides."""
import numpy as np
import pytest

import tapeflow as tf


@tf.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return tf.clip_by_norm(dy, 0.5)
    return y, backward


def test_custom_gradient_replaces_the_gradient():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = clip_gradients(v * v)
    assert float(t.gradient(output, v)) == 2.0  # backward clips 4 to 0.5, times dv*v/dv = 4


def test_custom_gradient_is_differentiable_again():
    @tf.custom_gradient
    def cube(x):
        def grad(dy):
            return dy * 3.0 * x * x
        return x * x * x, grad

    x = tf.constant(2.0)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = cube(x)
        g = t1.gradient(y, x)
    assert float(g) == 12.0 and float(t2.gradient(g, x)) == 12.0


def test_custom_gradient_with_variables_keyword():
    w = tf.Variable(3.0)

    @tf.custom_gradient
    def scale(x):
        def grad(dy, variables=None):
            return dy * w, [dy * x * 100.0]
        return x * w, grad

    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = scale(x)
    gx, gw = t.gradient(y, [x, w])
    assert float(gx) == 3.0 and float(gw) == 200.0


def test_variables_without_keyword_raise_type_error():
    w = tf.Variable(3.0)

    @tf.custom_gradient
    def scale(x):
        return x * w, lambda dy: dy * w

    with pytest.raises(TypeError, match="variables"):
        scale(tf.constant(1.0))


def test_structured_outputs_get_one_upstream_each():
    @tf.custom_gradient
    def two(x):
        def grad(da, db):
            return da * 10.0 + db * 100.0
        return {"a": x * 1.0, "b": x * 2.0}, grad

    x = tf.constant(1.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        out = two(x)
    assert float(t.gradient(out["a"], x)) == 10.0
    assert float(t.gradient(out["b"], x)) == 100.0  # the missing upstream arrives as zeros
    assert float(t.gradient([out["a"], out["b"]], x)) == 110.0


def test_keyword_arguments_are_bound_not_ignored():
    @tf.custom_gradient
    def mul(x, y):
        def grad(dy):
            return dy * y, dy * x
        return x * y, grad

    x, y = tf.constant(2.0), tf.constant(5.0)
    with tf.GradientTape() as t:
        t.watch([x, y])
        z = mul(x, y=y)
    gx, gy = t.gradient(z, [x, y])
    assert float(gx) == 5.0 and float(gy) == 2.0


def test_keyword_only_tensor_is_an_error_not_a_silent_none():
    @tf.custom_gradient
    def f(x, *, scale):
        return x * scale, lambda dy: dy * scale

    with pytest.raises(TypeError, match="keyword-only"):
        f(tf.constant(1.0), scale=tf.constant(2.0))


def test_wrong_number_of_gradients_is_reported():
    @tf.custom_gradient
    def f(x, y):
        return x * y, lambda dy: dy

    x = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        z = f(x, tf.constant(2.0))
    with pytest.raises(ValueError, match="expected to return 2 gradients"):
        t.gradient(z, x)


def test_register_gradient_and_override_map():
    @tf.RegisterGradient("TestDoubledSquareGrad")
    def _doubled(op, grad):
        return grad * 4.0 * op.inputs[0]

    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        with tf.gradient_override_map({"Square": "TestDoubledSquareGrad"}):
            y = tf.square(x)
    assert float(t.gradient(y, x)) == 12.0
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.square(x)
    assert float(t.gradient(y, x)) == 6.0
    with pytest.raises(KeyError, match="Registering two gradient"):
        tf.RegisterGradient("TestDoubledSquareGrad")(_doubled)
    with pytest.raises(KeyError):
        tf.RegisterGradient("Square")(_doubled)
    with pytest.raises(LookupError):
        with tf.gradient_override_map({"Square": "NoSuchGradient"}):
            pass
