"""The special functions against TensorFlow 2.21's values and gradients (facts_special.py),
eagerly and inside one compiled function; TF's None/LookupError gradients; dtypes and errors."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ops import special

from vocab.facts_special import A, B, DOMAINS, FACTS

M = tf.math
UNARY = ["asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "ceil", "rint",
         "lgamma", "digamma", "erfc", "erfinv", "ndtri", "bessel_i0", "bessel_i0e", "bessel_i1",
         "bessel_i1e", "log_sigmoid", "erfcinv"]
BINARY = ["atan2", "xlogy", "xlog1py", "xdivy", "divide_no_nan", "multiply_no_nan",
          "squared_difference", "nextafter"]
PARAM = ["igamma", "igammac", "zeta", "polygamma"]
PARAM_X = [0.3, 1.0, 2.0, 9.0]


def _close(got, want, rtol):
    want = np.array([np.nan if w is None else w for w in want], dtype=np.float64)
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=1e-300)


def _unary_grad(name, x):
    with tf.GradientTape() as t:
        t.watch(x)
        y = getattr(M, name)(x)
    return y, t.gradient(y, x)


def _binary_grads(name, a, b):
    with tf.GradientTape(persistent=True) as t:
        t.watch([a, b])
        y = getattr(M, name)(a, b)
    return (y,) + tuple(t.gradient(y, [a, b]))


def _all(xs, ab):
    """Every function's value and gradients, as one flat list (None stays None)."""
    out = []
    for name in UNARY:
        out.extend(_unary_grad(name, xs[FACTS[name][0]]))
    a, b = ab
    for name in BINARY:
        out.extend(_binary_grads(name, a, b))
    for name in PARAM:
        out.extend(_binary_grads(name, tf.constant(FACTS[name][0], tf.float64),
                                 tf.constant(PARAM_X, tf.float64)))
    return out


def _check(results, rtol):
    it = iter(results)
    for name in UNARY:
        _, values, grad = FACTS[name]
        y, g = next(it), next(it)
        _close(y, values, rtol)
        assert (g is None) == (grad is None), name
        if grad is not None:
            _close(g, grad, rtol)
    for name in BINARY + PARAM:
        _, values, grads = FACTS[name]
        y = next(it)
        _close(y, values, rtol)
        for g, want in zip((next(it), next(it)), grads):
            assert (g is None) == (want is None), name
            if want is not None:
                _close(g, want, rtol)


def _inputs():
    xs = {k: tf.constant(v, tf.float64) for k, v in DOMAINS.items()}
    return xs, (tf.constant(A, tf.float64), tf.constant(B, tf.float64))


def test_values_and_gradients_eager():
    _check(_all(*_inputs()), rtol=1e-12)


def test_values_and_gradients_traced_on_the_interpreter(numpy_backend):
    xs, ab = _inputs()
    fn = tf.function(lambda xs, ab: [r if r is not None else tf.constant(np.nan)
                                     for r in _all(xs, ab)])
    got = fn(xs, ab)
    eager = _all(xs, ab)
    _check([None if e is None else g for g, e in zip(got, eager)], rtol=1e-12)


@pytest.mark.slow
def test_values_and_gradients_compiled():
    xs, ab = _inputs()
    fn = tf.function(lambda xs, ab: [r if r is not None else tf.constant(np.nan)
                                     for r in _all(xs, ab)])
    got = fn(xs, ab)
    eager = _all(xs, ab)
    _check([None if e is None else g for g, e in zip(got, eager)], rtol=1e-10)


def test_betainc_gradient_only_for_x():
    a, b, x = (tf.constant(v, tf.float64) for v in ([0.5, 1.0, 2.5, 4.0], [1.5, 2.0, 0.5, 3.0],
                                                      [0.2, 0.5, 0.7, 0.95]))
    with tf.GradientTape(persistent=True) as t:
        t.watch([a, b, x])
        y = M.betainc(a, b, x)
    _, values, grads = FACTS["betainc"]
    _close(y, values, 1e-12)
    ga, gb, gx = t.gradient(y, [a, b, x])
    assert ga is None and gb is None
    _close(gx, grads[2], 1e-12)


@pytest.mark.parametrize("name", ["asin", "lgamma", "erfinv", "bessel_i1e", "digamma"])
def test_second_derivatives(name):
    x = tf.constant(DOMAINS[FACTS[name][0]], tf.float64)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = getattr(M, name)(x)
        g = t1.gradient(y, x)
    _close(t2.gradient(g, x), FACTS["dd_" + name], 1e-10)


def test_composites_and_integer_ops():
    assert tf.truncatediv([7, -7, 7, -7, 0], [2, 2, -2, -2, 3]).numpy().tolist() == FACTS["truncatediv_i"]
    assert tf.truncatemod([7, -7, 7, -7, 0], [2, 2, -2, -2, 3]).numpy().tolist() == FACTS["truncatemod_i"]
    assert tf.truncatediv([7.5, -7.5, 1.0], [2.0, 2.0, -3.0]).numpy().tolist() == FACTS["truncatediv_f"]
    assert tf.truncatemod([7.5, -7.5, 1.0], [2.0, 2.0, -3.0]).numpy().tolist() == FACTS["truncatemod_f"]
    _close(M.lbeta(tf.constant([[1.0, 2.0, 3.0], [0.5, 0.5, 4.0]], tf.float64)), FACTS["lbeta"], 1e-12)
    _close(M.lbeta(tf.zeros([2, 0], tf.float64)), FACTS["lbeta_empty"], 0)
    _close(M.polyval([2.0, -1.0, 0.5], tf.constant([0.0, 1.5, -2.0])), FACTS["polyval"], 1e-6)
    assert M.logical_xor([True, True, False, False], [True, False, True, False]).numpy().tolist() == FACTS["logical_xor"]
    _close(M.reciprocal_no_nan(tf.constant([0.0, 2.0, -4.0])), FACTS["reciprocal_no_nan"], 1e-7)
    q = M.divide_no_nan(tf.constant([1, 2, 3]), tf.constant([0, 4, 2]))
    assert (q.numpy().tolist(), q.dtype.name) == FACTS["divide_no_nan_int"]


