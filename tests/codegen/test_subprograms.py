"""Repeated steps emitted once (codegen/subprograms.py, issue 26.3): a long program runs as
one part per step (a layer's GEMM and its fused loop), parts of equal text are one jitted
function called at each use, and the compiled program still computes what the eager run does.

The program is W15's shape made small: a network of four equal tanh layers, its input
derivatives by nested tapes, and the parameters' gradient of a residual loss (second order):
the forward layers, and each layer's derivative loops, repeat with the same shapes.
"""
import re

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.codegen import generate as gen_module
from tapeflow.codegen.subprograms import _rename, canonical

RNG = np.random.default_rng(3)
X = RNG.uniform(-1, 1, (64, 2)).astype(np.float32)
W0 = RNG.normal(0, 0.5, (2, 8)).astype(np.float32)
WS = [RNG.normal(0, 0.5, (8, 8)).astype(np.float32) for _ in range(3)]
BS = [RNG.normal(0, 0.1, (8,)).astype(np.float32) for _ in range(4)]
WOUT = RNG.normal(0, 0.5, (8, 1)).astype(np.float32)


def pinn_step(x, w0, w1, w2, w3, wout):
    params = [w0, w1, w2, w3, wout]
    with tf.GradientTape() as tape:
        tape.watch(params)
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                h = x
                for w, b in zip([w0, w1, w2, w3], BS, strict=True):
                    h = tf.tanh(tf.matmul(h, w) + b)
                u = tf.matmul(h, wout)
            u_x = inner.gradient(u, x)
        u_xx = outer.gradient(u_x, x)
        loss = tf.reduce_mean((u_x[:, :1] + u * u_x[:, 1:] - 0.01 * u_xx[:, 1:]) ** 2)
    return [loss] + tape.gradient(loss, params)


def _args():
    return [tf.constant(a) for a in [X, W0, *WS, WOUT]]


def mlp_grad(x, w1, w2, w3):
    with tf.GradientTape() as tape:
        tape.watch([w1, w2, w3])
        h = x
        for w in (w1, w2, w3):
            h = tf.tanh(tf.matmul(h, w) + 0.25)
        loss = tf.reduce_sum(h * h)
    return [loss] + tape.gradient(loss, [w1, w2, w3])


def _compiled_matches_eager(fn, args):
    """The compiled run of ``fn`` against its eager run; returns the program's source."""
    step = tf.function(fn, jit_compile=True)
    got = step(*args)
    want = fn(*args)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=2e-4, atol=1e-6)
    return step.get_concrete_function(*args).program.source


def _uses(src):
    """{shared step function: its calls}."""
    defs = re.findall(r"^def (\w+_step\d+)\(", src, re.M)
    calls = re.findall(r"\b(\w+?_step\d+)(?:_use\d+)?\(", src)     # (a use calls its overload)
    return {d: calls.count(d) - 1 for d in defs}        # (minus the def line)


def test_repeated_steps_are_one_function_each_and_match_eager(monkeypatch):
    # a short program stays one function; stepwise here from 20 lines to keep the test cheap
    monkeypatch.setattr(gen_module, "STEP_LINES", 20)
    x = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    ws = [tf.constant(RNG.normal(0, 0.5, (3, 3)).astype(np.float32)) for _ in range(3)]
    uses = _uses(_compiled_matches_eager(mlp_grad, [x, *ws]))
    assert uses and all(n >= 1 for n in uses.values())
    assert sum(uses.values()) >= len(uses) + 2, uses    # the layers' steps are shared


def test_a_short_program_stays_one_function():
    x = tf.constant(np.ones((4, 3), np.float32))
    w = tf.constant(np.ones((3, 3), np.float32))
    graph = tf.function(mlp_grad).get_concrete_function(x, w, w, w).graph
    assert not _uses(gen_module.generate(graph, "short").source)


@pytest.mark.slow
def test_a_second_order_networks_steps_are_shared_and_match_eager(monkeypatch):
    monkeypatch.setattr(gen_module, "STEP_LINES", 160)
    src = _compiled_matches_eager(pinn_step, _args())
    uses = _uses(src)
    assert uses, "a long program runs step by step"
    assert all(n >= 1 for n in uses.values())
    assert sum(uses.values()) >= len(uses) + 4, uses    # repeated layers share functions
    # every function is short: no part holds more than a few steps
    body = src.split("def make_call")[0]
    for start in [m.start() for m in re.finditer(r"^def ", body, re.M)]:
        assert body[start:body.find("\n\n", start)].count("\n") < 100


def test_canonical_text_renames_names_only():
    lines = [(1, 'vab = np.empty((vq.shape[0], 3), dtype=np.float32)', None),
             (1, "for i12 in range(vq.shape[0]):", None),
             (2, 'vab[i12, 0] = rt.clip(vq[i12], lo=vq[0], msg="vq")', None)]
    body, mapping = canonical(lines, ["vq"], ["vab", "i12"])
    assert mapping == {"vq": "a0", "vab": "l0", "i12": "l1"}
    assert [t for _, t, _ in body] == [
        "l0 = np.empty((a0.shape[0], 3), dtype=np.float32)",
        "for l1 in range(a0.shape[0]):",
        'l0[l1, 0] = rt.clip(a0[l1], lo=a0[0], msg="vq")']
    assert _rename("x.vq + vq", {"vq": "a0"}) == "x.vq + a0"
