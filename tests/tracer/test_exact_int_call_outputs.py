"""The gradient of an integer output of a function call (issue 17 item 6a).

Inside a traced function TensorFlow records a nested call as one op whose gradient runs
the callee's backward function with zeros for its float outputs, so an integer output as
the target gives zeros to the sources that reach a float output; eagerly (and through a
function under an eager tape) the integer output is not tracked and the gradient is None.
Every expected value below is TensorFlow 2.21's output for the same code.
"""
import numpy as np
import pytest

import tapeflow as tf


@pytest.fixture(autouse=True)
def interpreter(numpy_backend):
    yield


X = [1.5, 2.5]
W = [3.0, -1.0]


@tf.function
def float_and_int(x):
    return x * 2.0, tf.cast(x, tf.int32)


@tf.function
def w_float_x_int(x, w):
    return w * 2.0, tf.cast(x, tf.int32)


@tf.function
def only_int(x):
    return tf.cast(x, tf.int32)


@tf.function
def product_and_int(x, w):
    return x * w, tf.cast(x, tf.int32) + 1


def _values(r):
    if isinstance(r, (list, tuple)):
        return [None if t is None else t.numpy().tolist() for t in r]
    return None if r is None else r.numpy().tolist()


def test_inside_a_function_the_int_output_gives_zeros():
    x = tf.constant(X)

    @tf.function
    def g():
        with tf.GradientTape() as t:
            t.watch(x)
            _, b = float_and_int(x)
        return t.gradient(b, x)
    assert _values(g()) == [0.0, 0.0]      # TensorFlow 2.21 gives [0., 0.]


def test_only_sources_reaching_a_float_output_get_zeros():
    x, w = tf.constant(X), tf.constant(W)

    @tf.function
    def g():
        with tf.GradientTape() as t:
            t.watch([x, w])
            _, b = w_float_x_int(x, w)
        return t.gradient(b, [x, w])
    assert _values(g()) == [None, [0.0, 0.0]]      # TensorFlow 2.21 gives [None, [0., 0.]]


def test_zeros_are_the_backward_function_on_zero_seeds():
    x, w = tf.constant(X), tf.constant(W)

    @tf.function
    def g():
        with tf.GradientTape() as t:
            t.watch([x, w])
            _, b = product_and_int(x, w)
        return t.gradient(b, [x, w])
    gx, gw = g()
    assert _values([gx, gw]) == [[0.0, 0.0], [0.0, 0.0]]
    assert np.signbit(gx.numpy()).tolist() == [False, True]   # TensorFlow: [0.0, -0.0] (0 * w)


@pytest.mark.parametrize("case", ["only_int", "int_op_after", "both_targets", "jacobian",
                                  "jacobian_zero", "batch_jacobian", "output_gradients"])
def test_other_cases_inside_a_function(case):
    x = tf.constant(X)

    @tf.function
    def g():
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            a, b = float_and_int(x)
            c = b * 2
            d = only_int(x)
        if case == "only_int":
            return t.gradient(d, x)
        if case == "int_op_after":
            return t.gradient(c, x)
        if case == "both_targets":
            return t.gradient([a, b], x)
        if case == "jacobian":
            return t.jacobian(b, x)
        if case == "jacobian_zero":
            return t.jacobian(b, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        if case == "output_gradients":
            return t.gradient(b, x, output_gradients=tf.constant([1, 1]))
        xx = tf.reshape(x, [2, 1])
        with tf.GradientTape(persistent=True) as t2:
            t2.watch(xx)
            _, bb = float_and_int(xx)
        return t2.batch_jacobian(bb, xx)
    # TensorFlow 2.21 gives:
    want = {"only_int": None, "int_op_after": None, "both_targets": [2.0, 2.0],
            "jacobian": None, "jacobian_zero": [[0.0, 0.0], [0.0, 0.0]],
            "batch_jacobian": [[[0]], [[0]]], "output_gradients": [0.0, 0.0]}[case]
    got = g()
    assert _values(got) == want
    if case == "batch_jacobian":
        assert got.dtype == tf.int32        # TensorFlow: int32 zeros
    if case == "jacobian_zero":
        assert got.dtype == tf.float32      # TensorFlow: the source's dtype


@pytest.mark.parametrize("through", [False, True])
def test_eagerly_and_through_a_function_the_int_output_gives_none(through):
    x, w = tf.constant(X), tf.constant(W)

    def body(x, w):
        return product_and_int(x, w)
    fn = tf.function(body) if through else body
    with tf.GradientTape() as t:
        t.watch([x, w])
        _, b = fn(x, w)
    assert _values(t.gradient(b, [x, w])) == [None, None]   # TensorFlow 2.21: [None, None]