def test_special_points_are_tensorflows():
    """TF 2.21's values where SciPy's differ or the definition is a convention."""
    f64 = lambda v: tf.constant(v, tf.float64)  # noqa: E731
    nan, inf = np.nan, np.inf
    got = M.digamma(f64([0.0, -1.0, 1e-300, inf, -inf])).numpy()
    np.testing.assert_array_equal(got, [nan, nan, -9.999999999999999e+299, inf, nan])
    np.testing.assert_array_equal(M.lgamma(f64([0.0, -1.0, -inf])).numpy(), [inf, inf, inf])
    np.testing.assert_array_equal(M.erfinv(f64([1e-300, -1.0, 1.0])).numpy(), [0.0, -inf, inf])
    np.testing.assert_array_equal(M.bessel_i0(f64([inf])).numpy(), [nan])
    a, x = f64([0.0, 0.0, 1.0, 2.0, nan, 0.0]), f64([0.0, nan, 0.0, inf, 0.0, inf])
    np.testing.assert_array_equal(M.xlogy(a, x).numpy(), [0.0, 0.0, -inf, inf, nan, 0.0])
    np.testing.assert_array_equal(M.divide_no_nan(a, x).numpy(), [0.0, nan, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(M.multiply_no_nan(a, x).numpy(), [0.0, nan, 0.0, inf, 0.0, nan])
    np.testing.assert_array_equal(M.igamma(a, x).numpy(), [0.0, nan, 0.0, 1.0, 0.0, nan])
    np.testing.assert_array_equal(M.igammac(a, x).numpy(), [nan, nan, 1.0, 0.0, nan, nan])
    np.testing.assert_array_equal(M.zeta(a, x).numpy(), [nan, nan, inf, 0.0, nan, nan])
    np.testing.assert_array_equal(
        M.zeta(f64([2.0, 1.0, 0.5, 2.0, 2.0]), f64([1.0, 1.0, 1.0, -1.0, 0.0])).numpy()[1:],
        [inf, nan, inf, inf])
    np.testing.assert_array_equal(
        M.polygamma(f64([1.5, -1.0]), f64([2.0, 2.0])).numpy(), [nan, nan])
    np.testing.assert_array_equal(
        M.betainc(f64([-1.0, 2.0, 0.0]), f64([1.0, 2.0, 1.0]), f64([0.5, 1.5, 0.5])).numpy(),
        [nan, nan, nan])


def test_no_gradient_where_tensorflow_has_none():
    x = tf.constant([5.0, -7.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.truncatemod(x, 3.0)
    with pytest.raises(LookupError, match="TruncateMod"):
        t.gradient(y, x)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.truncatediv(x, 3.0)
    assert t.gradient(y, x) is None
    for fn in (M.ceil, M.rint):
        with tf.GradientTape() as t:
            t.watch(x)
            y = fn(x)
        assert t.gradient(y, x) is None
    a = tf.constant([1.5, 2.0], tf.float64)
    xg = tf.constant([0.5, 3.0], tf.float64)
    with tf.GradientTape() as t2:
        t2.watch(a)
        with tf.GradientTape() as t1:
            t1.watch(a)
            y = M.igamma(a, xg)
        g = t1.gradient(y, a)
    with pytest.raises(LookupError, match="IgammaGradA"):
        t2.gradient(g, a)


def test_dtypes_tensorflow_refuses():
    from tapeflow.errors import InvalidArgumentError
    for fn, args in [(M.erfinv, [tf.constant([0.5], tf.float16)]),
                     (M.lgamma, [tf.constant([1, 2])]),
                     (M.igamma, [tf.constant([1.0], tf.float16)] * 2),
                     (tf.truncatemod, [tf.constant([1], tf.int8)] * 2),
                     (M.squared_difference, [tf.constant([1], tf.int8)] * 2)]:
        with pytest.raises((InvalidArgumentError, TypeError)):
            fn(*args)
    assert M.lgamma(tf.constant([2.5], tf.float16)).dtype == tf.float16
    assert M.bessel_i0e(tf.constant([2.5], tf.float16)).dtype == tf.float16
    with pytest.raises((InvalidArgumentError, ValueError)):
        M.betainc(tf.ones([2], tf.float64), tf.ones([3], tf.float64), tf.ones([2], tf.float64))
    assert M.betainc(0.5, 1.5, tf.constant([0.3, 0.6], tf.float64)).shape == (2,)


def test_igamma_grad_a_matches_finite_differences():
    a, x = np.array([0.5, 1.0, 2.5, 4.0, 30.0]), np.array([0.3, 1.0, 2.0, 9.0, 25.0])
    h = 1e-6
    want = (M.igamma(a + h, x).numpy() - M.igamma(a - h, x).numpy()) / (2 * h)
    np.testing.assert_allclose(special.igamma_grad_a(a, x).numpy(), want, rtol=1e-6)
