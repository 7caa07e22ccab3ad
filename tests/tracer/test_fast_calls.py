"""The generated per-call path (tracer.fastcall): same results, types and rules as the general path.

A repeated call of a ``tapeflow.function`` skips binding and keying through a generated
``__call__`` and runs the program through a generated ``fast``; these tests compare what it
returns with NumPy formulas and with the general path, on the Numba backend (the only one
with entry points and scalar conversions) and, where noted, the interpreter.
"""
import threading
from collections import namedtuple

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.tracer.fastcall import structure_of
from tapeflow.tracer import engine as backend


@pytest.fixture(autouse=True)
def numba_backend():
    old = backend.get_backend()
    tf.set_backend("numba")
    yield
    tf.set_backend(old)


def _w1(x, y):
    with tf.GradientTape() as tape:
        tape.watch(x)
        tape.watch(y)
        z = x * x * y + tf.sin(x)
    return tape.gradient(z, [x, y])


@pytest.fixture(scope="module")
def w1():
    old = backend.get_backend()
    tf.set_backend("numba")
    f = tf.function(_w1)
    f(tf.constant(np.float32(0.5)), tf.constant(np.float32(2.0)))   # compiles once
    tf.set_backend(old)
    return f


def _expected(x, y):
    x, y = np.float32(x), np.float32(y)
    return [np.float32(2) * x * y + np.cos(x), x * x]


def test_repeated_scalar_calls_take_the_generated_path_and_match_numpy(w1):
    assert type(w1).__call__ is not tf.function(_w1).__class__.__call__   # installed
    for x, y in [(0.5, 2.0), (-1.25, 3.0), (3.0, -0.5), (0.5, 2.0)]:
        got = w1(tf.constant(np.float32(x)), tf.constant(np.float32(y)))
        for g, e in zip(got, _expected(x, y), strict=True):
            assert type(g._value) is np.float32 and g.dtype == tf.float32 and g.shape == []
            np.testing.assert_allclose(g.numpy(), e, rtol=2e-6)
    assert w1.experimental_get_tracing_count() == 1


def test_signed_zero_nan_and_inf_survive_the_float32_conversion(w1):
    # dz/dy = x*x: -0.0 squared is +0.0; dz/dx at y = 0: 2*0*x + cos x
    dx, dy = w1(tf.constant(np.float32(-0.0)), tf.constant(np.float32(1.0)))
    assert dy.numpy() == 0 and not np.signbit(dy.numpy())
    dx, dy = w1(tf.constant(np.float32(np.nan)), tf.constant(np.float32(1.0)))
    assert np.isnan(dx.numpy()) and np.isnan(dy.numpy())
    dx, dy = w1(tf.constant(np.float32(1e30)), tf.constant(np.float32(1.0)))
    assert np.isinf(dy.numpy()) and dy.numpy() > 0

    @tf.function
    def neg_zero(x):
        return x * np.float32(-1.0), x - x
    a, b = neg_zero(tf.constant(np.float32(0.0)))
    a, b = neg_zero(tf.constant(np.float32(0.0)))    # the generated path
    assert np.signbit(a.numpy()) and not np.signbit(b.numpy())
    assert type(a._value) is np.float32


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64])
def test_scalar_outputs_of_other_dtypes_keep_their_numpy_type(dtype):
    @tf.function
    def f(x):
        return x * x + x
    x = tf.constant(np.array(3, dtype))
    for _ in range(2):
        out = f(x)
        assert type(out._value) is np.dtype(dtype).type and out.numpy() == 12


def test_a_tape_or_an_outer_trace_takes_the_general_path(w1):
    x, y = tf.constant(np.float32(0.5)), tf.constant(np.float32(2.0))
    with tf.GradientTape() as tape:
        tape.watch(x)
        dx, _ = w1(x, y)
    # d(2xy + cos x)/dx = 2y - sin x, through the compiled call
    np.testing.assert_allclose(tape.gradient(dx, x).numpy(), 2 * 2.0 - np.sin(0.5), rtol=1e-6)

    @tf.function
    def outer(x, y):
        return w1(x, y)[1] * 3.0
    np.testing.assert_allclose(outer(x, y).numpy(), 3 * 0.25, rtol=1e-6)


def test_list_arguments_array_outputs_and_retracing_on_new_shapes():
    @tf.function
    def f(x, params):
        w, b = params
        return {"y": tf.matmul(x, w) + b, "n": 2}, [tf.reduce_sum(x)]

    rng = np.random.default_rng(0)
    for n in (3, 3, 4, 3):
        x = rng.standard_normal((n, 5)).astype(np.float32)
        w = rng.standard_normal((5, 2)).astype(np.float32)
        b = rng.standard_normal(2).astype(np.float32)
        params = [tf.Variable(w), tf.constant(b)]
        out, (s,) = f(tf.constant(x), params)
        np.testing.assert_allclose(out["y"].numpy(), x @ w + b, rtol=1e-5)
        assert out["n"] == 2 and out["y"].shape == [n, 2]
        np.testing.assert_allclose(s.numpy(), x.sum(), rtol=1e-5)
        with pytest.raises(ValueError):
            out["y"]._value[0, 0] = 1.0       # results are read-only, as on the general path
    assert f.experimental_get_tracing_count() == 2
    # a tuple instead of the list, or a Tensor instead of the Variable: other keys, same values
    out, _ = f(tf.constant(x), (tf.constant(w), tf.constant(b)))
    np.testing.assert_allclose(out["y"].numpy(), x @ w + b, rtol=1e-5)
    assert f.experimental_get_tracing_count() == 3


