"""``tape.saved_bytes()`` counts what a compiled loop's gradient will hold, and
``saved_bytes(detail=True)`` names each loop with its mode: plain stacks while the rows fit
the budget, checkpoints past it. The expected bytes are worked out here by hand from the
loop's shapes, not by the library's own functions."""
import inspect
import math
import os

import numpy as np
import pytest

import tapeflow as tf

X = np.linspace(-0.9, 0.8, 5)         # f64[5]: 40 bytes

# The loop body below is (i + 1, sin(s)). sin's gradient reads its input, so each iteration
# stacks one f64[5] row (40 bytes); the loop state is i (int32, 4 bytes) and s (40 bytes).
ROW, STATE = 40, 44
# The call saves x (40 bytes) and three int32 scalars: the bound n (an operand of the loop's
# body), the counter's start value and the trip count.
TENSORS = 40 + 3 * 4


def sines(x, n):
    return tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, tf.sin(s)), (0, x))[1]


def record(fn, n):
    x = tf.constant(X)
    tape = tf.GradientTape()
    with tape:
        tape.watch(x)
        y = fn(x, tf.constant(n))
    return tape, x, y


def checkpoint_bytes(n):
    """The loop state every k iterations and one segment of k rows, with k minimizing
    (n / k) * STATE + k * ROW (runtime/kernels/loops.py), written out again."""
    k = math.ceil(math.sqrt(n * STATE / ROW))
    return k, math.ceil(n / k) * STATE + k * ROW


@pytest.mark.parametrize("n", [0, 1, 30])
def test_stacks_under_the_default_budget(n):
    """The forward program returns the loop's stacks (WhileStacks): they are tensors the call
    saves, and the loop gradient, reading them, allocates nothing more."""
    tape, _, _ = record(tf.function(sines), n)
    assert tape.saved_bytes() == TENSORS + n * ROW
    (what, tensors), (loop, nbytes) = tape.saved_bytes(detail=True)
    assert (what, tensors) == ("tensors saved by the recorded ops", TENSORS + n * ROW)
    assert nbytes == 0
    assert loop == (f"loop at {_where()} in sines, {n} iterations: stacks: {n} rows x {ROW} "
                    f"bytes, returned by the forward program (among the tensors saved)")


def test_checkpoints_under_loop_memory_zero():
    with tf.config.loop_memory(0):       # the gradient is built at the first call under a tape
        fn = tf.function(sines)
        tape, _, _ = record(fn, 30)
    k, nbytes = checkpoint_bytes(30)
    assert (k, nbytes) == (6, 5 * 44 + 6 * 40)
    assert tape.saved_bytes() == TENSORS + nbytes
    assert tape.saved_bytes(detail=True)[1] == (
        f"loop at {_where()} in sines, 30 iterations: checkpoints every "
        f"6 iterations: 5 states x {STATE} bytes + 6 rows x {ROW} bytes", nbytes)
    # the plan follows the trip count of each call: one iteration needs no checkpoint
    tape, _, _ = record(fn, 1)
    assert tape.saved_bytes() == TENSORS + ROW


def test_a_budget_decides_per_call_from_the_trip_count():
    """1,000 bytes hold 25 rows: 20 iterations stack, 30 checkpoint."""
    with tf.config.loop_memory(1000 / 2**20):
        fn = tf.function(sines)
        small, _, _ = record(fn, 20)
    big, _, _ = record(fn, 30)
    assert small.saved_bytes() == TENSORS + 20 * ROW
    assert "stacks: 20 rows" in small.saved_bytes(detail=True)[1][0]
    assert big.saved_bytes() == TENSORS + checkpoint_bytes(30)[1]
    assert "checkpoints every 6 iterations" in big.saved_bytes(detail=True)[1][0]


def test_the_gradient_is_the_same_in_both_modes_and_the_tape_then_frees():
    plain, x, y = record(tf.function(sines), 12)
    with tf.config.loop_memory(0):
        fn = tf.function(sines)
        tape, x2, y2 = record(fn, 12)
    np.testing.assert_allclose(tape.gradient(y2, x2).numpy(), plain.gradient(y, x).numpy(),
                               rtol=1e-14)
    assert tape.saved_bytes() == 0 and tape.saved_bytes(detail=True) == []


def two_loops(x, n):
    """A loop of n steps, then one of 2n steps on a 2-element slice (16-byte rows)."""
    a = sines(x, n)
    return tf.reduce_sum(a) + tf.reduce_sum(sines(a[:2], 2 * n))


def test_both_loops_stacks_are_saved_with_the_call():
    """Each loop's stacks are residuals of the call, held together until the gradient."""
    tape, _, _ = record(tf.function(two_loops), 10)
    rows = tape.saved_bytes(detail=True)
    assert sorted(b for what, b in rows if what.startswith("loop at")) == [0, 0]
    with tf.config.loop_memory(0):        # checkpoints: the forward returns empty stacks
        fn = tf.function(two_loops)
        checkpointed, _, _ = record(fn, 10)
    assert rows[0][1] == checkpointed.saved_bytes(detail=True)[0][1] + 20 * 16 + 10 * ROW
    assert tape.saved_bytes() == rows[0][1]


def test_checkpointed_loops_run_one_after_another_so_the_total_counts_the_largest():
    with tf.config.loop_memory(0):
        fn = tf.function(two_loops)
        tape, _, _ = record(fn, 10)
    rows = tape.saved_bytes(detail=True)
    loops = [b for what, b in rows if what.startswith("loop at")]
    assert len(loops) == 2 and min(loops) > 0
    assert tape.saved_bytes() == rows[0][1] + max(loops)


def test_a_tape_with_no_compiled_loop_counts_its_tensors_only():
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = sines(x, 3)                  # eagerly a Python loop: every op recorded
    assert tape.saved_bytes() == 3 * 40
    assert tape.saved_bytes(detail=True) == [("tensors saved by the recorded ops", 120)]


def test_a_second_order_loop_gradient_always_stacks():
    """An outer tape records the inner gradient (the backward program's call): its own
    gradient is a WhileGradGrad, which stacks per iteration the state, the row, the row's
    cotangent and the carry (the gradient of s: f64[5]) with no budget."""
    x = tf.constant(X)
    fn = tf.function(sines)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = fn(x, tf.constant(30))
        g = inner.gradient(y, x)
    per = STATE + 2 * ROW + 40
    loops = outer.saved_bytes(detail=True)[1:]
    assert loops[1] == (f"loop at {_where()} in sines_backward (second order), 30 iterations: "
                        f"stacks: 30 rows x {per} bytes", 30 * per)
    assert outer.saved_bytes() == outer.saved_bytes(detail=True)[0][1] + 30 * per
    np.testing.assert_allclose(outer.gradient(g, x).numpy(),
                               _second_derivative_of_sines(X, 30), rtol=1e-10)


def _second_derivative_of_sines(x, n):
    """d/dx of d(sum of n-fold sin)/dx, elementwise: the chain rule by hand."""
    d1, d2, s = np.ones_like(x), np.zeros_like(x), x.copy()
    for _ in range(n):
        d2 = -np.sin(s) * d1 ** 2 + np.cos(s) * d2
        d1 = np.cos(s) * d1
        s = np.sin(s)
    return d2


def _where():
    """The file:line of ``sines``'s while_loop, as the dump writes it (relative to the current
    directory when inside it)."""
    rel = os.path.relpath(__file__)
    return f"{__file__ if rel.startswith('..') else rel}:{inspect.getsourcelines(sines)[1] + 1}"
