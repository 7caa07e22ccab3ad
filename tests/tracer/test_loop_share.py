"""One forward loop for a loop's gradient taken in the same program (passes/share_loops.py):
the While and its WhileGrad become one WhileWithGrad, so a W8-like recurrence runs n forward
bodies and n body gradients, as hand-written backpropagation through time. Gradients are
the ones the unfused program gives (the interpreter, bit for bit), compiled (float32 and
float64) equals the interpreter, and where nothing may be fused (a tape across a function
boundary, a print in the loop) nothing is. Body evaluations are counted, nothing timed."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.passes import FINAL
from tapeflow.runtime.registry import KERNELS
from tapeflow.tracer import engine as backend

UNFUSED = tuple(p for p in FINAL if p != "share_loops")


def recurrence(x, W, U):
    """W8's loop: h = tanh(h W + x[t] U), loss = sum(h_T^2) + sum_t mean(h_t)."""
    h = tf.zeros((x.shape[1], W.shape[0]), dtype=x.dtype)
    acc = tf.constant(0.0, dtype=x.dtype)
    for t in tf.range(tf.shape(x)[0]):
        h = tf.tanh(h @ W + tf.gather(x, t) @ U)
        acc = acc + tf.reduce_mean(h)
    return h, tf.reduce_sum(h * h) + acc


def make_gradient():
    @tf.function
    def gradient(x, W, U):
        with tf.GradientTape() as tape:
            tape.watch([W, U])
            h, loss = recurrence(x, W, U)
        return [h, *tape.gradient(loss, [W, U])]
    return gradient


def inputs(T, dtype=np.float64, B=2, H=3, D=2):
    rng = np.random.default_rng(T)
    return (tf.constant(rng.standard_normal((T, B, D)).astype(dtype)),
            tf.constant((rng.standard_normal((H, H)) / np.sqrt(H)).astype(dtype)),
            tf.constant((rng.standard_normal((D, H)) / np.sqrt(D)).astype(dtype)))


def bptt(x, W, U):
    """Hand NumPy backpropagation through time (benchmarks/workloads/w8.py's)."""
    x, W, U = x.numpy(), W.numpy(), U.numpy()
    hs = [np.zeros((x.shape[1], W.shape[0]), x.dtype)]
    for t in range(x.shape[0]):
        hs.append(np.tanh(hs[-1] @ W + x[t] @ U))
    gW, gU, g = np.zeros_like(W), np.zeros_like(U), 2 * hs[-1]
    for t in range(x.shape[0], 0, -1):
        dz = (g + 1.0 / hs[0].size) * (1 - hs[t] ** 2)
        gW += hs[t - 1].T @ dz
        gU += x[t - 1].T @ dz
        g = dz @ W.T
    return [hs[-1], gW, gU]


def ops_of(fn, *args):
    graph = backend.optimize(fn.get_concrete_function(*args).graph)
    return [node.op for node in graph.nodes]


@pytest.fixture
def calls(monkeypatch):
    """Calls of MatMul and Tanh kernels (the interpreter's)."""
    count = {"MatMul": 0, "Tanh": 0}
    for op in count:
        def counting(*args, _kernel=KERNELS[op], _op=op, **attrs):
            count[_op] += 1
            return _kernel(*args, **attrs)
        monkeypatch.setitem(KERNELS, op, counting)
    return count


def test_the_while_and_its_gradient_become_one_loop():
    args = inputs(5)
    ops = ops_of(make_gradient(), *args)
    assert "WhileWithGrad" in ops
    assert "While" not in ops and "WhileGrad" not in ops


@pytest.mark.parametrize("n", [0, 1, 7])
def test_one_forward_loop_n_forward_bodies_and_n_body_gradients(calls, n):
    """Per iteration hand BPTT does 2 matmuls forward and 3 backward, one tanh: so does the
    fused program (before the fusion: 7 matmuls and 2 tanh, the forward ran twice)."""
    fn, args = make_gradient(), inputs(n)
    fn(*args)
    calls.update(MatMul=0, Tanh=0)
    fn(*args)
    assert calls == {"MatMul": 5 * n, "Tanh": n}


@pytest.mark.parametrize("n", [0, 1, 7, 40])
def test_fused_equals_unfused_and_hand_bptt(monkeypatch, n):
    fn, args = make_gradient(), inputs(n)
    got = fn(*args)
    monkeypatch.setattr(backend, "FINAL", UNFUSED)
    unfused = make_gradient()
    assert "WhileGrad" in ops_of(unfused, *args)
    for g, u, r in zip(got, unfused(*args), bptt(*args), strict=True):
        np.testing.assert_array_equal(g.numpy(), u.numpy())
        np.testing.assert_allclose(g.numpy(), r, rtol=1e-12, atol=1e-14)


