"""Second-order loop gradients in linear time: WhileGrad's gradient is one WhileGradGrad op
(four passes over stacks), counted in body evaluations (no timing), equal to the eager
Python loop's second order, on the interpreter and compiled."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.tracer import engine as backend

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


def third(fn, x, w):
    """d/dx of the sum of d/dx of the sum of dy/dx (nested tapes), y = fn(x, w)."""
    x, w = tf.constant(x), tf.constant(w)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = fn(x, w)
            g1 = tf.reduce_sum(t1.gradient(y, x))
        g2 = tf.reduce_sum(t2.gradient(g1, x))
    return t3.gradient(g2, x)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_third_order_through_and_inside_a_function_equals_the_eager_loop(n):
    """Third order differentiates WhileGradGrad's expansion (plain While ops: O(n^2), any
    order): through a function under three tapes, and with the tapes inside it."""
    want = third(lambda a, b: loss(a, b, n), X, W).numpy()
    got = third(tf.function(lambda a, b: loss(a, b, tf.constant(n))), X, W).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    inside = tf.function(lambda a, b: third(lambda p, q: loss(p, q, tf.constant(n)), a, b))
    np.testing.assert_allclose(inside(tf.constant(X), tf.constant(W)).numpy(), want,
                               rtol=1e-10, atol=1e-12)
    if n:
        assert np.any(want != 0)