def test_non_contiguous_and_other_dtype_arrays_are_converted_not_misread():
    @tf.function
    def f(x):
        return x * 2.0

    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.allclose(f(tf.constant(base.T.copy())).numpy(), 2 * base.T)
    strided = tf.transpose(tf.constant(base))        # may be a view of base
    np.testing.assert_array_equal(f(strided).numpy(), 2 * base.T)
    np.testing.assert_array_equal(f(strided).numpy(), 2 * base.T)


def test_captured_variables_are_read_on_every_call():
    v = tf.Variable(np.float32(2.0))

    @tf.function
    def f(x):
        return x * v

    x = tf.constant(np.float32(3.0))
    assert f(x).numpy() == 6 and f(x).numpy() == 6
    v.assign(np.float32(5.0))
    assert f(x).numpy() == 15


def test_assigns_are_stored_by_the_generated_path_as_assign_would():
    """A step that updates variables (an optimizer's) stores the program's results in them:
    the same values, dtypes and read-only arrays as ``assign``; a returned value shared with
    an assign, and a constant assigned, stay safe; a tape takes the general path."""
    w = tf.Variable(np.array([1.0, 2.0], np.float32))
    m = tf.Variable(np.zeros(2, np.float32))
    n = tf.Variable(np.int64(0))
    s = tf.Variable(np.float32(0.0))
    z = tf.Variable(np.ones(2, np.float32))

    @tf.function
    def step(g):
        m.assign(0.5 * m + g)
        w.assign_sub(0.1 * m)
        n.assign_add(1)
        s.assign(tf.reduce_sum(w))
        z.assign(tf.zeros(2))          # a constant the program keeps: stored as a copy
        return w.read_value(), s.read_value()

    g = tf.constant(np.array([1.0, -1.0], np.float32))
    ew, em = np.array([1.0, 2.0], np.float32), np.zeros(2, np.float32)
    for k in range(1, 4):
        out_w, out_s = step(g)
        em = np.float32(0.5) * em + g.numpy()
        ew = ew - np.float32(0.1) * em
        np.testing.assert_array_equal(w.numpy(), ew)
        np.testing.assert_array_equal(out_w.numpy(), ew)
        assert int(n.numpy()) == k and type(n._value) is np.int64
        assert type(s._value) is np.float32 and s.numpy() == np.sum(ew, dtype=np.float32)
        assert not w._value.flags.writeable and not z._value.flags.writeable
    concrete = list(step._concrete.values())[0]
    assert concrete.fast != concrete.call_fast          # the generated path, assigns included
    with tf.GradientTape():
        step(g)
    assert int(n.numpy()) == 4


def test_namedtuple_outputs_use_the_general_builder():
    Pair = namedtuple("Pair", "a b")

    @tf.function
    def f(x):
        return Pair(x + 1.0, None)
    for _ in range(2):
        out = f(tf.constant(np.float32(1.0)))
        assert isinstance(out, Pair) and out.a.numpy() == 2 and out.b is None


def test_structure_of_only_accepts_tensor_leaves():
    t = tf.constant(1.0)
    assert structure_of((t, [t, t])) == (None, (list, 2))
    assert structure_of((t, 3.0)) is None
    assert structure_of(([t, [t]],)) is None


def test_threads_calling_the_generated_path_get_their_own_results(w1):
    xs = np.linspace(-2, 2, 8).astype(np.float32)
    errors = []

    def work(x):
        try:
            for _ in range(200):
                dx, dy = w1(tf.constant(x), tf.constant(np.float32(1.5)))
                np.testing.assert_allclose([dx.numpy(), dy.numpy()], _expected(x, 1.5), rtol=2e-6)
        except Exception as e:       # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_scalar_results_are_complete_tensors_either_way(monkeypatch):
    """Built in place (Tensor's constructor only sets _value and _id) or through Tensor(...)."""
    import weakref

    from tapeflow.tracer import fastcall

    for plain in (True, False):
        monkeypatch.setattr(fastcall, "_PLAIN_TENSOR", plain and fastcall._plain_tensor_init())

        @tf.function
        def f(x):
            return x * 3.0, x + 1.0

        x = tf.constant(np.float32(2.0))
        f(x)
        a, b = f(x)
        assert ("new(Tensor)" in f.get_concrete_function(x).fast.__source__) == (plain and fastcall._plain_tensor_init())
        assert a.numpy() == 6 and b.numpy() == 3 and type(a._value) is np.float32
        assert weakref.ref(a)() is a and a._id != b._id and min(a._id, b._id) > x._id
        assert (a + b).numpy() == 9
