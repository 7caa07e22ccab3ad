"""A loop body reading ``tf.gather(xs, ids)`` of a watched ``xs`` gives the loop gradient a
carry ``dxs + UnsortedSegmentSum(rows, ids, len(xs))``; the compiled loop adds the rows into
its own copy of the carry in place (codegen/templates/loops.py, ``_scatter``) instead of
zeroing and adding a carry-sized array each iteration (quadratic in the trip count). Checked
against hand backpropagation through time and the interpreter, with ids repeated within an
iteration and across iterations, in the stacked and the checkpointed plans (one program: a
400-byte budget holds 7 iterations' rows, 56 bytes each; 8 iterations checkpoint, in
segments of 3, 3 and 2)."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.tracer import engine as backend

B, H, ROWS = 2, 3, 9


def gather_gradient(x, W, n):
    """``h = tanh(h @ W + x[t] + x[t // 2])`` over ``n`` steps (``n`` a tensor: one trace)."""
    with tf.GradientTape() as tape:
        tape.watch([x, W])
        h = tf.zeros((B, H), dtype=x.dtype)
        for t in tf.range(n):
            rows = tf.gather(x, tf.stack([t, t // 2]))
            h = tf.tanh(h @ W + rows[0] + rows[1])
        loss = tf.reduce_sum(h * h)
    return tape.gradient(loss, [x, W])


def bptt(x, W, n):
    hs = [np.zeros((B, H))]
    for t in range(n):
        hs.append(np.tanh(hs[-1] @ W + x[t] + x[t // 2]))
    gx, gW, g = np.zeros_like(x), np.zeros_like(W), 2 * hs[-1]
    for t in range(n, 0, -1):
        dz = g * (1 - hs[t] ** 2)
        gW += hs[t - 1].T @ dz
        gx[t - 1] += dz
        gx[(t - 1) // 2] += dz
        g = dz @ W.T
    return [gx, gW]


def data():
    rng = np.random.default_rng(12)
    return rng.standard_normal((ROWS, B, H)), rng.standard_normal((H, H)) / np.sqrt(H)


@pytest.fixture(scope="module")
def program():
    old = backend.get_backend()
    tf.set_backend("numba")
    x, W = (tf.constant(a) for a in data())
    try:
        with tf.config.loop_memory(400 / 2**20):
            compiled = tf.function(gather_gradient)
            compiled(x, W, tf.constant(1))
        yield compiled
    finally:
        tf.set_backend(old)


@pytest.mark.parametrize("n", [0, 1, 7, 8])
def test_compiled_equals_hand_bptt_and_the_interpreter(program, n):
    x, W = data()
    args = (tf.constant(x), tf.constant(W), tf.constant(n))
    got = program(*args)
    old = backend.get_backend()
    tf.set_backend("numpy")              # the interpreter: no second compile
    try:
        interpreted = tf.function(gather_gradient)(*args)
    finally:
        tf.set_backend(old)
    for g, i, r in zip(got, interpreted, bptt(x, W, n), strict=True):
        np.testing.assert_allclose(g.numpy(), r, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(g.numpy(), i.numpy(), rtol=1e-12, atol=1e-14)
    x2, W2 = data()                       # the inputs are not written by the in-place carry
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(W, W2)


def test_the_backward_adds_rows_in_place_not_a_carry_sized_segment_sum(sources):
    x, W = (tf.constant(a) for a in data())
    tf.function(gather_gradient)(x, W, tf.constant(3))
    (src,) = [s for s in sources.values() if "WhileWithGrad" in s]
    code = [line.split("  #")[0] for line in src.splitlines() if not line.lstrip().startswith("#")]
    assert not any(f"np.full(({ROWS}, {B}, {H})" in line for line in code)
    copies = [line for line in code if "rt.fresh_copy(" in line]
    assert len(copies) == 2             # the carry's own copy in the stacked and checkpointed plans
