"""Loop gradients under a memory budget: past ``TAPEFLOW_LOOP_MEMORY_MB`` (or a
``tapeflow.config.loop_memory`` scope) WhileGrad keeps every k-th state and recomputes each
segment before the backward walks it. Same gradients as the stacks, first and second order,
on the interpreter and compiled; the body evaluations counted (no timing)."""
import inspect
import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.runtime.kernels.loops import segment_length
from tapeflow.tracer import engine as backend

from test_control_flow import numeric
from test_loops_grad import second


def sin_loop(x, w, n):
    return tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, tf.sin(s) * w + 0.5 * s),
                         (0, x))[1]


def loss(x, w, n):
    return tf.reduce_sum(sin_loop(x, w, n) ** 2)


def make_gradient():
    """A fresh function (its gradient is built, with the budget in force, when it traces)."""
    @tf.function
    def gradient(x, w, n):
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            y = loss(x, w, n)
        return tape.gradient(y, [x, w])
    return gradient


def while_grads(fn, *args):
    graph = fn.get_concrete_function(*args).graph
    return [node for node in graph.nodes if node.op == "WhileGrad"]


X, W = np.linspace(-1, 1, 4), np.linspace(0.2, 0.9, 4)



def test_segment_length_is_n_within_the_budget_and_about_sqrt_n_beyond():
    assert segment_length(100, 8, 8, 800) == 100            # 100 rows of 8 bytes fit
    assert segment_length(100, 8, 8, 799) == 10             # sqrt(100 * 8 / 8)
    assert segment_length(100, 32, 8, 0) == 5               # rows 4x the state: shorter segments
    assert segment_length(0, 8, 8, 0) == 1 and segment_length(1, 8, 8, 0) == 1


@pytest.mark.parametrize("n", [1, 7, 10, 16])
def test_checkpointed_gradient_equals_the_stacks_and_finite_differences(n):
    x, w, count = tf.constant(X), tf.constant(W), tf.constant(n)
    stacked = make_gradient()
    with tf.config.loop_memory(0):
        checkpointed = make_gradient()
        got = checkpointed(x, w, count)
    (node,) = while_grads(checkpointed, x, w, count)
    assert node.attrs["memory_budget"] == 0
    (node,) = while_grads(stacked, x, w, count)
    assert node.attrs["memory_budget"] == 1024 * 2**20      # TAPEFLOW_LOOP_MEMORY_MB's default
    want = stacked(x, w, count)
    num = numeric(lambda a, b: loss(a, b, n), [X, W])
    for g, s, d in zip(got, want, num, strict=True):
        np.testing.assert_allclose(g.numpy(), s.numpy(), rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(g.numpy(), d, rtol=1e-6, atol=1e-9)


def test_checkpointing_recomputes_each_iteration_once_more(sin_calls):
    """n = 16 iterations, state 36 bytes (int32 + 4 float64), 64 bytes stacked per iteration
    (the residuals sin's and the product's gradients read): k = ceil(sqrt(16 * 36 / 64)) = 3.
    The forward loop runs 16 bodies; the checkpoint pass 15 (to the last segment's start);
    the segments 16 again: 47, where the stacks take 16 (the forward loop keeps the rows:
    passes/share_loops.py)."""
    x, w, count = tf.constant(X), tf.constant(W), tf.constant(16)
    with tf.config.loop_memory(0):
        fn = make_gradient()
        fn(x, w, count)
    sin_calls[0] = 0
    fn(x, w, count)
    assert sin_calls[0] == 16 + 15 + 16
    stacked = make_gradient()
    stacked(x, w, count)
    sin_calls[0] = 0
    stacked(x, w, count)
    assert sin_calls[0] == 16


def test_the_environment_budget_switches_to_checkpoints(monkeypatch):
    monkeypatch.setenv("TAPEFLOW_LOOP_MEMORY_MB", "0.0001")   # 104 bytes: two rows
    x, w, count = tf.constant(X), tf.constant(W), tf.constant(9)
    fn = make_gradient()
    (node,) = while_grads(fn, x, w, count)
    assert node.attrs["memory_budget"] == 104
    monkeypatch.delenv("TAPEFLOW_LOOP_MEMORY_MB")
    for g, s in zip(fn(x, w, count), make_gradient()(x, w, count), strict=True):
        np.testing.assert_allclose(g.numpy(), s.numpy(), rtol=1e-13)
    with tf.config.loop_memory(2):                            # the scope wins over the variable
        monkeypatch.setenv("TAPEFLOW_LOOP_MEMORY_MB", "0.0001")
        assert while_grads(make_gradient(), x, w, count)[0].attrs["memory_budget"] == 2 * 2**20


def test_second_order_through_a_checkpointed_loop():
    def f(a, b):
        return loss(a, b, 5)

    want = second(f, X, W)                           # the eager Python loop
    with tf.config.loop_memory(0):
        got = second(tf.function(f), X, W)
    for g, e in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-11)


@pytest.mark.parametrize("bad", [-1, "8", True, float("nan")])
def test_loop_memory_takes_megabytes(bad):
    with pytest.raises(ValueError, match="loop_memory takes a number of MiB >= 0"):
        with tf.config.loop_memory(bad):
            pass


@pytest.fixture(scope="module")
def compiled():
    """One compiled stacked and one compiled checkpointed gradient (Numba), shared."""
    old = backend.get_backend()
    tf.set_backend("numba")
    try:
        stacked = make_gradient()
        with tf.config.loop_memory(0):
            checkpointed = make_gradient()
            args = (tf.constant(X), tf.constant(W), tf.constant(3))
            checkpointed(*args)
        stacked(*args)
    finally:
        tf.set_backend(old)
    return stacked, checkpointed


