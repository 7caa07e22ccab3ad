"""Loop gradients inside a function traced with ``None`` dims: the bytes a loop keeps per
iteration are known only when it runs, so the kernels measure the first iteration's rows
(runtime/kernels/loops.py) and the dump says so. One trace serves every size; gradients equal
an eager Python loop's, to second order, stacked and checkpointed, interpreted and compiled."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import cli
from tapeflow.tracer import engine as backend

SPEC = [tf.TensorSpec([None, 3], tf.float64)]


def loop_gradient(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        h = x
        for _ in tf.range(4):
            h = tf.tanh(h * 1.5) + 0.1 * h
        loss = tf.reduce_sum(h * h)
    return tape.gradient(loss, x)


def eager(x):
    """The same loop as a Python loop on an eager tape."""
    with tf.GradientTape() as tape:
        tape.watch(x)
        h = x
        for _ in range(4):
            h = tf.tanh(h * 1.5) + 0.1 * h
        loss = tf.reduce_sum(h * h)
    return tape.gradient(loss, x)


def rows(n):
    return tf.constant(np.random.default_rng(n).standard_normal((n, 3)))


@pytest.mark.parametrize("budget", [None, 0.0])
def test_one_trace_every_size_the_eager_gradient(budget):
    traces = []

    def body(x):
        traces.append(x.shape.as_list())
        return loop_gradient(x)
    if budget is None:
        fn = tf.function(body, input_signature=SPEC)
    else:
        with tf.config.loop_memory(budget):          # checkpoints from the first row
            fn = tf.function(body, input_signature=SPEC)
            fn(rows(1))
    for n in (5, 2, 0, 1):
        np.testing.assert_allclose(fn(rows(n)).numpy(), eager(rows(n)).numpy(), rtol=1e-13, atol=1e-15)
    assert traces == [[None, 3]]


def test_second_order_through_the_loop():
    @tf.function(input_signature=SPEC)
    def hvp(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            g = loop_gradient(x)
            s = tf.reduce_sum(g * g)
        return outer.gradient(s, x)
    for n in (3, 1):
        x = rows(n)
        with tf.GradientTape() as outer:
            outer.watch(x)
            g = eager(x)
            s = tf.reduce_sum(g * g)
        np.testing.assert_allclose(hvp(x).numpy(), outer.gradient(s, x).numpy(), rtol=1e-12, atol=1e-14)


def test_compiled_equals_eager():
    old = backend.get_backend()
    tf.set_backend("numba")
    try:
        fn = tf.function(loop_gradient, input_signature=SPEC, jit_compile=True)
        for n in (5, 2):
            np.testing.assert_allclose(fn(rows(n)).numpy(), eager(rows(n)).numpy(), rtol=1e-13, atol=1e-15)
    finally:
        tf.set_backend(old)


def test_the_dump_says_the_sizes_are_known_when_it_runs(capsys, tmp_path):
    path = tmp_path / "none_loop.py"
    path.write_text("import tapeflow as tf\n\n\ndef g(x):\n    with tf.GradientTape() as tape:\n"
                    "        tape.watch(x)\n        h = x\n        for _ in tf.range(4):\n"
                    "            h = tf.tanh(h * 1.5)\n        loss = tf.reduce_sum(h * h)\n"
                    "    return tape.gradient(loss, x)\n")
    assert cli.main(["dump", f"{path}:g", "--spec", "f64[?,3]", "--stage", "loops"]) == 0
    out = capsys.readouterr().out
    assert "per iteration: sizes known only when it runs (a function traced with None dims)" in out
    assert "mode: stacks while n rows fit the budget (1073741824 bytes), else checkpoints; " \
           "decided when the loop runs" in out
