"""Vectorized jacobians (tracer/jacobian.py): the same numbers as the loop path and as finite
differences, TensorFlow's shapes and errors, structure (row independence), memory chunks,
Hessians through nested tapes, and compiled tapes."""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

import tapeflow as tf
from tapeflow.tracer import engine as _backend
from tapeflow.tracer import jacobian as J

from compiler.test_compiled_vs_eager import apply_steps, programs


@pytest.fixture(autouse=True, scope="module")
def numpy_backend():
    old = _backend.get_backend()
    tf.set_backend("numpy")
    yield
    tf.set_backend(old)


def fd_jacobian(f, x, eps=1e-6):
    """Central differences of a NumPy function: shape f(x).shape + x.shape."""
    x = np.asarray(x, np.float64)
    y0 = np.asarray(f(x))
    out = np.zeros(y0.shape + x.shape)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = eps
        out[(...,) + idx] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps)
    return out


def both(fn, *sources, **kw):
    """(vectorized, loop) jacobians of fn(*sources) w.r.t. the sources, on one persistent tape."""
    with tf.GradientTape(persistent=True) as tape:
        for s in sources:
            tape.watch(s)
        y = fn(*sources)
    return (tape.jacobian(y, list(sources), **kw),
            tape.jacobian(y, list(sources), experimental_use_pfor=False, **kw))


def assert_same(a, b, rtol=1e-10):
    assert (a is None) == (b is None)
    if a is not None:
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=rtol)


@pytest.fixture(params=["reverse", "forward"])
def mode(request, monkeypatch):
    """The jacobian mode a test runs in (``TAPEFLOW_JACOBIAN_MODE``): each forced in turn, or
    the value a test's own parametrization gives (``indirect``)."""
    monkeypatch.setenv("TAPEFLOW_JACOBIAN_MODE", request.param)
    return request.param


RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
W = RNG.standard_normal((3, 5))


def test_matches_loop_and_finite_differences(mode):
    x, w = tf.constant(X), tf.constant(W)
    (jx, jw), (lx, lw) = both(lambda x, w: tf.tanh(x @ w) * tf.reduce_sum(x), x, w)
    assert jx.shape == (4, 5, 4, 3) and jw.shape == (4, 5, 3, 5)
    assert_same(jx, lx)
    assert_same(jw, lw)
    np.testing.assert_allclose(jx.numpy(), fd_jacobian(lambda x: np.tanh(x @ W) * x.sum(), X), atol=1e-7)
    np.testing.assert_allclose(jw.numpy(), fd_jacobian(lambda w: np.tanh(X @ w) * X.sum(), W), atol=1e-7)


def test_unconnected_none_or_zeros_and_integer_paths():
    x, z = tf.constant(X), tf.constant(W)
    (jx, jz), (lx, lz) = both(lambda x, z: tf.sin(x), x, z)
    assert jz is None and lz is None
    assert_same(jx, lx)
    (jx, jz), _ = both(lambda x, z: tf.sin(x), x, z, unconnected_gradients="zero")
    assert jz.shape == (4, 3, 3, 5) and not jz.numpy().any()


def test_scalar_target_and_scalar_source():
    x = tf.constant(X)
    s = tf.constant(0.5, tf.float64)
    (js, jx), (ls, lx) = both(lambda s, x: tf.reduce_sum(tf.exp(x * s)), s, x)
    assert js.shape == () and jx.shape == (4, 3)
    assert_same(js, ls)
    assert_same(jx, lx)
    np.testing.assert_allclose(js.numpy(), (X * np.exp(X * 0.5)).sum(), rtol=1e-12)


def test_target_is_the_source():
    x = tf.constant(X)
    (jx,), (lx,) = both(lambda x: x, x)
    np.testing.assert_allclose(jx.numpy(), np.eye(12).reshape(4, 3, 4, 3))
    assert_same(jx, lx)


