"""WhileGrad (a While's gradient) compiled by Numba agrees with the interpreter, including
loops long enough to grow its stacks past their first allocation, and a scalar residual."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.codegen import compile_graph
from tapeflow.runtime.interpret import run_graph

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