def test_past_the_budget_the_rows_are_dropped_and_the_gradient_checkpoints(calls):
    """About 130 bytes per row and a budget of 1000 bytes: the forward stacks 7 rows, drops
    them at the 8th, runs on, and the backward is WhileGrad's checkpointed plan."""
    args = inputs(12)
    with tf.config.loop_memory(1000 / 2**20):
        fn = make_gradient()
        fn(*args)
    calls.update(MatMul=0, Tanh=0)
    got = fn(*args)
    assert calls["Tanh"] > 2 * 12                     # the checkpoints' recomputation
    for g, r in zip(got, bptt(*args), strict=True):
        np.testing.assert_allclose(g.numpy(), r, rtol=1e-12, atol=1e-14)


def test_second_order_is_unchanged(monkeypatch):
    def make():
        @tf.function
        def hess(x, W, U):
            with tf.GradientTape() as outer:
                outer.watch(W)
                with tf.GradientTape() as tape:
                    tape.watch([W, U])
                    loss = recurrence(x, W, U)[1]
                gW = tape.gradient(loss, W)
                s = tf.reduce_sum(gW * gW)
            return outer.gradient(s, W)
        return hess
    args = inputs(6)
    got = make()(*args)
    monkeypatch.setattr(backend, "FINAL", UNFUSED)
    np.testing.assert_allclose(got.numpy(), make()(*args).numpy(), rtol=1e-12, atol=1e-14)


def test_a_tape_across_the_function_boundary_keeps_the_stacks_in_the_forward_program():
    """The forward program must return the loop's result; its gradient runs in another, over
    the stacks the forward program returns as residuals (passes/keep_stacks.py)."""
    @tf.function
    def f(x, W, U):
        return recurrence(x, W, U)[1]
    args = inputs(5)
    with tf.GradientTape() as tape:
        tape.watch(args[1:])
        loss = f(*args)
    got = tape.gradient(loss, args[1:])
    for g, r in zip(got, bptt(*args)[1:], strict=True):
        np.testing.assert_allclose(g.numpy(), r, rtol=1e-12, atol=1e-14)
    fwd, bwd, _ = f.get_concrete_function(*args).tape_pair()
    assert "WhileStacks" in [n.op for n in backend.optimize(fwd.graph).nodes]
    bwd_ops = [n.op for n in backend.optimize(bwd.graph).nodes]
    assert "WhileGradStacks" in bwd_ops and "WhileWithGrad" not in bwd_ops


def test_a_loop_that_prints_is_not_fused(capsys):
    @tf.function
    def gradient(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in tf.range(3):
                tf.print("step")
                y = tf.sin(y)
            loss = tf.reduce_sum(y)
        return tape.gradient(loss, x)
    x = tf.constant([0.5, -0.2])
    assert "WhileWithGrad" not in ops_of(gradient, x)
    got = gradient(x)
    assert capsys.readouterr().err.count("step") == 3     # tf.print writes to stderr
    want = np.cos(x.numpy()) * np.cos(np.sin(x.numpy())) * np.cos(np.sin(np.sin(x.numpy())))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


@pytest.fixture(scope="module")
def compiled():
    """Numba programs, f32 and f64, stacks and checkpoints, built once for the module."""
    old = backend.get_backend()
    tf.set_backend("numba")
    try:
        fns = {}
        for dtype in (np.float32, np.float64):
            args = inputs(3, dtype)
            stacked = make_gradient()
            stacked(*args)
            with tf.config.loop_memory(1000 / 2**20):
                small = make_gradient()
                small(*args)
            fns[dtype] = (stacked, small)
    finally:
        tf.set_backend(old)
    return fns


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 40])
def test_compiled_equals_the_interpreter(compiled, dtype, n):
    """n = 40 grows the stacks (16, 32, 64 rows); with the small budget it drops them and
    checkpoints."""
    args = inputs(n, dtype)
    reference = make_gradient()(*args)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-14}
    for fn in compiled[dtype]:
        assert "WhileWithGrad" in ops_of(fn, *args)
        for g, r in zip(fn(*args), reference, strict=True):
            np.testing.assert_allclose(g.numpy(), r.numpy(), **tol)


def test_compiled_stacks_grow_for_a_loop_of_unknown_length():
    """A loop whose trip count is not a counter's bound (it steps by 2) starts with 16 rows
    and doubles them: 40 iterations fill 16, 32 then 64 rows."""
    @tf.function
    def gradient(x, w, n):
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            y = tf.while_loop(lambda i, s: i < 2 * n,
                              lambda i, s: (i + 2, tf.sin(s) * w + 0.5 * s), (0, x))[1]
            loss = tf.reduce_sum(y ** 2)
        return tape.gradient(loss, [x, w])
    x, w = tf.constant(np.linspace(-1, 1, 4)), tf.constant(np.linspace(0.2, 0.9, 4))
    reference = gradient(x, w, tf.constant(40))             # the interpreter
    old = backend.get_backend()
    tf.set_backend("numba")
    try:
        compiled = tf.function(gradient.python_function)
        assert "WhileWithGrad" in ops_of(compiled, x, w, tf.constant(40))
        for n in (40, 0):
            want = reference if n == 40 else gradient(x, w, tf.constant(0))
            for g, r in zip(compiled(x, w, tf.constant(n)), want, strict=True):
                np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-13, atol=1e-15)
    finally:
        tf.set_backend(old)