@pytest.mark.parametrize("mode, seeds", [("reverse", 5), ("forward", 3), ("auto", 3)], indirect=["mode"])
def test_row_independent_jacobian_uses_one_seed_per_column(mode, seeds):
    """tanh(x @ w) maps row b to row b: the batch jacobian on the diagonal, one seed per
    target column (reverse: 5, not 20) or per source column (forward: 3, not 12)."""
    x, w = tf.constant(X), tf.constant(W)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.tanh(x @ w)
    j = tape.jacobian(y, x)
    assert [v.size for v in J.LAST] == [seeds]
    lj = tape.jacobian(y, x, experimental_use_pfor=False)
    assert_same(j, lj)
    off = j.numpy().copy()
    for b in range(4):
        off[b, :, b, :] = 0
    assert not off.any()


@pytest.mark.parametrize("mode, seeds", [("reverse", 20), ("auto", 12)], indirect=["mode"])
def test_mixing_rows_takes_the_full_path(mode, seeds):
    """Batch statistics couple rows: no shortcut, one seed per target element (reverse: 20)
    or per source element (forward, chosen by auto: 12), still the loop's numbers."""
    x, w = tf.constant(X), tf.constant(W)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x @ w
        y = tf.tanh(h - tf.reduce_mean(h, axis=0))
    j = tape.jacobian(y, x)
    assert [v.size for v in J.LAST] == [seeds]
    assert_same(j, tape.jacobian(y, x, experimental_use_pfor=False))
    np.testing.assert_allclose(
        j.numpy(), fd_jacobian(lambda x: np.tanh(x @ W - (x @ W).mean(0)), X), atol=1e-7)


@pytest.mark.parametrize("mode, seeds", [("reverse", 20), ("forward", 15)], indirect=["mode"])
def test_memory_budget_chunks_the_seeds(monkeypatch, mode, seeds):
    x, w = tf.constant(X), tf.constant(W)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(w)
        y = tf.tanh(x @ w)
    whole = tape.jacobian(y, w)
    assert len(J.LAST) == 1
    monkeypatch.setenv("TAPEFLOW_JACOBIAN_BUDGET_MB", "1e-9")   # less than one seed: one at a time
    chunked = tape.jacobian(y, w)
    assert [v.size for v in J.LAST] == [1] * seeds
    assert_same(whole, chunked)


def test_batch_jacobian_matches_loop_and_tf_errors(mode):
    x, w = tf.constant(X), tf.constant(W)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.nn.elu(x @ w)
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (4, 5, 3)
    assert_same(jb, tape.batch_jacobian(y, x, experimental_use_pfor=False))
    full = fd_jacobian(lambda x: np.where(x @ W > 0, x @ W, np.expm1(x @ W)), X)
    np.testing.assert_allclose(jb.numpy(), np.einsum("bibj->bij", full), atol=1e-7)
    with pytest.raises(ValueError, match="first dimension"):
        tape.batch_jacobian(y, tf.constant(W))
    z = tf.constant(np.ones((4, 2)))
    assert not tape.batch_jacobian(y, z).numpy().any()   # unconnected: zeros, as TF


def test_non_persistent_tape_second_call():
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.sin(x)
    tape.jacobian(y, x)
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.jacobian(y, x)


def test_hessian_by_nested_tapes_is_symmetric_and_analytic():
    a = RNG.standard_normal((6, 4))
    w = tf.Variable(RNG.standard_normal(4))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            loss = tf.reduce_sum(tf.tanh(tf.constant(a) @ tf.reshape(w, [4, 1])) ** 2)
        g = inner.gradient(loss, w)
    h = outer.jacobian(g, w).numpy()
    t = np.tanh(a @ w.numpy())
    d = 2 * (1 - t ** 2) * (1 - 3 * t ** 2)
    np.testing.assert_allclose(h, a.T @ (d[:, None] * a), rtol=1e-10)
    np.testing.assert_allclose(h, h.T, rtol=1e-12)