@pytest.mark.parametrize("n", [0, 1, 5, 12])
def test_compiled_checkpoints_equal_the_interpreter(compiled, n):
    x, w, count = tf.constant(X), tf.constant(W), tf.constant(n)
    reference = make_gradient()(x, w, count)              # the interpreter (tests/tracer)
    for fn in compiled:
        for g, r in zip(fn(x, w, count), reference, strict=True):
            np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-13, atol=1e-15)


def test_the_dump_says_how_each_loop_gradient_keeps_its_values(monkeypatch):
    """A tape around the call: the forward program's WhileStacks returns the stacks, the
    backward program's WhileGradStacks reads them. The rows are sin's input and output and
    the body's 0.5 (4 + 4 + 1 float64 values: 72 bytes); the state is the counter and s
    (4 + 32 bytes)."""
    f = tf.function(lambda x, w: loss(x, w, 10))
    text = f.lower(tf.constant(X), tf.constant(W)).as_text(stages=("loops",))
    rel = os.path.relpath(__file__)                     # the dump's file:line (ir line_str)
    where = f"{__file__ if rel.startswith('..') else rel}:{LOOP_LINE}"
    every = "checkpoints every ceil(sqrt(n * 36 / 72)) iterations"
    assert text == (
        "== loop gradients of the forward under a tape: 1\n"
        f"   WhileStacks -> i32[], f64[4], i32[], f64[?], f64[?,4], f64[?,4] ({where}): the "
        "While keeping its gradient's stacks, returned with the residuals (the forward runs "
        "once)\n"
        "      per iteration: 72 bytes stacked, 36 bytes of loop state\n"
        "      mode: stacks of 16 rows, doubling as they fill (the trip count is known only at "
        f"the end), up to {2**30 // 72} rows (budget {2**30} bytes); past that, the stacks are "
        f"returned empty and the backward {every} (the forward runs again; O(sqrt n) memory)\n"
        "== loop gradients of the backward under a tape: 1\n"
        f"   WhileGradStacks -> f64[4], f64[4] ({where}): a loop's gradient over the stacks "
        "the forward program returned\n"
        "      per iteration: 72 bytes stacked, 36 bytes of loop state\n"
        "      mode: reads the n rows it is given; given none (the forward was past the "
        f"budget, {2**30} bytes), {every} (O(sqrt n) memory)")
    with tf.config.loop_memory(0):
        g = tf.function(lambda x, w: loss(x, w, 10))
        text = g.lower(tf.constant(X), tf.constant(W)).as_text(stages=("loops",))
    assert "      mode: checkpoints (budget 0 bytes): after the first iteration the stacks are " \
        f"returned empty and the backward {every}" in text
    assert text.endswith(f"given none (the forward was past the budget, 0 bytes), {every} "
                         "(O(sqrt n) memory)")


def test_the_dump_shows_the_fused_loop_a_plain_call_runs():
    """A gradient taken inside the function: a plain call runs one WhileWithGrad (the loop
    and its gradient, passes/share_loops.py). Counted (i < n, i += 1): its stacks are sized
    from the trip count; stepping by 2: they double; past the budget: checkpoints. Under a
    tape the backward differentiates that gradient: a WhileGradGrad."""
    args = (tf.constant(X), tf.constant(W), tf.constant(10))
    text = make_gradient().lower(*args).as_text(stages=("loops",))
    sections = [ln for ln in text.splitlines() if ln.startswith("==")]
    assert sections == ["== loop gradients of a plain call: 1",
                        "== loop gradients of the forward under a tape: 1",
                        "== loop gradients of the backward under a tape: 2"]
    plain = text.split("\n== ")[0]
    assert f"   WhileWithGrad -> i32[], f64[4], i32[], f64[4], f64[4] (" in plain
    assert ("the While and its gradient in one loop (the forward runs once)\n"
            "      per iteration: 72 bytes stacked, 36 bytes of loop state\n"
            "      mode: stacks allocated at the start for the trip count (a counted loop: "
            f"i < bound, i += 1), up to {2**30 // 72} rows (budget {2**30} bytes); past that, "
            "the rows are dropped and the gradient checkpoints every ceil(sqrt(n * 36 / 72)) "
            "iterations (the forward runs again; O(sqrt n) memory)") in plain
    # second order: state 36, rows 72, their cotangents 72, carry (the two gradients) 64
    assert ("a loop's second-order gradient\n      per iteration: 244 bytes stacked (36 of "
            "loop state, 72 of rows, 72 of their cotangents, 64 of carry)\n      mode: stacks "
            "of n rows, allocated when it starts (n: the trip count); no budget: it never "
            "checkpoints") in text

    @tf.function
    def every_other(x, w, n):
        with tf.GradientTape() as tape:
            tape.watch(w)
            s = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 2, tf.sin(s) * w), (0, x))[1]
            y = tf.reduce_sum(s)
        return tape.gradient(y, w)
    text = every_other.lower(*args).as_text(stages=("loops",))
    assert "mode: stacks of 16 rows, doubling as they fill (the trip count is known only at " \
           "the end), up to" in text
    with tf.config.loop_memory(0):
        text = make_gradient().lower(*args).as_text(stages=("loops",))
    assert ("mode: checkpoints (budget 0 bytes): after the first iteration the rows are "
            "dropped and the gradient checkpoints every ceil(sqrt(n * 36 / 72)) iterations "
            "(the forward runs again; O(sqrt n) memory)") in text.split("\n== ")[0]


LOOP_LINE = inspect.getsourcelines(sin_loop)[1] + 1
