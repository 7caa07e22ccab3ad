"""While gradients in linear time (WhileGrad): body evaluations counted, values checked against
the eager Python loop and finite differences, first and second order."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.runtime.registry import KERNELS

from test_control_flow import grads, numeric



def sin_loop(x, w, n):
    return tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, tf.sin(s) * w + 0.5 * s),
                         (0, x))[1]


@tf.function
def loop_gradient(x, w, n):
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        y = tf.reduce_sum(sin_loop(x, w, n) ** 2)
    return tape.gradient(y, [x, w])


@pytest.mark.parametrize("n", [5, 10, 40])
def test_a_loop_gradient_evaluates_each_body_once_not_once_per_backward_step(sin_calls, n):
    """Linear without timing: the loop and its gradient in one program run one forward loop
    (passes/share_loops.py), n bodies; the n backward steps read stacked residuals (cos of
    the state), never the body. (Recomputing the state per backward step, as before, took
    n + n(n+1)/2 evaluations; a second forward for WhileGrad's stacks, 2n.)"""
    x, w = tf.constant(np.linspace(-1, 1, 4)), tf.constant(np.full(4, 0.3))
    loop_gradient(x, w, tf.constant(n))            # trace outside the count
    sin_calls[0] = 0
    loop_gradient(x, w, tf.constant(n))
    assert sin_calls[0] == n


def test_loop_gradient_matches_the_eager_loop_and_finite_differences():
    x, w = np.array([0.3, -0.7, 1.1]), np.array([0.9, 1.2, -0.4])

    def loss(a, b):
        return tf.reduce_sum(sin_loop(a, b, 6) ** 2)
    y, g = grads(tf.function(loss), x, w)
    want_y, want_g = grads(loss, x, w)
    assert float(y) == pytest.approx(float(want_y), rel=1e-12)
    for got, want, num in zip(g, want_g, numeric(loss, [x, w]), strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
        np.testing.assert_allclose(got.numpy(), num, rtol=1e-6, atol=1e-9)


def second(fn, x, w):
    """d(sum of fn's gradients)/d(x, w), with nested tapes."""
    x, w = tf.constant(x), tf.constant(w)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([x, w])
        with tf.GradientTape() as inner:
            inner.watch([x, w])
            y = fn(x, w)
        gx, gw = inner.gradient(y, [x, w])
        total = tf.reduce_sum(gx) + tf.reduce_sum(gw)
    return outer.gradient(total, [x, w])


def test_second_order_loop_gradient_matches_the_eager_loop():
    x, w = np.array([0.3, -0.7]), np.array([0.9, 1.2])

    def loss(a, b):
        return tf.reduce_sum(sin_loop(a, b, 4) ** 2)
    for got, want in zip(second(tf.function(loss), x, w), second(loss, x, w), strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)


def test_several_loop_variables_operands_and_zero_iterations():
    """Two float loop variables feeding each other, an int one, a captured matrix; n = 0 too."""
    m = tf.constant(np.array([[0.5, -0.2], [0.1, 0.3]]))

    def f(a, b, n):
        def body(i, h, c):
            return i + 1, tf.tanh(h @ m + c), c * 0.9 + tf.reduce_sum(h)
        _, h, c = tf.while_loop(lambda i, h, c: i < n, body, (0, a, b))
        return tf.reduce_sum(h * h) + tf.reduce_sum(c)
    a, b = np.array([[0.2, -0.4]]), np.array([0.7, 0.1])
    for n in (0, 1, 5):
        y, g = grads(tf.function(f), a, b, np.int32(n))
        want_y, want_g = grads(f, a, b, np.int32(n))
        assert float(y) == pytest.approx(float(want_y), rel=1e-12)
        for got, want in zip(g[:2], want_g[:2], strict=True):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
        assert g[2] is None


def test_loop_gradient_inside_a_function_is_one_while_grad_node():
    graph = loop_gradient.get_concrete_function(
        tf.constant(np.zeros(3)), tf.constant(np.zeros(3)), tf.constant(3)).graph
    ops = [node.op for node in graph.nodes]
    assert ops.count("WhileGrad") == 1 and ops.count("While") == 1


@pytest.mark.parametrize("n", [5, 10, 40])
def test_a_tape_across_the_function_boundary_runs_the_body_once_forward_once_backward(n):
    """Through a function (the tape outside) the forward program runs the loop once (n
    bodies), returning its stacks as residuals (WhileStacks, passes/keep_stacks.py), and the
    backward program's WhileGradStacks reads them: n body gradients, no body re-run. Counted
    per kernel: the body is one Sin, its gradient one Cos. (Inside one function the two
    loops share one forward too: the test above.)"""
    counts = {"Sin": 0, "Cos": 0}
    kernels = {op: KERNELS[op] for op in counts}

    def counting(op):
        def run(*args, **attrs):
            counts[op] += 1
            return kernels[op](*args, **attrs)
        return run
    x, w = tf.constant(np.linspace(-1, 1, 4)), tf.constant(np.full(4, 0.3))
    f = tf.function(lambda a, b, k: tf.reduce_sum(sin_loop(a, b, k) ** 2))
    with tf.GradientTape() as tape:                # trace outside the count
        tape.watch([x, w])
        y = f(x, w, tf.constant(n))
    tape.gradient(y, [x, w])
    try:
        for op in counts:
            KERNELS[op] = counting(op)
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            y = f(x, w, tf.constant(n))
        forward = dict(counts)
        tape.gradient(y, [x, w])
    finally:
        KERNELS.update(kernels)
    assert forward == {"Sin": n, "Cos": 0}
    assert counts == {"Sin": n, "Cos": n}
