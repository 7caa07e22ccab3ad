"""WhileGrad (a While's gradient) compiled by Numba agrees with the interpreter, including
loops long enough to grow its stacks past their first allocation, and a scalar residual."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.codegen import compile_graph
from tapeflow.runtime.interpret import run_graph
from tapeflow.tracer.engine import Interpreted

R = np.random.default_rng(5)


def loop_gradient(x, w, k):
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        def body(i, s, t):
            return i + 1, tf.tanh(s @ w) + 0.1 * s, t * 0.5 + tf.reduce_sum(tf.sin(s))
        _, s, t = tf.while_loop(lambda i, s, t: i < k, body, (0, x, tf.reduce_sum(x)))
        y = tf.reduce_sum(s * s) + t
    return tape.gradient(y, [x, w])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("k", [0, 3, 40])
def test_compiled_loop_gradient_matches_the_interpreter(dtype, k):
    x = R.normal(size=(4, 3)).astype(dtype)
    w = (0.5 * R.normal(size=(3, 3))).astype(dtype)
    args = (tf.constant(x), tf.constant(w), tf.constant(k))
    graph = tf.function(loop_gradient).get_concrete_function(*args).graph
    assert "WhileGrad" in [node.op for node in graph.nodes]
    prog = compile_graph(graph, "loop_grad")
    assert prog.fallback is None and "stack" in prog.source
    got = prog(x, w, np.int32(k))
    want = run_graph(graph, x, w, np.int32(k))
    tol = 1e-5 if dtype == "float32" else 1e-12
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def recurrence_loss(x, w, k):
    def body(i, s, t):
        return i + 1, tf.tanh(s @ w) + 0.1 * s, t * 0.5 + tf.reduce_sum(tf.sin(s))
    _, s, t = tf.while_loop(lambda i, s, t: i < k, body, (0, x, tf.reduce_sum(x)))
    return tf.reduce_sum(s * s) + t


def halving_loss(x, w, k):
    """A loop whose trip count is known only at its end (the stacks double as they fill)."""
    def body(j, s):
        return j // 2, tf.sin(s * w) + s
    return tf.reduce_sum(tf.while_loop(lambda j, s: j > 0, body, (k, x))[1] ** 2)


@pytest.mark.parametrize("budget", [None, 0])
@pytest.mark.parametrize("fn,k", [(recurrence_loss, 0), (recurrence_loss, 3),
                                  (recurrence_loss, 40), (halving_loss, 1000)])
def test_a_tape_across_the_call_compiled_matches_the_interpreter(fn, k, budget):
    """The forward program returns the loop's stacks (WhileStacks: sized at run time), the
    backward program reads them (WhileGradStacks); past the budget (0 bytes) the stacks come
    back empty and the backward checkpoints. Compiled, both programs agree with the
    interpreter running the same two graphs on the same inputs."""
    x = R.normal(size=(4, 3))
    w = 0.5 * R.normal(size=(3, 3)) if fn is recurrence_loss else R.normal(size=(3,))
    args = (tf.constant(x), tf.constant(w), tf.constant(k))
    if budget is None:
        f = tf.function(fn)
    else:
        with tf.config.loop_memory(budget):
            f = tf.function(fn)
            f.get_concrete_function(*args).tape_pair()   # the budget is read when it is built
    fwd, bwd, n_res = f.get_concrete_function(*args).tape_pair()
    assert "WhileStacks" in [n.op for n in fwd.graph.nodes]
    assert "WhileGradStacks" in [n.op for n in bwd.graph.nodes]
    inputs = [x, w, np.int32(k)]
    want_fwd = run_graph(fwd.graph, *inputs)
    got_fwd = fwd.run(inputs)
    prog = fwd.program            # one program: the stacks' run-time size is its own output's
    assert not isinstance(prog, Interpreted) and prog.fallback is None
    for a, b in zip(got_fwd, want_fwd, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    if budget == 0 and k > 1:
        assert all(len(r) == 0 for r in got_fwd[-n_res:] if np.ndim(r) and r.dtype.kind == "f"
                   and np.shape(r)[1:] == (4, 3))
    cts = [np.float64(1.0)]
    want = run_graph(bwd.graph, *want_fwd[-n_res:], *cts)
    got = bwd.run([np.asarray(a) for a in got_fwd[-n_res:]] + cts)
    (prog,) = bwd._specialized.values()     # specialised on the stacks' sizes
    assert not isinstance(prog, Interpreted) and prog.fallback is None
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
