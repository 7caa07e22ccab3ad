"""The Gaussian-process path of tf.linalg: triangular_solve, cholesky_solve, logdet, slogdet,
band_part, diag/diag_part/set_diag (k bands, align, padding), tensor_diag(_part).

Values, errors and gradients (first and second order) are TF 2.21's, asked once and written
here as facts; one compiled tf.function checks compiled == eager on them; jacobians
vectorize through the new ops.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

X34 = np.arange(1.0, 13.0).reshape(3, 4)
R16 = np.arange(16.0).reshape(4, 4)
A = np.array([[4., 1., 0.5], [2., 3., 0.2], [0.3, 0.1, 2.]])
B = np.array([[1., 2.], [3., 4.], [5., 6.]])

# (what, fn, TF 2.21's value)
VALUES = [
    ("band_part(1, -1)", lambda: tf.linalg.band_part(R16, 1, -1),
     [[0, 1, 2, 3], [4, 5, 6, 7], [0, 9, 10, 11], [0, 0, 14, 15]]),
    ("band_part(-2, 0)", lambda: tf.linalg.band_part(R16, -2, 0),
     [[0, 0, 0, 0], [4, 5, 0, 0], [8, 9, 10, 0], [12, 13, 14, 15]]),
    ("diag_part k=1", lambda: tf.linalg.diag_part(X34, k=1), [2, 7, 12]),
    ("diag_part k=(-1,1)", lambda: tf.linalg.diag_part(X34, k=(-1, 1)),
     [[2, 7, 12], [1, 6, 11], [5, 10, 0]]),
    ("diag_part LEFT_RIGHT pad 9", lambda: tf.linalg.diag_part(X34, k=(-1, 1), align="LEFT_RIGHT",
                                                               padding_value=9),
     [[2, 7, 12], [1, 6, 11], [9, 5, 10]]),
    ("diag_part LEFT_LEFT", lambda: tf.linalg.diag_part(X34, k=(-1, 1), align="LEFT_LEFT"),
     [[2, 7, 12], [1, 6, 11], [5, 10, 0]]),
    ("diag k=1", lambda: tf.linalg.diag([1., 2.], k=1), [[0, 1, 0], [0, 0, 2], [0, 0, 0]]),
    ("diag k=-1 num_cols=4", lambda: tf.linalg.diag([1., 2.], k=-1, num_cols=4),
     [[0, 0, 0, 0], [1, 0, 0, 0], [0, 2, 0, 0]]),
    ("diag k=(0,1)", lambda: tf.linalg.diag([[1., 2.], [3., 4.]], k=(0, 1)), [[3, 2], [0, 4]]),
    ("diag LEFT_LEFT pad 7", lambda: tf.linalg.diag([[1., 2.], [3., 4.]], k=(0, 1), align="LEFT_LEFT",
                                                    padding_value=7), [[3, 1], [7, 4]]),
    ("diag num_rows=3 num_cols=2", lambda: tf.linalg.diag([1., 2.], num_rows=3, num_cols=2),
     [[1, 0], [0, 2], [0, 0]]),
    ("diag num_rows=3", lambda: tf.linalg.diag([1., 2.], num_rows=3), [[1, 0], [0, 2], [0, 0]]),
    ("set_diag k=(0,1)", lambda: tf.linalg.set_diag(X34, [[7., 8., 9.], [1., 2., 3.]], k=(0, 1)),
     [[1, 7, 3, 4], [5, 2, 8, 8], [9, 10, 3, 9]]),
    ("set_diag k=1", lambda: tf.linalg.set_diag(X34, [7., 8., 9.], k=1),
     [[1, 7, 3, 4], [5, 6, 8, 8], [9, 10, 11, 9]]),
    ("tensor_diag", lambda: tf.linalg.tensor_diag([[1., 2.], [3., 4.]]),
     [[[[1, 0], [0, 0]], [[0, 2], [0, 0]]], [[[0, 0], [3, 0]], [[0, 0], [0, 4]]]]),
    ("tensor_diag_part", lambda: tf.linalg.tensor_diag_part(np.arange(16.).reshape(2, 2, 2, 2)),
     [[0, 5], [10, 15]]),
    ("cholesky_solve", lambda: tf.linalg.cholesky_solve([[2., 0.], [1., 3.]], [[1.], [2.]]),
     [[0.16666666], [0.16666667]]),
    ("triangular_solve singular: inf, no error",
     lambda: tf.linalg.triangular_solve(np.array([[2., 0.], [1., 0.]]), np.ones([2, 1])), [[0.5], [np.inf]]),
    ("triangular_solve broadcast batch",
     lambda: tf.linalg.triangular_solve(np.ones([3, 2, 2]), np.ones([2, 1])), [[[1.], [0.]]] * 3),
    ("slogdet", lambda: tf.stack(tf.linalg.slogdet([[1., 2.], [3., 4.]])), [-1.0, 0.6931471824645996]),
    ("slogdet singular: (0, -inf)", lambda: tf.stack(tf.linalg.slogdet(tf.zeros([2, 2]))), [0.0, -np.inf]),
    ("cholesky not PD: NaN lower triangle", lambda: tf.linalg.cholesky([[1., 2.], [2., 1.]]),
     [[np.nan, 0], [np.nan, np.nan]]),
    ("logdet not PD: NaN", lambda: tf.linalg.logdet([[1., 2.], [2., 1.]]), np.nan),
    ("logdet", lambda: tf.linalg.logdet(A), 2.760642651221381),
    ("triangular_solve lower adjoint", lambda: tf.linalg.triangular_solve(A, B, adjoint=True),
     [[-0.3958333333333333, -0.3416666666666667], [0.9166666666666666, 1.2333333333333334], [2.5, 3.]]),
]


@pytest.mark.parametrize("what,fn,want", VALUES, ids=[v[0] for v in VALUES])
def test_values_are_tensorflows(what, fn, want):
    np.testing.assert_allclose(fn().numpy(), want, rtol=1e-6)


# (fn, TF 2.21's message substance)
ERRORS = [
    (lambda: tf.linalg.band_part(tf.ones([4, 4]), 5, 0), "num_lower must be negative or less or equal "
                                                         "to number of rows (4) got: 5"),
    (lambda: tf.linalg.band_part(tf.ones([4]), 1, 0), "input must be at least 2-dim, received shape: [4]"),
    (lambda: tf.linalg.diag_part(X34, k=(1, -1)), "lower_diag_index must not be larger than "
                                                 "upper_diag_index: 1 > -1"),
    (lambda: tf.linalg.diag_part(tf.ones([3])), "input must be at least 2-dim, received shape: [3]"),
    (lambda: tf.linalg.diag(tf.constant(1.)), "diagonal must be at least 1-dim, received shape: []"),
    (lambda: tf.linalg.set_diag(X34, [7., 8.]), "Either first dimensions of diagonal don't match"),
    (lambda: tf.linalg.tensor_diag_part(tf.ones([2, 2, 2])), "The rank of the tensor should be even"),
    (lambda: tf.linalg.triangular_solve(tf.ones([2, 3]), tf.ones([2, 1])),
     "In[0] matrices in the last dimensions must be square (3 =/= 2)"),
]


@pytest.mark.parametrize("fn,message", ERRORS)
def test_errors_are_tensorflows(fn, message):
    with pytest.raises(InvalidArgumentError) as err:
        fn()
    assert message in str(err.value)


def test_gradients_to_second_order_are_tensorflows():
    a, b = tf.constant(A), tf.constant(B)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([a, b])
        with tf.GradientTape(persistent=True) as inner:
            inner.watch([a, b])
            y = tf.reduce_sum(tf.linalg.triangular_solve(a, b, adjoint=True) ** 2)
            ld = tf.linalg.logdet(a)
            s = tf.linalg.slogdet(a)[1]
            cs = tf.reduce_sum(tf.linalg.cholesky_solve(tf.linalg.cholesky(a), b) ** 2)
        ga, gl = inner.gradient(y, a), inner.gradient(ld, a)
        h, hl = tf.reduce_sum(ga * ga), tf.reduce_sum(gl ** 2)
    # TF 2.21's
    np.testing.assert_allclose(ga.numpy(), [
        [-0.13671006944444444, 0., 0.], [0.39211805555555557, -1.8356712962962964, 0.],
        [1.0072916666666667, -4.665972222222222, -15.167795138888888]], rtol=1e-12)
    np.testing.assert_allclose(inner.gradient(y, b).numpy(), [
        [-0.19791666666666666, -0.17083333333333334], [0.7430555555555555, 0.9361111111111111],
        [2.4925347222222225, 2.978819444444444]], rtol=1e-12)
    np.testing.assert_allclose(gl.numpy(), [
        [0.3788741302972802, -0.2511068943706514, -0.04427577482605945],
        [-0.2511068943706514, 0.5003162555344718, 0.01265022137887413],
        [-0.04427577482605945, 0.01265022137887413, 0.5060088551549652]], rtol=1e-12)
    np.testing.assert_allclose(inner.gradient(s, a).numpy(), [
        [0.30463576158940403, -0.20071319409067756, -0.03565970453387672],
        [-0.09933774834437087, 0.39989811512990325, -0.00509424350483953],
        [-0.06622516556291391, 0.01018848700967906, 0.5094243504839532]], rtol=1e-12)
    np.testing.assert_allclose(inner.gradient(cs, a).numpy(), [
        [-1.5352337160727991, 3.002401544291821, 5.435055298936298],
        [3.002401544291821, -5.20881247392203, -9.167706107256949],
        [5.435055298936298, -9.167706107256949, -16.014822525416108]], rtol=1e-10)
    np.testing.assert_allclose(outer.gradient(h, a).numpy(), [
        [-6.59210332491316, 0., 0.], [12.930472880933053, -35.6338705120322, 0.],
        [40.28273690582401, -124.78856892133378, -715.2686764815048]], rtol=1e-10)
    np.testing.assert_allclose(outer.gradient(hl, a).numpy(), [
        [-0.2729425017583372, 0.3272844920296656, 0.06693258827711246],
        [0.3272844920296656, -0.4254881502542888, -0.05166645403350285],
        [0.06693258827711246, -0.05166645403350285, -0.26562189937251274]], rtol=1e-10)


def _gp_nll(x, lengthscale, y):
    """A Gaussian process's negative log marginal likelihood (RBF kernel, jitter)."""
    d = tf.expand_dims(x, -2) - tf.expand_dims(x, -3)
    k = tf.exp(-0.5 * tf.reduce_sum(d * d, -1) / lengthscale ** 2) + 0.1 * tf.eye(x.shape[-2], dtype=x.dtype)
    chol = tf.linalg.cholesky(k)
    alpha = tf.linalg.cholesky_solve(chol, y)
    return 0.5 * tf.reduce_sum(y * alpha) + 0.5 * tf.linalg.logdet(k)


