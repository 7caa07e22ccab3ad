"""Loops under vectorized jacobians: While and WhileGrad have batching rules, so a loop in a
jacobian is one batched loop (``tapeflow dump`` reports no op looped over the batch), equal
to the loop path (``experimental_use_pfor=False``) and to finite differences."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.passes.vectorize import loop_reference, vectorize
from tapeflow.runtime.interpret import run_graph

M = np.array([[0.5, -0.3, 0.2], [0.1, 0.4, -0.2], [0.3, 0.2, 0.1]])


def rnn(x, n):
    """A tanh recurrence over the rows of x ([B, 3]) for n steps, with a loop-invariant input."""
    def body(i, h):
        return i + 1, tf.tanh(tf.matmul(h, M) + 0.5 * x)
    return tf.while_loop(lambda i, h: i < n, body, (0, x))[1]


def jacobians(x, n, pfor=True):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = rnn(x, n)
    return (tape.jacobian(y, x, experimental_use_pfor=pfor),
            tape.batch_jacobian(y, x, experimental_use_pfor=pfor))


def finite_differences(x, n, eps=1e-6):
    def f(v):
        h = v
        for _ in range(n):
            h = np.tanh(h @ M + 0.5 * v)
        return h
    out = np.zeros(x.shape + x.shape)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = eps
        out[(...,) + idx] = (f(x + e) - f(x - e)) / (2 * eps)
    return out


X = np.linspace(-0.8, 0.9, 12).reshape(4, 3)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_jacobians_of_a_loop_in_a_function_are_one_batched_loop(n):
    f = tf.function(jacobians)
    x, count = tf.constant(X), tf.constant(n)
    j, jb = f(x, count)
    lj, ljb = f(x, count, pfor=False)
    full = finite_differences(X, n)
    np.testing.assert_allclose(j.numpy(), lj.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(jb.numpy(), ljb.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(j.numpy(), full, atol=1e-8)
    np.testing.assert_allclose(jb.numpy(), np.einsum("bibj->bij", full), atol=1e-8)
    text = f.lower(x, count).as_text(stages=("jacobians",))
    assert "looped over the batch" not in text
    assert text.count("every op has a batching rule") == 2


def test_a_while_with_batched_loop_variables_is_one_while_with_a_shared_counter():
    graph = tf.function(rnn).get_concrete_function(tf.constant(X), tf.constant(3)).graph
    xs = np.stack([X, 2 * X, -X])
    v = vectorize(graph, [True, False], 3)
    assert v.fallbacks == [] and [n.op for n in v.graph.nodes].count("While") == 1
    (loop,) = [n for n in v.graph.nodes if n.op == "While"]
    assert [o.aval.shape for o in loop.outputs] == [(), (3, 4, 3), ()]    # i stays a scalar
    got = run_graph(v.graph, xs, np.int32(3))
    want = run_graph(loop_reference(graph, [True, False], 3).graph, xs, np.int32(3))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-14)
    np.testing.assert_allclose(got[0][1], run_graph(graph, 2 * X, np.int32(3))[0], rtol=1e-14)


def test_rows_running_different_trip_counts_loop_over_the_batch_and_say_so():
    graph = tf.function(rnn).get_concrete_function(tf.constant(X), tf.constant(3)).graph
    counts = np.array([0, 2, 5], np.int32)
    v = vectorize(graph, [False, True], 3, warn=False)
    assert v.fallbacks == ["While"]
    got = run_graph(v.graph, X, counts)[0]
    for row, n in zip(got, counts, strict=True):
        np.testing.assert_allclose(row, run_graph(graph, X, n)[0], rtol=1e-14)


def test_compiled_jacobians_of_a_loop_equal_the_interpreter():
    from tapeflow.tracer import backend
    x, count = tf.constant(X), tf.constant(4)
    want = tf.function(jacobians)(x, count)
    old = backend.get_backend()
    tf.set_backend("numba")
    try:
        got = tf.function(jacobians)(x, count)
    finally:
        tf.set_backend(old)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-14)