def test_jacobian_is_recorded_on_an_outer_tape():
    """d/dx sum(jacobian(sin(x)*x, x)) through the vectorized program == through the loop."""
    x = tf.constant(X)
    out = []
    for pfor in (True, False):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape(persistent=True) as t1:
                t1.watch(x)
                y = tf.sin(x) * x
            j = t1.jacobian(y, x, experimental_use_pfor=pfor)
            s = tf.reduce_sum(j)
        out.append(t2.gradient(s, x))
    assert_same(out[0], out[1])
    np.testing.assert_allclose(out[0].numpy(), -np.sin(X) * X + 2 * np.cos(X), rtol=1e-10)


def test_compile_a_tape(monkeypatch):
    """The same computation on fresh tapes: one structure key, compiled on the third call."""
    monkeypatch.setenv("TAPEFLOW_COMPILE_TAPE_AFTER", "3")
    J._PROGRAMS.clear()
    results = []
    for k in range(4):
        x = tf.constant(X + k)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.sin(x) * tf.reduce_sum(x)
        results.append((X + k, tape.jacobian(y, x).numpy()))
    (cached,) = J._PROGRAMS.values()
    assert cached.program is not None and cached.hits == 3
    for xv, j in results:
        np.testing.assert_allclose(j, fd_jacobian(lambda v: np.sin(v) * v.sum(), xv), atol=1e-6)


def test_compile_a_tape_over_function_calls(monkeypatch):
    """A tape over a tapeflow.function call: the call's entry reads its residuals from the
    tape (not a closure), so fresh tapes share one structure and compile on the third call."""
    monkeypatch.setenv("TAPEFLOW_COMPILE_TAPE_AFTER", "3")
    J._PROGRAMS.clear()
    w = tf.constant(W)
    f = tf.function(lambda x: tf.tanh(x @ w) * tf.reduce_sum(x))
    for k in range(4):
        xv = X + 0.1 * k
        x = tf.constant(xv)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        j = tape.jacobian(y, x).numpy()
        np.testing.assert_allclose(j, fd_jacobian(lambda v: np.tanh(v @ W) * v.sum(), xv), atol=1e-6)
    (cached,) = J._PROGRAMS.values()
    assert cached.program is not None and cached.hits == 3


# -- random programs ------------------------------------------------------------------------

def valid(body, xs):
    """The generator can combine shapes that do not broadcast: such programs are skipped."""
    try:
        body(*xs)
    except tf.errors.InvalidArgumentError:
        return False
    return True


def drawn(program):
    """(shapes, steps, target function, inputs away from 0) of a drawn program; a program
    whose shapes do not broadcast is skipped."""
    shapes, steps, seed = program
    rng = np.random.default_rng(seed)
    xs = [tf.constant(rng.uniform(0.2, 1.5, s) * rng.choice([-1, 1], s)) for s in shapes]
    body = lambda *xs: apply_steps(steps, xs)[-1] * 1.0     # noqa: E731
    assume(valid(body, xs))
    return shapes, steps, body, xs


def _jacobians(body, xs, pfor):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        y = body(*xs)
    return tape.jacobian(y, xs, experimental_use_pfor=pfor, unconnected_gradients="zero")


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_random_programs_vectorized_equals_loop_fd_and_function(mode, program):
    """Each mode, forced: the vectorized program == the loop == finite differences."""
    shapes, steps, body, xs = drawn(program)
    vec = _jacobians(body, xs, True)
    loop = _jacobians(body, xs, False)
    inside = tf.function(lambda *a: _jacobians(body, list(a), True))(*xs)
    for k, (v, lp, fi) in enumerate(zip(vec, loop, inside)):
        assert_same(v, lp)
        assert_same(fi, v, rtol=1e-9)
        if "sg" in {s[1] for s in steps}:
            continue  # stop_gradient: finite differences see through it
        xv = [x.numpy() for x in xs]

        def f(xk, k=k):
            args = [tf.constant(xk if i == k else a) for i, a in enumerate(xv)]
            return body(*args).numpy()
        np.testing.assert_allclose(v.numpy(), fd_jacobian(f, xv[k]), rtol=1e-5, atol=1e-5)


