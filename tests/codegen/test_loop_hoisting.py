"""The compiled loop gradient's two speed-ups (codegen/templates/loops.py) give the
interpreter's gradients and hand backpropagation through time: a loop variable kept once as
its history instead of two stacks, and ``dW += h.T @ dz`` added a block of iterations at a
time as one product. Blocks are made 2 iterations long here, so trip counts 0, 1 and 7 cover
no block, one partial block, and three full blocks and a partial one."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.codegen.templates import loops as loop_templates
from tapeflow.tracer import engine as backend

B, H, D, ROWS = 2, 3, 2, 9


def recurrence_gradient(x, W, U, n):
    """W8's recurrence over the first ``n`` rows of ``x`` (``n`` a tensor: one trace)."""
    with tf.GradientTape() as tape:
        tape.watch([W, U])
        h = tf.zeros((B, H), dtype=x.dtype)
        acc = tf.constant(0.0, dtype=x.dtype)
        for t in tf.range(n):
            h = tf.tanh(h @ W + tf.gather(x, t) @ U)
            acc = acc + tf.reduce_mean(h)
        loss = tf.reduce_sum(h * h) + acc
    return tape.gradient(loss, [W, U])


def bptt(x, W, U, n):
    hs = [np.zeros((B, H))]
    for t in range(n):
        hs.append(np.tanh(hs[-1] @ W + x[t] @ U))
    gW, gU, g = np.zeros_like(W), np.zeros_like(U), 2 * hs[-1]
    for t in range(n, 0, -1):
        dz = (g + 1.0 / (B * H)) * (1 - hs[t] ** 2)
        gW += hs[t - 1].T @ dz
        gU += x[t - 1].T @ dz
        g = dz @ W.T
    return [gW, gU]


def data():
    rng = np.random.default_rng(8)
    return (rng.standard_normal((ROWS, B, D)), rng.standard_normal((H, H)) / np.sqrt(H),
            rng.standard_normal((D, H)) / np.sqrt(D))


@pytest.fixture(scope="module")
def programs():
    """Compiled with 2-iteration blocks: stacks in budget, and checkpoints (a 1 KB budget)."""
    mp = pytest.MonkeyPatch()
    rows = 2 * (B * H + B * D) * 8 + B * H * 8 * 2       # two iterations' hoisted rows
    mp.setattr(loop_templates, "BLOCK_BYTES", rows)
    old = backend.get_backend()
    tf.set_backend("numba")
    x, W, U = (tf.constant(a) for a in data())
    try:
        stacked = tf.function(recurrence_gradient)
        stacked(x, W, U, tf.constant(1))
        with tf.config.loop_memory(1000 / 2**20):
            checkpointed = tf.function(recurrence_gradient)
            checkpointed(x, W, U, tf.constant(1))
        yield {"stacked": stacked, "checkpointed": checkpointed}
    finally:
        tf.set_backend(old)
        mp.undo()


@pytest.mark.parametrize("mode", ["stacked", "checkpointed"])
@pytest.mark.parametrize("n", [0, 1, 7])
def test_compiled_equals_hand_bptt_and_the_interpreter(programs, mode, n):
    x, W, U = data()
    got = programs[mode](tf.constant(x), tf.constant(W), tf.constant(U), tf.constant(n))
    interpreted = tf.function(recurrence_gradient)(tf.constant(x), tf.constant(W),
                                                     tf.constant(U), tf.constant(n))
    for g, i, r in zip(got, interpreted, bptt(x, W, U, n), strict=True):
        np.testing.assert_allclose(g.numpy(), r, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(g.numpy(), i.numpy(), rtol=1e-12, atol=1e-14)


def test_the_source_keeps_h_once_and_hoists_both_weight_products(sources, monkeypatch):
    monkeypatch.setattr(loop_templates, "BLOCK_BYTES", 1 << 20)
    x, W, U = (tf.constant(a) for a in data())
    tf.function(recurrence_gradient)(x, W, U, tf.constant(3))
    (src,) = [s for s in sources.values() if "WhileWithGrad" in s]
    code = [line.split("  #")[0] for line in src.splitlines() if not line.lstrip().startswith("#")]
    # the buffers allocated before the forward loop (not those its doubling makes): h's
    # history (cap + 1 states), x's gathered rows and the counter's rows; no stack of h alone
    first = [line for line in code if line.startswith("    stack") and "= np.empty((cap" in line]
    assert len(first) == 3
    assert len([line for line in first if "+ 1," in line]) == 1       # h's history only
    hoisted = [line for line in code if "rt.dot(" in line and ".T," in line and "reshape" in line]
    assert len(hoisted) >= 2            # dW and dU, in the stacked and the checkpointed plans
