"""tape.jacobian and tape.batch_jacobian inside a function traced with None dims: one trace serves
every size, with TensorFlow's static shapes, and the values of the known-shape path.

The number of seeds is then a run-time tensor; the jacobian is one While over them
(tracer/dynamic_jacobian.py), whatever ``experimental_use_pfor`` says. The TensorFlow facts
were asked of TensorFlow 2.21 (side venv) and are stated per test.
"""
import numpy as np
import pytest

import tapeflow as tf

pytestmark = pytest.mark.usefixtures("numpy_backend")   # compiled: one test below

SIG = [tf.TensorSpec([None, 3], tf.float64)]
SIZES = (0, 1, 5)


def _x(n, seed=0):
    return np.random.default_rng(seed + n).uniform(-1.5, 1.5, (n, 3))


def _first(x, pfor=True):
    """y = x**2 * sum(x) (rows coupled through the sum): its jacobian and batch jacobian."""
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x ** 2 * tf.reduce_sum(x)
    return (tape.jacobian(y, x, experimental_use_pfor=pfor),
            tape.batch_jacobian(y, x, experimental_use_pfor=pfor))


def _hessian(x, pfor=True):
    """The jacobian of a gradient: the Hessian of sum(sin(x) * x[:, :1])."""
    with tf.GradientTape(persistent=True) as outer:   # eager loops need it
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(tf.sin(x) * x[:, :1])
        g = inner.gradient(y, x)
    return outer.jacobian(g, x, experimental_use_pfor=pfor)


def _batch_hessian(x, pfor=True):
    with tf.GradientTape(persistent=True) as outer:   # eager loops need it
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(tf.exp(x) * tf.reduce_sum(x * x, axis=1, keepdims=True))
        g = inner.gradient(y, x)
    return outer.batch_jacobian(g, x, experimental_use_pfor=pfor)


def _traced(fn, pfor):
    calls = []

    def body(x):
        calls.append(x.shape)
        out = fn(x, pfor)
        calls.append(tuple(t.shape for t in (out if isinstance(out, tuple) else (out,))))
        return out

    return tf.function(body, input_signature=SIG), calls


@pytest.fixture(scope="module", params=[True, False], ids=["pfor", "loop"])
def traced(request):
    return {name: _traced(fn, request.param) + (request.param,)
            for name, fn in (("first", _first), ("hessian", _hessian),
                             ("batch_hessian", _batch_hessian))}


