"""Hessians through loops: WhileGradGrad (a loop's second-order gradient) has a batching rule,
so the jacobian of a loop's gradient is one batched loop, never a loop of loops. It equals the
loop path (``experimental_use_pfor=False``) and central differences of the hand-written
gradient (float64), traced (interpreter) and compiled (``jit_compile=True``)."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.codegen.program import Program
from tapeflow.runtime.registry import KERNELS
from tapeflow.tracer import engine as backend
from tapeflow.tracer import jacobian as jac

R = np.random.default_rng(12)
XS = R.uniform(-1, 1, (6, 3))          # one input row per step; a loop runs n <= 6 steps
W = R.uniform(-0.6, 0.6, (3, 3))


def loss_for(xs, w, n):
    """A tanh recurrence written as a converted ``for`` over ``tf.range``."""
    h = tf.zeros([1, 3], tf.float64)
    for t in tf.range(n):
        h = tf.tanh(tf.matmul(h, w) + tf.gather(xs, t))
    return tf.reduce_sum(h * h)


def loss_while(xs, w, n):
    """The same recurrence as an explicit ``tf.while_loop``."""
    def body(t, h):
        return t + 1, tf.tanh(tf.matmul(h, w) + tf.gather(xs, t))
    h = tf.while_loop(lambda t, h: t < n, body, (0, tf.zeros([1, 3], tf.float64)))[1]
    return tf.reduce_sum(h * h)


def hessian(loss, xs, w, n, pfor=True):
    """d(dloss/dw)/dw: the jacobian of a loop's gradient, shape w.shape + w.shape."""
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(w)
        with tf.GradientTape() as inner:
            inner.watch(w)
            y = loss(xs, w, n)
        g = inner.gradient(y, w)
    return outer.jacobian(g, w, experimental_use_pfor=pfor)


def numpy_gradient(w, n):
    """dloss/dw by hand-written backpropagation through time."""
    hs = [np.zeros((1, 3))]
    for t in range(n):
        hs.append(np.tanh(hs[-1] @ w + XS[t]))
    gh, gw = 2 * hs[-1], np.zeros_like(w)
    for t in reversed(range(n)):
        ga = gh * (1 - hs[t + 1] ** 2)
        gw += hs[t].T @ ga
        gh = ga @ w.T
    return gw


def finite_differences(n, eps=1e-6):
    out = np.zeros(W.shape + W.shape)
    for idx in np.ndindex(*W.shape):
        e = np.zeros_like(W)
        e[idx] = eps
        out[(...,) + idx] = (numpy_gradient(W + e, n) - numpy_gradient(W - e, n)) / (2 * eps)
    return out


def hessian_for(xs, w, n, pfor=True):
    return hessian(loss_for, xs, w, n, pfor)


def hessian_while(xs, w, n, pfor=True):
    return hessian(loss_while, xs, w, n, pfor)


ARGS = (tf.constant(XS), tf.constant(W))
HESSIANS = {"for": hessian_for, "while_loop": hessian_while}


@pytest.fixture(scope="module")
def traced():
    """One traced function per loop form (the interpreter), shared: n is a tensor input."""
    return {k: tf.function(fn, jit_compile=False) for k, fn in HESSIANS.items()}


@pytest.mark.parametrize("form", sorted(HESSIANS))
@pytest.mark.parametrize("n", [0, 1, 5])
def test_the_hessian_through_a_loop_is_one_batched_loop(traced, form, n):
    f, count = traced[form], tf.constant(n)
    got = f(*ARGS, count).numpy()
    np.testing.assert_allclose(got, f(*ARGS, count, pfor=False).numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got, finite_differences(n), atol=1e-8)
    text = f.lower(*ARGS, count).as_text(stages=("jacobians",))
    assert "looped over the batch" not in text
    assert "vectorized over a batch of 9: every op has a batching rule" in text
    assert text.count("WhileGradGrad[") == 1               # one loop, not one per seed


@pytest.fixture
def tanh_calls(monkeypatch):
    """How many times the Tanh kernel ran: one per body evaluation of these loops."""
    count = [0]
    kernel = KERNELS["Tanh"]

    def counting(*args, **attrs):
        count[0] += 1
        return kernel(*args, **attrs)
    monkeypatch.setitem(KERNELS, "Tanh", counting)
    return count


def test_the_batched_hessian_evaluates_the_body_as_often_as_one_hessian_vector_product(
        traced, tanh_calls):
    """No loop over the 9 seeds: the vectorized jacobian runs the loop body as many times as a
    single reverse-over-reverse product does (the loop path runs it once more per seed)."""
    f, count = traced["for"], tf.constant(5)

    @tf.function(jit_compile=False)
    def hvp(xs, w, n):
        with tf.GradientTape() as outer:
            outer.watch(w)
            with tf.GradientTape() as inner:
                inner.watch(w)
                y = loss_for(xs, w, n)
            g = inner.gradient(y, w)
        return outer.gradient(g, w, output_gradients=tf.ones_like(w))

    hvp(*ARGS, count)
    f(*ARGS, count)
    f(*ARGS, count, pfor=False)
    tanh_calls[0] = 0
    hvp(*ARGS, count)
    one = tanh_calls[0]
    tanh_calls[0] = 0
    f(*ARGS, count)
    batched = tanh_calls[0]
    tanh_calls[0] = 0
    f(*ARGS, count, pfor=False)
    looped = tanh_calls[0]
    assert one > 0 and batched == one
    assert looped > batched + 8 * 5                         # 8 more seeds, 5 iterations each


def test_eager_tapes_around_a_traced_loop_give_one_batched_loop():
    """Eager tapes recording a traced function's loop: the jacobian of its gradient is
    vectorized with no op looped over the batch (``tracer/jacobian.py``'s report)."""
    loss = tf.function(loss_for, jit_compile=False)
    w = tf.constant(W)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(w)
        with tf.GradientTape() as inner:
            inner.watch(w)
            y = loss(ARGS[0], w, tf.constant(5))
        g = inner.gradient(y, w)
    got = outer.jacobian(g, w)
    assert [v.report() for v in jac.LAST] == [
        "vectorized over a batch of 9: every op has a batching rule"]
    np.testing.assert_allclose(got.numpy(), outer.jacobian(g, w, experimental_use_pfor=False)
                               .numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got.numpy(), finite_differences(5), atol=1e-8)


def test_the_compiled_hessian_through_a_loop_equals_the_interpreter(traced):
    """One Numba program (the trip count is an input), checked at n = 0, 1 and 5."""
    old = backend.get_backend()
    tf.set_backend("numba")
    try:
        f = tf.function(hessian_for, jit_compile=True)
        got = {n: f(*ARGS, tf.constant(n)).numpy() for n in (0, 1, 5)}
        assert isinstance(f.get_concrete_function(*ARGS, tf.constant(5))._program, Program)
    finally:
        tf.set_backend(old)
    for n, g in got.items():
        np.testing.assert_allclose(g, traced["for"](*ARGS, tf.constant(n)).numpy(),
                                   rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(g, finite_differences(n), atol=1e-8)