def test_compiled_equals_eager_on_the_gaussian_process_path():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(5, 2)), rng.normal(size=(5, 1))
    ell = tf.constant(0.7, tf.float64)

    def everything(a, x, ell, y, big, w):
        with tf.GradientTape() as tape:
            tape.watch(ell)
            nll = _gp_nll(x, ell, y)
        # a factor above the compiled inversion's block size (codegen/lapack.py): the
        # gradient's products with triangular operands run as trmm
        with tf.GradientTape() as inner:
            inner.watch(big)
            c = tf.reduce_sum(tf.linalg.cholesky(big) * w)
        gc = inner.gradient(c, big)
        # the factor written over its input where nothing else reads it (big * 3), not where
        # the input is read again (doubled, an output)
        doubled = big * 2.
        # not positive definite: NaN from the compiled Cholesky too, no error
        return [nll, tape.gradient(nll, ell), tf.linalg.cholesky(a - 3. * tf.eye(3, dtype=a.dtype)),
                gc, tf.linalg.cholesky(big * 3.), tf.linalg.cholesky(doubled),
                doubled]

    z = rng.normal(size=(40, 40))
    args = [tf.constant(A), tf.constant(x), ell, tf.constant(y), tf.constant(z @ z.T + 40 * np.eye(40)),
            tf.constant(rng.normal(size=(40, 40)))]
    eager = everything(*args)
    compiled = tf.function(everything, jit_compile=True)
    got = compiled(*args)
    for g, e in zip(got, eager):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-10, atol=1e-12)
    program = compiled.get_concrete_function(*args).program
    if tf.tracer.engine.get_backend() == "numba":
        assert program.fallback is None