def _same(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_static_shapes_are_tensorflows(traced):
    # TensorFlow 2.21, x: TensorSpec([None, 3]), y = x**2 (any elementwise y): jacobian's static
    # shape (None, 3, None, 3), batch_jacobian's (None, 3, 3), with and without pfor; the
    # jacobian of a gradient (outer.jacobian(inner.gradient(y, x), x)): (None, 3, None, 3)
    for name, want in (("first", [(None, 3), ((None, 3, None, 3), (None, 3, 3))]),
                       ("hessian", [(None, 3), ((None, 3, None, 3),)]),
                       ("batch_hessian", [(None, 3), ((None, 3, 3),)])):
        f, calls, _ = traced[name]
        f(tf.constant(_x(2)))
        assert calls == want


@pytest.mark.parametrize("name", ["first", "hessian", "batch_hessian"])
def test_one_trace_equals_the_known_shape_path_at_every_size(traced, name):
    # TensorFlow 2.21 traces once and gives these values at sizes 1 and 5; at size 0 it raises
    # InvalidArgumentError for batch_jacobian ("Integer division by zero") and for jacobian with
    # experimental_use_pfor=False (TensorListStack), where tapeflow gives the empty result of
    # the known-shape path, [0, 3, 0, 3] and [0, 3, 3]
    f, calls, pfor = traced[name]
    fn = {"first": _first, "hessian": _hessian, "batch_hessian": _batch_hessian}[name]
    for n in SIZES:
        x = tf.constant(_x(n))
        _same(f(x), fn(x, pfor))                          # eager, known shape
        _same(f(x), tf.function(fn)(x, pfor))             # traced at the known shape
    assert f.experimental_get_tracing_count() == 1
    assert calls[0] == (None, 3) and len(calls) == 2


def test_values_are_tensorflows():
    # TensorFlow 2.21, y = x**2, x = arange(15).reshape(5, 3) as float64, traced with
    # TensorSpec([None, 3]): jacobian[1, :, 1, :] = diag(6, 8, 10), batch_jacobian[1] the same
    def f(x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x ** 2
        return tape.jacobian(y, x), tape.batch_jacobian(y, x)

    j, bj = tf.function(f, input_signature=SIG)(tf.constant(np.arange(15.0).reshape(5, 3)))
    np.testing.assert_array_equal(j.numpy()[1, :, 1, :], np.diag([6.0, 8.0, 10.0]))
    np.testing.assert_array_equal(bj.numpy()[1], np.diag([6.0, 8.0, 10.0]))
    assert not np.any(j.numpy()[1, :, 2, :])


def test_a_vector_of_unknown_size():
    # TensorFlow 2.21, x: TensorSpec([None]), y = sin(x) * sum(x), at x = [1, 2]: static shape
    # (None, None), values [[2.4623779, 0.84147098], [0.90929743, -0.33914308]]
    seen = []

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float64)])
    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.sin(x) * tf.reduce_sum(x)
        j = tape.jacobian(y, x)
        seen.append(j.shape)
        return j

    np.testing.assert_allclose(f(tf.constant([1.0, 2.0], tf.float64)).numpy(),
                               [[2.4623779, 0.84147098], [0.90929743, -0.33914308]], rtol=1e-7)
    assert seen == [(None, None)]


def _numeric_jacobian(fn, x, eps=1e-6):
    """d fn(x) / dx by central differences: [*fn(x).shape, *x.shape]."""
    y0 = fn(x)
    out = np.zeros(y0.shape + x.shape)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        out[(Ellipsis,) + i] = (fn(x + d) - fn(x - d)) / (2 * eps)
    return out


def _gradient(x):
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.sin(x) * x[:, :1])
    return tape.gradient(y, x).numpy()


def test_against_finite_differences(traced):
    x = _x(4)
    f, _, _ = traced["first"]
    j, bj = f(tf.constant(x))
    want = _numeric_jacobian(lambda v: v ** 2 * v.sum(), x)
    np.testing.assert_allclose(j.numpy(), want, rtol=1e-7, atol=1e-8)
    # the rows are coupled: TensorFlow's batch jacobian seeds column i of every row at once,
    # so it sums the target's rows
    np.testing.assert_allclose(bj.numpy(), np.einsum("cibj->bij", want), rtol=1e-7, atol=1e-8)
    h, _, _ = traced["hessian"]
    np.testing.assert_allclose(h(tf.constant(x)).numpy(), _numeric_jacobian(_gradient, x),
                               rtol=1e-7, atol=1e-8)


def test_several_sources_unconnected_and_variables():
    """A source of known shape (a variable), an unconnected one (None, or zeros of unknown
    size with UnconnectedGradients.ZERO), and the target as its own source."""
    w = tf.Variable(np.array([[0.5, -1.0], [2.0, 0.25], [1.0, 1.5]]))

    def f(x, other):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, other])
            y = tf.tanh(tf.matmul(x, w))
        return (tape.jacobian(y, [x, w, other]),
                tape.jacobian(y, other, unconnected_gradients=tf.UnconnectedGradients.ZERO),
                tape.jacobian(y, y), tape.batch_jacobian(y, other))

    traced = tf.function(f, input_signature=SIG * 2)
    for n in (3, 0):
        x, other = tf.constant(_x(n)), tf.constant(_x(n, 7))
        (jx, jw, none), zero, self_j, bj_other = traced(x, other)
        (wx, ww, wnone), wzero, wself, wbj = f(x, other)
        assert none is None and wnone is None
        for g, e in ((jx, wx), (jw, ww), (zero, wzero), (self_j, wself), (bj_other, wbj)):
            assert g.shape == e.shape
            np.testing.assert_array_equal(g.numpy(), e.numpy())
    assert traced.experimental_get_tracing_count() == 1


