"""reduce_prod's gradient inside a function traced with None dims: one trace serves every size,
and its first and second order equal the known-shape trace's and eager's (zeros included).

The rule (autodiff/grads/reduce.py) takes the product of the others per element from an
``[..., n, n]`` stack with an identity of run-time size (``ops.dims.eye``) on its diagonal, so
the None-dim graph runs the same ops as the known-shape one. The TensorFlow facts were asked
of TensorFlow 2.21 (side venv).
"""
import numpy as np
import pytest

import tapeflow as tf

pytestmark = pytest.mark.usefixtures("numpy_backend")   # compiled: one test below

WEIGHTS = np.array([1.0, 2.0, 3.0])


def _prod_and_hessian_vector(x):
    """The gradient g of a weighted sum of reduce_prod over axis 0 plus reduce_prod over all
    axes, and the gradient of sum(g * g) (second order)."""
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(tf.reduce_prod(x, axis=0) * tf.constant(WEIGHTS)) + tf.reduce_prod(x)
        g = inner.gradient(y, x)
        s = tf.reduce_sum(g * g)
    return g, outer.gradient(s, x)


INPUTS = {
    "no zero": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
    "one zero": [[0.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
    "two zeros in a column": [[0.0, 2.0, 3.0], [0.0, 5.0, 6.0]],
    "two zeros in a row": [[0.0, 0.0, 3.0], [4.0, 5.0, 6.0]],
}

# TensorFlow 2.21 gives these first-order gradients eagerly, in a function traced at the
# known shape, and in one traced with TensorSpec([None, 3], tf.float64): the same in all three.
TF_FIRST_ORDER = {
    "no zero": [[724.0, 370.0, 258.0], [181.0, 148.0, 129.0]],
    "one zero": [[724.0, 10.0, 18.0], [0.0, 4.0, 9.0]],
    "two zeros in a column": [[0.0, 10.0, 18.0], [0.0, 4.0, 9.0]],
    "two zeros in a row": [[4.0, 10.0, 18.0], [0.0, 0.0, 9.0]],
}
# ... and these second-order ones (again the same in all three). Its Cumprod gradient divides
# by the input (div_no_nan), so where an input is 0 it gives 0 for terms that are not: with
# "one zero" the [0, 0] entry is 0 there, where the derivative (finite differences below, and
# tapeflow eager, whose rule never divides) is 19152. Without zeros the two agree.
TF_SECOND_ORDER_NO_ZERO = [[529346.0, 653164.0, 483342.0], [378044.0, 307264.0, 258312.0]]

NONE_SIG = [tf.TensorSpec([None, 3], tf.float64)]


@pytest.fixture(scope="module")
def traced():
    return {"known": tf.function(_prod_and_hessian_vector),
            "none": tf.function(_prod_and_hessian_vector, input_signature=NONE_SIG)}


def _run(f, x):
    return [t.numpy() for t in f(tf.constant(np.asarray(x, np.float64)))]


@pytest.mark.parametrize("name", list(INPUTS))
def test_first_and_second_order_equal_the_known_shape_trace(traced, name):
    x = INPUTS[name]
    eager = _run(_prod_and_hessian_vector, x)
    known = _run(traced["known"], x)
    none = _run(traced["none"], x)
    np.testing.assert_array_equal(eager[0], TF_FIRST_ORDER[name])
    for got in (known, none):
        for w, g in zip(eager, got, strict=True):
            np.testing.assert_array_equal(g, w)
    assert traced["none"].experimental_get_tracing_count() == 1


def test_second_order_is_tensorflows_without_zeros_and_the_derivative_with_them(traced):
    _, h = _run(traced["none"], INPUTS["no zero"])
    np.testing.assert_allclose(h, TF_SECOND_ORDER_NO_ZERO, rtol=1e-14)
    for name in ("one zero", "two zeros in a column"):
        x = np.asarray(INPUTS[name])
        _, h = _run(traced["none"], x)
        np.testing.assert_allclose(h, _finite_differences(x), rtol=1e-6, atol=1e-6)


def _finite_differences(x, eps=1e-5):
    """d sum(g * g) / dx by central differences of the first-order gradient (exact in float64
    at this size: the function is a polynomial)."""
    def s(v):
        g, _ = _prod_and_hessian_vector(tf.constant(v))
        return float(np.sum(g.numpy() ** 2))
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        out[i] = (s(x + d) - s(x - d)) / (2 * eps)
    return out


@pytest.mark.parametrize("rows", [0, 1, 5])
def test_one_trace_serves_every_size(rows):
    calls = []

    def f(x):
        calls.append(x.shape)
        return _prod_and_hessian_vector(x)

    g = tf.function(f, input_signature=NONE_SIG)
    rng = np.random.default_rng(rows)
    for n in (rows, 3):
        x = rng.uniform(-2, 2, (n, 3))
        x[0:1, 1] = 0.0      # a zero in a column (none when the batch is empty)
        for w, got in zip(_run(_prod_and_hessian_vector, x), _run(g, x), strict=True):
            np.testing.assert_array_equal(got, w)
    assert calls == [(None, 3)]


def test_every_dim_unknown_and_keepdims():
    """Axes 1 and 2 of a rank-3 input, every dim unknown, keepdims: the same as known sizes."""
    def f(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(tf.sin(tf.reduce_prod(x, axis=[1, 2], keepdims=True)))
            g = inner.gradient(y, x)
            s = tf.reduce_sum(g * x)
        return g, outer.gradient(s, x)

    x = np.random.default_rng(3).uniform(-1.5, 1.5, (2, 3, 2))
    x[1, 2, 0] = 0.0
    none = tf.function(f, input_signature=[tf.TensorSpec([None, None, None], tf.float64)])
    for w, g in zip(_run(tf.function(f), x), _run(none, x), strict=True):
        np.testing.assert_array_equal(g, w)


def test_compiled_equals_the_interpreter(traced):
    """TAPEFLOW_BACKEND numba through jit_compile=True: the None-dim trace compiled."""
    tf.set_backend("numba")   # the numpy_backend fixture restores the interpreter after
    f = tf.function(_prod_and_hessian_vector, input_signature=NONE_SIG, jit_compile=True)
    for name in ("no zero", "one zero"):
        for w, g in zip(_run(traced["known"], INPUTS[name]), _run(f, INPUTS[name]), strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-12)