def test_jacobians_vectorize_through_the_new_ops():
    from tapeflow.passes.vectorize import vectorize
    from tapeflow.runtime.interpret import run_graph

    def f(a, b):
        l = tf.linalg.cholesky(tf.matmul(a, a, transpose_b=True) + 3. * tf.eye(3, dtype=a.dtype))
        z = tf.linalg.triangular_solve(l, b) + tf.linalg.cholesky_solve(l, b)
        return (tf.linalg.logdet(tf.matmul(l, l, transpose_b=True)) + tf.linalg.slogdet(l)[1]
                + tf.reduce_sum(tf.linalg.diag_part(tf.linalg.set_diag(tf.linalg.band_part(z @ tf.transpose(z), 1, 0),
                                                                       tf.linalg.diag_part(a)), k=(-1, 0)))
                + tf.reduce_sum(tf.linalg.diag(b[:, 0], k=1)))

    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(3, 3)), rng.normal(size=(3, 2))
    graph = tf.function(f).get_concrete_function(tf.constant(a), tf.constant(b)).graph
    stack_a = np.stack([a, 2. * a, -a])
    v = vectorize(graph, [True, False], 3)
    assert v.fallbacks == []
    got = run_graph(v.graph, stack_a, b)[0]
    want = [f(tf.constant(r), tf.constant(b)).numpy() for r in stack_a]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    with tf.GradientTape() as tape:
        ta = tf.constant(a)
        tape.watch(ta)
        out = tf.linalg.triangular_solve(tf.linalg.band_part(ta, -1, 0) + 3. * tf.eye(3, dtype=tf.float64), b)
    jac = tape.jacobian(out, ta)
    assert jac.shape == (3, 2, 3, 3)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(ta)
        out = tf.linalg.triangular_solve(tf.linalg.band_part(ta, -1, 0) + 3. * tf.eye(3, dtype=tf.float64), b)
    np.testing.assert_allclose(jac.numpy(), tape.jacobian(out, ta, experimental_use_pfor=False).numpy(),
                               rtol=1e-12)
