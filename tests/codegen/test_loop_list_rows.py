"""A TensorArray loop's gradient keeps each written row once: compiled, the list written at row
``t`` in iteration ``t`` with the new state ``h`` is ``h``'s history (one buffer, one row
longer: ``_SharedList`` in codegen/templates/loops.py), and the backward reads the list's
cotangent in place instead of copying it to zero each row it reads, where nothing reads the
cotangent afterwards and every iteration wrote another row (``read_only_list_cotangents`` in
passes/share_loops.py). Gradients and the stacked list equal eager's for writes that share
and writes that cannot (another row, a repeated row, a loop whose buffers double, past the
memory budget); the sharing is seen in the buffer under the list the program returns."""
import re

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.passes.share_loops import read_only_list_cotangents

R = np.random.default_rng(4)
X = R.normal(size=(20, 2, 3))
W = 0.5 * R.normal(size=(3, 3))
ROW = 2 * 3 * 8                 # bytes of one f64[2, 3] element


def loss(x, w, n, size, at):
    """A recurrence writing h into row ``at(t)``; the loss weighs each row differently, so
    the gradient tells which row held what."""
    ta = tf.TensorArray(x.dtype, size=size, element_shape=x.shape[1:])
    h = tf.zeros_like(x[0])
    for t in tf.range(n):
        h = tf.tanh(h @ w + x[t])
        ta = ta.write(at(t), h)
    s = ta.stack()
    rows = tf.range(1.0, size + 1.0, dtype=x.dtype)
    return tf.reduce_sum(h * h) + tf.reduce_sum(tf.reduce_mean(s, axis=[1, 2]) * rows), s


def while_loss(x, w, n, size, at):
    """The same loop as a ``while`` whose test bounds nothing (its buffers double)."""
    ta = tf.TensorArray(x.dtype, size=size)
    h = tf.zeros_like(x[0])
    t = 0
    while tf.cast(t, x.dtype) < tf.cast(n, x.dtype):
        h = tf.tanh(h @ w + x[t])
        ta = ta.write(at(t), h)
        t += 1
    s = ta.stack()
    return tf.reduce_sum(h * h) + tf.reduce_sum(s * s), s


def compiled(fn, size, at):
    @tf.function(jit_compile=True)
    def gradient(x, w, n):
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            y, s = fn(x, w, n, size, at)
        return tape.gradient(y, [x, w]), s
    return gradient


def eager(fn, n, size, at):
    x, w = tf.constant(X), tf.constant(W)
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        y, s = fn(x, w, tf.constant(n), size, at)
    return tape.gradient(y, [x, w]), s


def check(fn, n, size, at, budget=None):
    """Compiled (one WhileWithGrad) against eager; returns the stacked list it gave."""
    if budget is None:
        f = compiled(fn, size, at)
        (gx, gw), s = f(tf.constant(X), tf.constant(W), tf.constant(n))
    else:
        with tf.config.loop_memory(budget):        # read when the gradient is built
            f = compiled(fn, size, at)
            (gx, gw), s = f(tf.constant(X), tf.constant(W), tf.constant(n))
    cf = f.get_concrete_function(tf.constant(X), tf.constant(W), tf.constant(n))
    assert "WhileWithGrad" in [node.op for node in cf.program.graph.nodes]
    (ex, ew), es = eager(fn, n, size, at)
    for a, b in ((gx, ex), (gw, ew), (s, es)):     # None eagerly: no iteration ran (n = 0)
        b = np.zeros_like(np.asarray(a)) if b is None else np.asarray(b)
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-12, atol=1e-12)
    return np.asarray(s), cf.program.source


def rows_under(a):
    """Rows of the buffer the program allocated under array ``a``."""
    return memoryview(a.base).nbytes // ROW


@pytest.mark.parametrize("n,size", [(6, 6), (6, 9), (1, 4), (0, 3)])
def test_rows_written_at_t_are_the_states_history(n, size):
    """Row t holds h after iteration t: the history's buffer (row 0: h before the loop) is the
    list's, so the list the program returns sits in a buffer one row longer than itself."""
    s, source = check(loss, n, size, lambda t: t)
    assert "alias" in source
    assert rows_under(s) == size + 1


@pytest.mark.parametrize("at,size", [(lambda t: t + 1, 7), (lambda t: 2 * t, 11),
                                     (lambda t: 5 - t, 6)])
def test_rows_written_elsewhere_keep_a_history_of_their_own(at, size):
    """Another first row or another step: the check made when the loop starts fails, and the
    list is a copy of its own, exactly its size."""
    s, _ = check(loss, 6, size, at)
    assert rows_under(s) == size


