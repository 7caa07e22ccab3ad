"""Second-order loop gradients in linear time: WhileGrad's gradient is one WhileGradGrad op
(four passes over stacks), counted in body evaluations (no timing), equal to the eager
Python loop's second order, on the interpreter and compiled."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.tracer import backend

from test_loops_grad import second

X, W = np.array([0.3, -0.7, 0.5]), np.array([0.9, 1.2, -0.4])


def loss(x, w, n):
    s = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, tf.sin(s) * w + 0.5 * s),
                      (0, x))[1]
    return tf.reduce_sum(s ** 2)


def make_hessian_sum():
    @tf.function
    def hessian_sum(x, w, n):
        with tf.GradientTape() as outer:
            outer.watch([x, w])
            with tf.GradientTape() as inner:
                inner.watch([x, w])
                y = loss(x, w, n)
            gx, gw = inner.gradient(y, [x, w])
            total = tf.reduce_sum(gx) + tf.reduce_sum(gw)
        return outer.gradient(total, [x, w])
    return hessian_sum



def test_second_order_is_one_while_grad_grad_and_linear_in_body_evaluations(sin_calls):
    """Sin evaluations at n = 0, 10, 20, 40 lie on a line (the O(n^2) expansion gave
    n + n(n+1)/2 and more): a constant number per iteration, counted."""
    fn = make_hessian_sum()
    args = (tf.constant(X), tf.constant(W))
    ops = [node.op for node in fn.get_concrete_function(*args, tf.constant(1)).graph.nodes]
    assert ops.count("WhileGradGrad") == 1
    counts = []
    for n in (0, 10, 20, 40):
        sin_calls[0] = 0
        fn(*args, tf.constant(n))
        counts.append(sin_calls[0])
    per = (counts[1] - counts[0]) / 10
    assert counts == [counts[0] + per * n for n in (0, 10, 20, 40)]
    assert per <= 6


@pytest.mark.parametrize("n", [1, 4])
def test_second_order_equals_the_eager_loop(n):
    want = second(lambda a, b: loss(a, b, n), X, W)
    got = make_hessian_sum()(tf.constant(X), tf.constant(W), tf.constant(n))
    for g, e in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_compiled_second_order_equals_the_interpreter(dtype):
    args = (tf.constant(X.astype(dtype)), tf.constant(W.astype(dtype)), tf.constant(5))
    want = make_hessian_sum()(*args)
    old = backend.get_backend()
    tf.set_backend("numba")
    try:
        got = make_hessian_sum()(*args)
    finally:
        tf.set_backend(old)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for g, e in zip(got, want, strict=True):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=tol, atol=tol)
