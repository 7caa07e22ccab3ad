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
    from tapeflow.tracer import engine as backend
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


def tensor_array_loop(x, n):
    """A recurrence over ``for t in tf.range(n)`` collecting its states in a TensorArray."""
    h = tf.zeros([3], tf.float64)
    ta = tf.TensorArray(tf.float64, size=4, element_shape=[3])
    for t in tf.range(n):
        h = tf.tanh(tf.linalg.matvec(tf.constant(M), h) + x * tf.cast(t + 1, tf.float64))
        ta = ta.write(t, h)
    return ta.stack()


def test_eager_tapes_over_a_loop_compile_from_their_record(monkeypatch):
    """Fresh eager tapes over a function whose loop writes a TensorArray: from the third call
    the tape's jacobian, and a persistent tape's gradient, run as one Numba program built from
    the record (a loop in it: WhileGradStacks, reading the stacks the call's forward program
    returned), equal to the eager Python loop's."""
    from tapeflow.codegen.program import Program
    from tapeflow.tracer import engine as backend
    from tapeflow.tracer import jacobian as jac
    monkeypatch.setenv("TAPEFLOW_COMPILE_TAPE_AFTER", "3")
    old = backend.get_backend()
    tf.set_backend("numba")
    try:
        jac._PROGRAMS.clear()
        jac._GRADS.clear()
        jac._GRAD_HITS.clear()
        f = tf.function(tensor_array_loop)
        for k in range(4):
            x = tf.constant(np.array([0.3, -0.2, 0.5]) + 0.1 * k)
            got = []
            for fn in (f, tensor_array_loop):
                with tf.GradientTape(persistent=True) as tape:
                    tape.watch(x)
                    y = fn(x, tf.constant(3))
                    loss = tf.reduce_sum(y * y)
                got.append((tape.jacobian(y, x).numpy(), tape.gradient(loss, x).numpy()))
                if fn is f:
                    assert [v.report().split(": ")[-1] for v in jac.LAST] == [
                        "every op has a batching rule"]
            for a, b in zip(*got, strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
        # forward mode here (3 source elements, 12 target ones): the transposed WhileGrad
        (compiled,) = [c for c in jac._PROGRAMS.values()
                       if "WhileGradGrad" in [n.op for n in c.vec.graph.nodes]]
        assert compiled.hits == 3 and isinstance(compiled.program, Program)
        assert any(isinstance(p, Program) and "WhileGradStacks" in [n.op for n in rg.graph.nodes]
                   for rg, p in jac._GRADS.values())
    finally:
        tf.set_backend(old)


def sin_loop(x, n):
    """One Sin per forward body (the ``sin_calls`` fixture counts them); its gradient reads
    the stacked states (Cos of them), never Sin."""
    h = x
    for _ in tf.range(n):
        h = tf.sin(tf.linalg.matvec(tf.constant(M), h)) + x
    return h


@pytest.mark.parametrize("pfor", [True, False])
def test_the_jacobian_of_a_tape_over_a_call_reads_the_stacks_and_runs_no_forward_body(
        sin_calls, pfor):
    """The call's forward program returns the loop's stacks; the tape's vectorized jacobian
    batches the WhileGradStacks over the seeds (only the cotangents carry the batch), so it
    reads those stacks: 5 forward bodies for the call, none for the jacobian."""
    f = tf.function(sin_loop)
    x, n = tf.constant(X[0]), tf.constant(5)
    f(x, n)                                                   # traced and optimized once
    sin_calls[0] = 0
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = f(x, n)
    assert sin_calls[0] == 5
    got = tape.jacobian(y, x, experimental_use_pfor=pfor)
    assert sin_calls[0] == 5
    with tf.GradientTape(persistent=True) as eager:
        eager.watch(x)
        y_eager = sin_loop(x, n)
    np.testing.assert_allclose(got.numpy(), eager.jacobian(y_eager, x).numpy(),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got.numpy(), finite_jacobian(lambda v: sin_loop(v, n), X[0]),
                               atol=1e-8)


def finite_jacobian(f, x, eps=1e-6):
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = eps
        cols.append((f(tf.constant(x + e)).numpy() - f(tf.constant(x - e)).numpy()) / (2 * eps))
    return np.stack(cols, axis=-1)