def test_compiled_equals_the_interpreter():
    """TAPEFLOW_BACKEND numba through jit_compile=True: the While over the seeds compiled
    (first order, and the jacobian of a gradient), no interpreter fallback."""
    x = tf.constant(_x(3))
    wants = [tf.function(fn, input_signature=SIG)(x) for fn in (_first, _hessian)]
    tf.set_backend("numba")   # the numpy_backend fixture restores the interpreter after
    for fn, want in zip((_first, _hessian), wants, strict=True):
        f = tf.function(fn, input_signature=SIG, jit_compile=True)
        got = f(x)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,), strict=True):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)
        (program,) = f.get_concrete_function()._specialized.values()
        assert program.fallback is None


def test_through_a_function_traced_with_none_dims():
    """An eager tape over a call of a None-dim function: the reverse sweep replays the call's
    backward program, whose sizes are unknown, so the jacobians run the same loop, eagerly."""
    f = tf.function(lambda x: tf.sin(x) * tf.reduce_sum(x, axis=1, keepdims=True),
                    input_signature=SIG)
    for n in (4, 1):
        x = tf.constant(_x(n))
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = f(x)
            y_eager = tf.sin(x) * tf.reduce_sum(x, axis=1, keepdims=True)
        for got, want in ((tape.jacobian(y, x), tape.jacobian(y_eager, x)),
                          (tape.batch_jacobian(y, x), tape.batch_jacobian(y_eager, x))):
            assert got.shape == want.shape
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-14, atol=1e-15)


def test_loops_over_unknown_sizes_on_numba():
    """What the jacobian loop needs of ConcreteFunction.run: a While over values of unknown
    size is specialised with the call's sizes and compiled; one whose loop variable grows
    (a concat in the body) has no static program and runs on the interpreter."""
    def scaled(x):
        i, y = tf.constant(0), x
        while i < tf.size(x):
            y = y * 2.0 + tf.reduce_sum(x)
            i += 1
        return y

    def grown(x):
        i, y = tf.constant(0), x
        while i < tf.size(x) - 1:
            y = tf.concat([y, x[:1]], 0)
            i += 1
        return y

    x = tf.constant([1.0, 2.0, 3.0], tf.float64)
    tf.set_backend("numba")   # the numpy_backend fixture restores the interpreter after
    sig = [tf.TensorSpec([None], tf.float64)]
    f, g = (tf.function(fn, input_signature=sig, jit_compile=True) for fn in (scaled, grown))
    np.testing.assert_array_equal(f(x).numpy(), [50.0, 58.0, 66.0])
    np.testing.assert_array_equal(g(x).numpy(), [1.0, 2.0, 3.0, 1.0, 1.0])
    (compiled,) = f.get_concrete_function()._specialized.values()
    assert compiled.fallback is None


@pytest.mark.parametrize("spec, width", [([None, None], 4), ([None, 17], 17)],
                         ids=["unknown width", "width over UNROLL"])
def test_batch_jacobian_looping_over_columns(spec, width):
    """A batch jacobian whose number of columns is unknown while tracing, or over
    dynamic_jacobian.UNROLL: the While over the columns, at every batch size."""
    def f(x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.sin(x) * tf.reduce_sum(x * x, axis=1, keepdims=True)
        return tape.batch_jacobian(y, x), tape.jacobian(y, x)

    traced = tf.function(f, input_signature=[tf.TensorSpec(spec, tf.float64)])
    for n in SIZES:
        x = tf.constant(np.random.default_rng(n).uniform(-1, 1, (n, width)))
        for g, w in zip(traced(x), f(x), strict=True):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert traced.experimental_get_tracing_count() == 1
