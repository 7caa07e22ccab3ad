"""If and While compiled by Numba agree with the interpreter, gradients (nested tapes) included."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.codegen import compile_graph
from tapeflow.runtime.interpret import run_graph

R = np.random.default_rng(3)


def body(x, w, k):
    """A loop with a captured weight and an array constant, then a Python `if` and a tf.cond."""
    bias = tf.constant(np.linspace(-0.5, 0.5, 3).astype(x.dtype.np))
    s = tf.while_loop(lambda i, s: i < k, lambda i, s: (i + 1, tf.tanh(s @ w + bias)), (0, x))[1]
    if tf.reduce_sum(s) > 0:
        y = tf.reduce_sum(s * s)
    else:
        y = tf.cond(tf.reduce_max(s) > -0.5, lambda: tf.reduce_sum(s), lambda: tf.reduce_sum(s * 3.0))
    return y


@pytest.fixture(scope="module")
def graph_fn():
    return tf.function(body)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_compiled_control_flow_program_matches_the_interpreter(graph_fn, dtype, sign):
    x = (sign * np.abs(R.normal(size=(4, 3)))).astype(dtype)
    w = R.normal(size=(3, 3)).astype(dtype)
    args = (tf.constant(x), tf.constant(w), tf.constant(3))
    graph = graph_fn.get_concrete_function(*args).graph
    prog = compile_graph(graph, "control")
    assert prog.fallback is None and "while True:" in prog.source and "if " in prog.source
    got = prog(x, w, np.int32(3))
    want = run_graph(graph, x, w, np.int32(3))
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)


def test_gradients_through_compiled_control_flow_match_eager(graph_fn):
    x, w = tf.constant(R.normal(size=(4, 3))), tf.constant(R.normal(size=(3, 3)))
    k = tf.constant(2)

    def second(fn):
        with tf.GradientTape() as outer:
            outer.watch(w)
            with tf.GradientTape() as inner:
                inner.watch([x, w])
                y = fn(x, w, k)
            gx, gw = inner.gradient(y, [x, w])
            z = tf.reduce_sum(gx * gx)
        return [y, gx, gw, outer.gradient(z, w)]

    for got, want in zip(second(graph_fn), second(body), strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-12)