def test_a_row_written_twice_gives_the_overwritten_value_no_gradient():
    """Every iteration writes row 0 (only the last write is read): the backward must zero the
    row it read, so it still writes (and copies) the list's cotangent."""
    _, source = check(loss, 5, 3, lambda t: 0 * t)
    assert "TensorListSetItem" in source.split("def ", 1)[1]


def test_a_loop_whose_buffers_double_moves_its_history_away_from_the_list():
    """16 rows first (the list's 20 + 1 in the shared buffer): at the 17th iteration the
    history moves to a buffer of 32 + 1 rows and the list stays where it was, so both go on
    from there."""
    s, source = check(while_loss, 20, 20, lambda t: t)
    assert "alias" in source and re.search(r"cap\d+ = min\(fit\d+, 16\)", source)
    assert rows_under(s) == 21


def unstacked_loss(x, w, n, size, at):
    """The list starts from x's rows, so its initial value's cotangent is read: x's gradient."""
    ta = tf.TensorArray(x.dtype, size=size).unstack(x[:size])
    h = tf.zeros_like(x[0])
    for t in tf.range(n):
        h = tf.tanh(h @ w + x[t])
        ta = ta.write(at(t), h)
    s = ta.stack()
    return tf.reduce_sum(s * s), s


def reading_loss(x, w, n, size, at):
    """The body reads a row the loop writes later (its initial zeros until then). Eagerly a
    read clears the element unless ``clear_after_read=False`` (in a function it never does,
    as TensorFlow's TensorList)."""
    ta = tf.TensorArray(x.dtype, size=size, element_shape=x.shape[1:], clear_after_read=False)
    h = tf.zeros_like(x[0])
    for t in tf.range(n):
        h = tf.tanh(h @ w + x[t] + ta.read(size - 1 - t))
        ta = ta.write(at(t), h)
    s = ta.stack()
    return tf.reduce_sum(h * h) + tf.reduce_sum(s * s), s


def stack_tested_loss(x, w, n, size, at):
    """The loop's test reads the list (the rows it has not written yet are zeros)."""
    ta = tf.TensorArray(x.dtype, size=size, element_shape=x.shape[1:])
    h = tf.zeros_like(x[0])
    t = 0
    while t < n and tf.reduce_sum(tf.abs(ta.stack())) < 1e6:
        h = tf.tanh(h @ w + x[t])
        ta = ta.write(at(t), h)
        t += 1
    s = ta.stack()
    return tf.reduce_sum(h * h) + tf.reduce_sum(s * s), s


@pytest.mark.parametrize("fn", [reading_loss, stack_tested_loss, unstacked_loss])
def test_rows_the_loop_reads_before_it_writes_them_hold_their_initial_values(fn):
    """Where only the write reads the list, the rows the loop writes are not copied in first
    and the others get their initial values after the loop (x's rows: ``unstacked_loss``);
    a body or test reading it sees every initial row."""
    s, source = check(fn, 6, 8, lambda t: t)
    assert "alias" in source and rows_under(s) == 9


def test_past_the_memory_budget_the_checkpointed_gradient_is_the_same():
    check(loss, 6, 6, lambda t: t, budget=0)


def joint_graph(size, at):
    f = compiled(loss, size, at)
    return f.get_concrete_function(tf.constant(X), tf.constant(W), tf.constant(6)).program.graph


def bwd_ops(graph):
    (node,) = [n for n in graph.nodes if n.op == "WhileWithGrad"]
    return [n.op for n in node.attrs["bwd_graph"].nodes]


def test_the_backward_reads_the_list_cotangent_in_place_where_rows_are_distinct():
    """After the final passes (share_loops, then read_only_list_cotangents): rows t, each
    written once, no zeroing; row 0 written every time, zeroing kept; and the pass leaves a
    graph without such a loop as it is."""
    assert "TensorListSetItem" not in bwd_ops(joint_graph(6, lambda t: t))
    assert "TensorListSetItem" not in bwd_ops(joint_graph(11, lambda t: 2 * t))
    assert "TensorListSetItem" in bwd_ops(joint_graph(3, lambda t: 0 * t))
    plain = tf.function(lambda x: x * 2.0).get_concrete_function(tf.constant(W)).program.graph
    assert read_only_list_cotangents(plain) is plain


def test_a_list_cotangent_read_after_the_loop_is_still_zeroed():
    """Rows the loop overwrites pass no gradient to x's rows they started from."""
    _, source = check(unstacked_loss, 4, 6, lambda t: t)
    assert "TensorListSetItem" in source.split("def ", 1)[1]