def _hessians(body, xs, pfor):
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(xs)
        with tf.GradientTape() as inner:
            inner.watch(xs)
            y = tf.reduce_sum(body(*xs))
        g = inner.gradient(y, xs[0], unconnected_gradients="zero")
    return outer.jacobian(g, xs, experimental_use_pfor=pfor, unconnected_gradients="zero")


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_random_hessians_vectorized_equals_loop_and_function(mode, program):
    """Reverse over reverse and forward over reverse: the vectorized Hessian == the loop's,
    eagerly and inside a function."""
    shapes, steps, body, xs = drawn(program)
    vec = _hessians(body, xs, True)
    loop = _hessians(body, xs, False)
    inside = tf.function(lambda *a: _hessians(body, list(a), True))(*xs)
    for v, lp, fi in zip(vec, loop, inside):
        assert_same(v, lp)
        assert_same(fi, v, rtol=1e-9)
    h = vec[0].numpy().reshape(int(np.prod(shapes[0])), -1)
    np.testing.assert_allclose(h, h.T, rtol=1e-9, atol=1e-9)     # symmetric to round-off


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_random_programs_compiled_with_numba(mode, program):
    """-m slow: the vectorized jacobian inside a function, compiled by Numba, == eager."""
    shapes, steps, body, xs = drawn(program)
    eager = _jacobians(body, xs, True)
    tf.set_backend("numba")
    try:
        compiled = tf.function(lambda *a: _jacobians(body, list(a), True))(*xs)
    finally:
        tf.set_backend("numpy")
    for e, c in zip(eager, compiled):
        assert_same(c, e, rtol=1e-9)


def test_compiled_gradient_of_persistent_tapes(monkeypatch):
    """Persistent tapes over one structure: from the third call the sweep is one compiled
    program; values, None for an unconnected source and output_gradients as in the sweep."""
    monkeypatch.setenv("TAPEFLOW_COMPILE_TAPE_AFTER", "3")
    J._GRADS.clear()
    J._GRAD_HITS.clear()
    w = tf.Variable(W)
    for k in range(4):
        x = tf.constant(X + k)
        z = tf.constant(X)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, z])
            y = tf.reduce_sum(tf.tanh(x @ w) ** 2, axis=1)
        gx, gw, gz = tape.gradient(y, [x, w, z])
        seed = tf.constant(np.arange(4.0))
        sx, = tape.gradient(y, [x], output_gradients=seed)
        assert gz is None
        t = np.tanh((X + k) @ W)
        d = 2 * t * (1 - t ** 2)
        np.testing.assert_allclose(gx.numpy(), d @ W.T, rtol=1e-10)
        np.testing.assert_allclose(gw.numpy(), (X + k).T @ d, rtol=1e-10)
        np.testing.assert_allclose(sx.numpy(), (np.arange(4.0)[:, None] * d) @ W.T, rtol=1e-10)
    assert len(J._GRADS) == 2     # the plain gradient and the seeded one, each compiled once


def test_bad_targets_and_sources_name_the_line():
    x = tf.constant(X)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.sin(x)
    with pytest.raises(TypeError, match=r"jacobian: target must be a single Tensor, got list \[at .*test_jacobian"):
        tape.jacobian([y, y], x)
    with pytest.raises(TypeError, match=r"sources\[0\] must be a Tensor or Variable"):
        tape.jacobian(y, ["x"])
    with pytest.raises(TypeError, match="batch_jacobian: source must be a Tensor"):
        tape.batch_jacobian(y, 3)
    with pytest.raises(ValueError, match="first dimension"):
        tape.batch_jacobian(y, tf.constant(np.ones((3, 3))))
    assert tape.jacobian(y, tf.constant(1.0)) is None      # not watched: None, as TF
