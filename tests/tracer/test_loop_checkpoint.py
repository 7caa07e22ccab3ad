"""Loop gradients under a memory budget: past ``TAPEFLOW_LOOP_MEMORY_MB`` (or a
``tapeflow.config.loop_memory`` scope) WhileGrad keeps every k-th state and recomputes each
segment before the backward walks it. Same gradients as the stacks, first and second order,
on the interpreter and compiled; the body evaluations counted (no timing)."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.runtime.kernels.loops import segment_length
from tapeflow.tracer import backend

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
    f = tf.function(lambda x, w: loss(x, w, 10))
    text = f.lower(tf.constant(X), tf.constant(W)).as_text(stages=("backward",))
    assert ("== loop gradients: 1\n   WhileGrad -> f64[4], f64[4]: 72 bytes stacked per iteration, "
            "36 bytes of loop state; budget 1073741824 bytes: stacks while n <= 14913080 "
            "iterations") in text
    with tf.config.loop_memory(0):
        g = tf.function(lambda x, w: loss(x, w, 10))
        text = g.lower(tf.constant(X), tf.constant(W)).as_text(stages=("backward",))
    assert ("budget 0 bytes: checkpoints: the state every ceil(sqrt(n * 36 / 72)) iterations, "
            "each segment recomputed in the backward (O(sqrt n) memory)") in text
