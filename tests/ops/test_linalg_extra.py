"""Matrix functions and the rest of tf.linalg: expm, sqrtm, tridiagonal_solve/matmul,
banded_triangular_solve, eigh_tridiagonal, cross, normalize, global_norm, l2_normalize.

Values, errors and gradients are TF 2.21's, written as facts; one compiled tf.function
checks compiled == eager; jacobians vectorize through expm, sqrtm and tridiagonal_solve.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

A = np.array([[0.4, 0.1, 0.5], [0.2, 0.3, 0.2], [0.3, 0.1, 0.2]])
P = np.array([[4., 1., 0.5], [1., 3., 0.2], [0.5, 0.2, 2.]])
W3 = np.array([[1., -2., 0.5], [0.3, 1.5, -1.], [2., 0.7, -0.4]])
DIAGS = np.array([[2., 1., 0.], [4., 5., 6.], [0., 1., 2.]])   # super, main, sub (compact)
RHS = np.array([[1.], [2.], [3.]])
V2 = np.array([[1., 2., 3.], [4., 5., 6.]])
U2 = np.array([[7., 8., 9.], [1., 0., -1.]])
M32 = np.array([[1., 2.], [3., 4.], [5., 6.]])


def _grads(f, *xs, order=1):
    xs = [tf.constant(x) for x in xs]
    with tf.GradientTape() as outer:
        outer.watch(xs)
        with tf.GradientTape() as inner:
            inner.watch(xs)
            y = f(*xs)
        gs = inner.gradient(y, xs)
        z = tf.add_n([tf.reduce_sum(g * g) for g in gs])
    return [g.numpy() for g in (gs if order == 1 else outer.gradient(z, xs))]


# (what, fn, TF 2.21's value)
VALUES = [
    ("expm", lambda: tf.linalg.expm(A), [
        [1.6166752424721726, 0.18080793602193837, 0.7118378244362136],
        [0.3341584640905227, 1.3809524905435262, 0.33415846409052274],
        [0.43259417625239877, 0.15335052806858432, 1.3374315942883586]]),
    ("expm squaring", lambda: tf.linalg.expm(A * 10), [
        [1315.57236679626, 541.9373673394188, 1315.2044873550885],
        [884.6629704871207, 375.2114710734107, 884.6629704871204],
        [828.9650452513955, 342.72560314770345, 829.3329246925668]]),
    ("expm float32", lambda: tf.linalg.expm(tf.constant([[0.4, 0.1], [0.2, 0.3]])),
     [[1.5062817, 0.1424395], [0.284879, 1.3638422]]),
    ("sqrtm", lambda: tf.linalg.sqrtm(P), [
        [1.9765806563757573, 0.2692204493248611, 0.14369849862298267],
        [0.2692204493248612, 1.7102165217242133, 0.05176677010255996],
        [0.14369849862298273, 0.05176677010255987, 1.4059413014086504]]),
    ("sqrtm negative eigenvalue: NaN", lambda: tf.linalg.sqrtm([[-1., 0.], [0., 4.]]), [[np.nan] * 2] * 2),
    ("tridiagonal_solve", lambda: tf.linalg.tridiagonal_solve(DIAGS, RHS), [[0.1], [0.3], [0.4]]),
    ("tridiagonal_solve Thomas", lambda: tf.linalg.tridiagonal_solve(DIAGS, RHS, partial_pivoting=False),
     [[0.1], [0.3], [0.4]]),
    ("tridiagonal_solve sequence", lambda: tf.linalg.tridiagonal_solve(
        (DIAGS[0], DIAGS[1], DIAGS[2]), RHS, diagonals_format="sequence"), [[0.1], [0.3], [0.4]]),
    ("tridiagonal_solve matrix", lambda: tf.linalg.tridiagonal_solve(
        np.array([[4., 2., 0.], [1., 5., 1.], [0., 2., 6.]]), RHS, diagonals_format="matrix"), [[0.1], [0.3], [0.4]]),
    ("tridiagonal_solve transpose_rhs", lambda: tf.linalg.tridiagonal_solve(DIAGS, RHS.T, transpose_rhs=True),
     [[0.1], [0.3], [0.4]]),
    ("tridiagonal_solve vector rhs", lambda: tf.linalg.tridiagonal_solve(DIAGS, RHS[:, 0]), [0.1, 0.3, 0.4]),
    ("tridiagonal_solve singular: NaN", lambda: tf.linalg.tridiagonal_solve(
        np.array([[1., 0., 0.], [1., 1., 1.], [0., 1., 0.]]), RHS), [[np.nan]] * 3),
    ("tridiagonal_solve perturb_singular", lambda: tf.linalg.tridiagonal_solve(
        np.array([[1., 0., 0.], [1., 1., 1.], [0., 1., 0.]]), RHS, perturb_singular=True),
     [[-4.503599627370495e+15], [4.503599627370496e+15], [3.]]),
    ("tridiagonal_solve zero pivot, Thomas: NaN", lambda: tf.linalg.tridiagonal_solve(
        np.array([[1., 1., 0.], [0., 1., 1.], [0., 1., 1.]]), RHS, partial_pivoting=False), [[np.nan]] * 3),
    ("tridiagonal_matmul", lambda: tf.linalg.tridiagonal_matmul(DIAGS, M32), [[10., 16.], [21., 28.], [36., 44.]]),
    ("banded lower", lambda: tf.linalg.banded_triangular_solve([[2., 3., 4.], [1., 2., 3.]], tf.ones([3, 1])),
     [[0.5], [0.], [0.25]]),
    ("banded upper adjoint", lambda: tf.linalg.banded_triangular_solve(
        np.array([[2., 3., 4., 5.], [-1., -2., -3., -4.]]), np.ones([4, 1]), lower=False, adjoint=True),
     [[-1.], [-1.5], [-1.8333333333333333], [-2.083333333333333]]),
    ("eigh_tridiagonal", lambda: tf.linalg.eigh_tridiagonal(np.array([1., 2., 3.]), np.array([0.5, 0.25])),
     [0.7886824805020501, 2.1451889993759403, 3.0661285201220094]),
    ("eigh_tridiagonal select i", lambda: tf.linalg.eigh_tridiagonal(
        np.array([1., 2., 3.]), np.array([0.5, 0.25]), select="i", select_range=[1, 2]),
     [2.1451889993759403, 3.0661285201220094]),
    ("eigh_tridiagonal select v", lambda: tf.linalg.eigh_tridiagonal(
        np.array([1., 2., 3.]), np.array([0.5, 0.25]), select="v", select_range=[1.5, 5.]),
     [2.1451889993759403, 3.0661285201220094]),
    ("eigh_tridiagonal |vectors|", lambda: tf.abs(tf.linalg.eigh_tridiagonal(
        np.array([1., 2., 3.]), np.array([0.5, 0.25]), eigvals_only=False)[1]), np.abs([
            [0.9202224306228232, -0.38649152397944914, 0.06176552493637701],
            [-0.38891824285117854, -0.8852116832266149, 0.25523102526271146],
            [0.04396906362631691, 0.2588910538646439, 0.9649052511374777]])),
    ("cross", lambda: tf.linalg.cross(V2, U2), [[-6., 12., -6.], [-5., 10., -5.]]),
    ("normalize", lambda: tf.concat(tf.linalg.normalize(V2, axis=1), 1), [
        [0.2672612419124244, 0.5345224838248488, 0.8017837257372732, 3.7416573867739413],
        [0.4558423058385518, 0.5698028822981898, 0.6837634587578276, 8.774964387392123]]),
    ("normalize ord 1", lambda: tf.linalg.normalize(V2, ord=1)[1], [[21.]]),
    ("global_norm", lambda: tf.linalg.global_norm([V2, None, U2]), 16.941074346097416),
    ("l2_normalize", lambda: tf.linalg.l2_normalize(V2, axis=-1), [
        [0.2672612419124244, 0.5345224838248488, 0.8017837257372732],
        [0.4558423058385518, 0.5698028822981898, 0.6837634587578276]]),
]


@pytest.mark.parametrize("what,fn,want", VALUES, ids=[v[0] for v in VALUES])
def test_values_are_tensorflows(what, fn, want):
    np.testing.assert_allclose(fn().numpy(), want, rtol=1e-6 if "float32" in what else 1e-9)


# (what, fn, inputs, order, TF 2.21's gradients)
GRADIENTS = [
    ("expm", lambda x: tf.reduce_sum(tf.linalg.expm(x) * W3), [A], 1, [[
        [2.0504916116115686, -2.2984178601644736, 0.6081325628008688],
        [0.453163451390107, 1.8490600827618955, -1.1286994540332647],
        [3.1824155222123, 0.7437500795531403, -0.01349451633767501]]]),
    ("expm squaring", lambda x: tf.reduce_sum(tf.linalg.expm(x) * W3), [A * 10], 1, [[
        [1478.5809783377626, 538.6594805364439, 624.305228069672],
        [517.3937463343755, 182.5760078516796, 197.87313663530585],
        [1658.3332002887473, 667.1715522683662, 737.80085988262]]]),
    ("expm 2nd", lambda x: tf.reduce_sum(tf.linalg.expm(x) * W3), [A], 2, [[
        [24.540999811668854, -4.7500665602833205, 4.66697609467468],
        [-4.393825190686508, 14.521180118172579, -1.2593760965810687],
        [8.854290062722221, 0.9474729696076043, 11.81086671585797]]]),
    ("sqrtm", lambda x: tf.reduce_sum(tf.linalg.sqrtm(x) * W3), [P], 1, [[
        [0.2648295246774697, -0.6075693151773778, 0.18073783383887684],
        [0.03189158595331824, 0.4860457647503477, -0.3431105618564964],
        [0.5713255943407901, 0.19817632243285144, -0.17801867245272127]]]),
    ("sqrtm 2nd", lambda x: tf.reduce_sum(tf.linalg.sqrtm(x) * W3), [P], 2, [[
        [-0.14377956629352895, 0.0952165459945606, 0.0192575381725038],
        [0.0897519519818267, -0.20084626639965697, 0.02515727553947229],
        [0.02861410103452572, 0.03888271863960081, -0.1341782100584737]]]),
    ("tridiagonal_solve", lambda d, r: tf.reduce_sum(tf.linalg.tridiagonal_solve(d, r) ** 2), [DIAGS, RHS], 1, [
        [[-0.0108, -0.0224, 0.], [-0.0036, -0.0168, -0.0496], [0., -0.0056, -0.0372]],
        [[0.036], [0.056], [0.124]]]),
    ("tridiagonal_matmul", lambda d, r: tf.reduce_sum(tf.linalg.tridiagonal_matmul(d, r) ** 2), [DIAGS, M32], 1, [
        [[188., 546., 0.], [84., 350., 888.], [0., 154., 568.]], [[122., 184.], [394., 520.], [474., 584.]]]),
    ("banded_triangular_solve", lambda b: tf.reduce_sum(tf.linalg.banded_triangular_solve(b, np.ones([3, 1])) ** 2),
     [np.array([[2., 3., 4.], [1., 2., 3.]])], 1, [[[-0.3125, 0., -0.03125], [0., 0.0625, 0.]]]),
    ("cross", lambda a, b: tf.reduce_sum(tf.linalg.cross(a, b) * np.array([1., 2., 3.])), [V2, U2], 1, [
        [[6., -12., 6.], [2., -4., 2.]], [[0., 0., 0.], [-3., 6., -3.]]]),
]


@pytest.mark.parametrize("what,f,xs,order,want", GRADIENTS, ids=[g[0] for g in GRADIENTS])
def test_gradients_are_tensorflows(what, f, xs, order, want):
    for got, w in zip(_grads(f, *xs, order=order), want, strict=True):
        np.testing.assert_allclose(got, w, rtol=1e-8, atol=1e-12)


def test_tridiagonal_solve_second_order_is_tensorflows():
    got = _grads(lambda d: tf.reduce_sum(tf.linalg.tridiagonal_solve(d, RHS) ** 2), DIAGS, order=2)[0]
    np.testing.assert_allclose(got, [   # TF 2.21's
        [-1.7030399999999585e-05, -1.3583232000000012e-03, 0.],
        [5.1827200000000221e-05, -8.7011840000000102e-04, -3.1540928000000005e-03],
        [0., -2.0058880000000003e-04, -2.0364736000000007e-03]], rtol=1e-8, atol=1e-15)


# (fn, exception, TF 2.21's message substance)
ERRORS = [
    (lambda: tf.linalg.sqrtm(tf.ones([2, 3])), InvalidArgumentError, "Input matrix must be square."),
    (lambda: tf.linalg.cross(tf.ones([2, 3]), tf.ones([3])), InvalidArgumentError,
     "Both inputs must be of same shape: [2, 3] vs. [3]"),
    (lambda: tf.linalg.cross(tf.ones([2, 2]), tf.ones([2, 2])), InvalidArgumentError,
     "Cross-products are only defined for 3-element vectors."),
    (lambda: tf.linalg.tridiagonal_solve(DIAGS, RHS, diagonals_format="foo"), ValueError,
     "Unrecognized diagonals_format: foo"),
    (lambda: tf.linalg.tridiagonal_solve(tf.ones([2, 3]), RHS), ValueError, "Expected 3 diagonals got 2"),
    (lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 3]), tf.ones([4, 1])), ValueError,
     "Expected number of left-hand sided and right-hand sides to be equal, got 3 and 4"),
    (lambda: tf.linalg.global_norm(tf.ones([2])), TypeError, "`t_list` should be a sequence of tensors."),
]


@pytest.mark.parametrize("fn,kind,message", ERRORS, ids=[e[2][:30] for e in ERRORS])
def test_errors_are_tensorflows(fn, kind, message):
    with pytest.raises(kind) as err:
        fn()
    assert message in str(err.value)


@pytest.mark.slow   # every op is also compiled on its own by tests/codegen/test_codegen_ops.py
def test_compiled_equals_eager():
    def everything(a, p, d, r):
        return [tf.linalg.expm(a), tf.linalg.expm(tf.stack([a, 10. * a])), tf.linalg.sqrtm(p),
                tf.linalg.sqrtm(tf.stack([p, -p])), tf.linalg.tridiagonal_solve(d, r),
                tf.linalg.tridiagonal_solve(tf.stack([d, 2. * d]), tf.stack([r, r]), partial_pivoting=False),
                tf.linalg.tridiagonal_matmul(d, r), tf.linalg.cross(a, p),
                tf.linalg.banded_triangular_solve(d[:2], r, lower=False)]

    args = [tf.constant(x) for x in (A, P, DIAGS, RHS)]
    compiled = tf.function(everything, jit_compile=True)
    for got, want in zip(compiled(*args), everything(*args)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    if tf.tracer.engine.get_backend() == "numba":
        assert compiled.get_concrete_function(*args).program.fallback is None


def test_jacobians_vectorize():
    from tapeflow.passes.vectorize import vectorize
    from tapeflow.runtime.interpret import run_graph

    def f(a, d):
        return (tf.reduce_sum(tf.linalg.expm(a)) + tf.reduce_sum(tf.linalg.sqrtm(a + 3. * tf.eye(3, dtype=a.dtype)))
                + tf.reduce_sum(tf.linalg.tridiagonal_solve(d, a)))

    graph = tf.function(f).get_concrete_function(tf.constant(A), tf.constant(DIAGS)).graph
    stack = np.stack([A, 2. * A, -A])
    v = vectorize(graph, [True, False], 3)
    assert v.fallbacks == []
    got = run_graph(v.graph, stack, DIAGS)[0]
    np.testing.assert_allclose(got, [f(tf.constant(x), tf.constant(DIAGS)).numpy() for x in stack], rtol=1e-10)
