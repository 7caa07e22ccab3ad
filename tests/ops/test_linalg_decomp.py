"""Decompositions: qr, svd, eigh/eigvalsh, lu and its solvers, lstsq, pinv, matrix_rank.

Values, errors and gradients (first and second order) are TF 2.21's, written as facts. TF
does not fix the signs of singular vectors or eigenvectors (tapeflow gives LAPACK's), so
their facts are sign-free quantities (u diag(c) v^T, v diag(c) v^T); QR and LU are
deterministic and compared as they are. One compiled tf.function checks compiled == eager.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

A = np.array([[4., 1., 0.5], [2., 3., 0.2], [0.3, 0.1, 2.]])
T = np.array([[1., 2.], [3., 4.], [5., 7.]])
W = np.ascontiguousarray(T.T)
S = A + A.T
L3 = np.array([[1., 2., 0.], [3., 4., 1.], [0., 5., 6.]])


def _grad(f, x, order=1):
    x = tf.constant(x)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
        z = tf.reduce_sum(g * g)
    return g.numpy() if order == 1 else outer.gradient(z, x).numpy()


def _svdf(x):
    s, u, v = tf.linalg.svd(x)
    c = tf.constant([1., 3.], tf.float64)[:s.shape[-1]]
    weights = tf.reshape(tf.range(1., 1. + x.shape[0] * x.shape[1], dtype=tf.float64), x.shape)
    return tf.reduce_sum(s * c) + tf.reduce_sum(tf.matmul(u * c, v, transpose_b=True) * weights)


def _svd_full(x):
    s, u, _ = tf.linalg.svd(x, full_matrices=True)
    m = x.shape[0]
    weights = tf.reshape(tf.range(1., 1. + m * m, dtype=tf.float64), [m, m])
    return tf.reduce_sum(tf.matmul(u, u, transpose_b=True) * weights) + tf.reduce_sum(s ** 2)


def _eighf(x):
    e, v = tf.linalg.eigh(x)
    return (tf.reduce_sum(e * tf.constant([1., 2., 3.], tf.float64))
            + tf.reduce_sum(tf.matmul(v * tf.constant([1., -1., 2.], tf.float64), v, transpose_b=True) * A))


def _qrf(x, full=False):
    q, r = tf.linalg.qr(x, full_matrices=full)
    return tf.reduce_sum(q ** 3) + tf.reduce_sum(r ** 2)


def _lstsq(rhs, **kw):
    return lambda x: tf.reduce_sum(tf.linalg.lstsq(x, tf.constant(rhs), **kw) ** 2)


# (what, fn, TF 2.21's value)
VALUES = [
    ("qr q", lambda: tf.linalg.qr(A).q, [
        [-0.8924214965063204, 0.445767036334981, -0.06982565352753428],
        [-0.4462107482531601, -0.894872318074368, -0.00997509336107634],
        [-0.06693161223797402, 0.02225496936270497, 0.9975093361076329]]),
    ("qr r", lambda: tf.linalg.qr(A).r, [
        [-4.4821869662029945, -2.2377469024895977, -0.6693161223797401],
        [0., -2.2366244209518524, 0.08841899327802683], [0., 0., 1.9581108267792833]]),
    ("qr tall full q", lambda: tf.linalg.qr(T, full_matrices=True)[0], [
        [-1.6903085094570325e-01, 9.4868329805051399e-01, -2.6726124191242301e-01],
        [-5.0709255283710986e-01, -3.1622776601683678e-01, -8.0178372573727363e-01],
        [-8.4515425472851657e-01, 0.0, 5.3452248382484879e-01]]),
    ("qr tall full r", lambda: tf.linalg.qr(T, full_matrices=True)[1],
     [[-5.916079783099616, -8.282511696339462], [0., 0.632455532033676], [0., 0.]]),
    ("qr wide full r", lambda: tf.linalg.qr(W, full_matrices=True)[1], [
        [-2.23606797749979, -4.919349550499537, -8.497058314499197],
        [0., -0.8944271909999157, -1.3416407864998714]]),
    ("qr 1x1", lambda: tf.stack(tf.linalg.qr([[-3.]])), [[[1.]], [[-3.]]]),
    ("svd values", lambda: tf.linalg.svd(T, compute_uv=False), [10.191428257097225, 0.36713768594389984]),
    ("svd wide values", lambda: tf.linalg.svd(W)[0], [10.191428257097227, 0.3671376859438999]),
    ("svd tall full u u^T", lambda: (lambda u: u @ tf.transpose(u))(tf.linalg.svd(T, full_matrices=True)[1]),
     np.eye(3)),
    ("svd 1x1", lambda: tf.concat([tf.reshape(t, [-1]) for t in tf.linalg.svd([[-3.]])], 0), [3., -1., 1.]),
    ("eigvalsh", lambda: tf.linalg.eigvalsh(np.stack([S, 2 * S])), [
        [3.6404893565628154, 4.088714697166725, 10.270795946270457],
        [7.280978713125631, 8.17742939433345, 20.541591892540914]]),
    ("eigh repeated", lambda: tf.linalg.eigh(np.eye(3) * 2)[0], [2., 2., 2.]),
    ("eigh 1x1", lambda: tf.concat([tf.reshape(t, [-1]) for t in tf.linalg.eigh([[-3.]])], 0), [-3., 1.]),
    ("lu", lambda: tf.linalg.lu(L3).lu, [[3., 4., 1.], [0., 5., 6.],
                                         [0.3333333333333333, 0.13333333333333336, -1.1333333333333335]]),
    ("lu perm", lambda: tf.linalg.lu(L3).p, [1, 2, 0]),
    ("lu perm int64", lambda: tf.cast(tf.linalg.lu(L3, output_idx_type=tf.int64).p, tf.int32), [1, 2, 0]),
    ("lu_matrix_inverse", lambda: tf.linalg.lu_matrix_inverse(*tf.linalg.lu(L3)), [
        [-1.117647058823529, 0.7058823529411764, -0.11764705882352944],
        [1.0588235294117645, -0.3529411764705882, 0.05882352941176472],
        [-0.8823529411764705, 0.2941176470588235, 0.11764705882352941]]),
    ("lu_reconstruct", lambda: tf.linalg.lu_reconstruct(*tf.linalg.lu(L3)), L3),
    ("pinv", lambda: tf.linalg.pinv(T), [
        [-2.0714285714285685, 0.78571428571428414, 0.14285714285714252], [1.5, -0.5, 0.]]),
    ("pinv singular", lambda: tf.linalg.pinv([[1., 2.], [2., 4.]]), [[0.04, 0.08], [0.08, 0.16]]),
    ("matrix_rank", lambda: tf.linalg.matrix_rank([[[1., 2.], [2., 4.]], [[1., 0.], [0., 1.]]]), [1, 2]),
    ("matrix_rank tol", lambda: tf.linalg.matrix_rank([[1., 0.], [0., 1e-3]], tol=1e-2), 1),
    ("lstsq tall", lambda: tf.linalg.lstsq(T, A[:, :2]), [[-6.671428571428485, 0.3], [5., 0.]]),
    ("lstsq wide l2", lambda: tf.linalg.lstsq(W, A[:2, :1], l2_regularizer=0.5),
     [[-1.0566037735849148], [0.6037735849056629], [0.37735849056603676]]),
    ("lstsq wide slow", lambda: tf.linalg.lstsq(W, A[:2, :1], fast=False),
     [[-5.285714285714286], [2.1428571428571406], [0.5714285714285721]]),
    ("lstsq rank deficient: NaN", lambda: tf.linalg.lstsq([[1., 2.], [2., 4.], [3., 6.]], A[:, :1]),
     [[np.nan], [np.nan]]),
    ("lstsq rank deficient slow", lambda: tf.linalg.lstsq([[1., 2.], [2., 4.], [3., 6.]], A[:, :1], fast=False),
     [[0.12714285714285714], [0.2542857142857143]]),
]


@pytest.mark.parametrize("what,fn,want", VALUES, ids=[v[0] for v in VALUES])
def test_values_are_tensorflows(what, fn, want):
    np.testing.assert_allclose(fn().numpy(), want, rtol=1e-7, atol=1e-12)


# (what, fn of x, x, order, TF 2.21's gradient)
GRADIENTS = [
    ("qr tall", _qrf, T, 1, [[1.3820576339700335, 4.406578556307359], [4.3845055950410545, 9.219735668922084],
                             [11.092885116181359, 13.186842887385277]]),
    ("qr tall 2nd", _qrf, T, 2, [[63.47552635631783, -23.00493355780047], [93.06198368242849, -18.326265561356536],
                                 [-14.206724607664299, 95.24090827606508]]),
    ("qr wide full", lambda x: _qrf(x, True), W, 1, [[2.858650103359924, 6., 10.], [3.5706749483200437, 8., 14.]]),
    ("svd tall", _svdf, T, 1, [[-2.6256030776877513, 2.316015929901182], [-0.5230192485430254, 0.955136867542248],
                               [1.7162739601540036, -0.22092099892794637]]),
    ("svd wide", _svdf, W, 1, [[-3.8511895170171884, -3.238728219379008, 3.8350238501334477],
                               [2.6040549211288515, 3.234497818556246, -1.7801435538666843]]),
    ("svd tall 2nd", _svdf, T, 2, [[36.869549260973265, -25.721627808419576], [20.709876878014846, -12.745004196230656],
                                   [-19.882065875600517, 12.851214762599689]]),
    ("svd wide 2nd", _svdf, W, 2, [[272.95113308625685, 114.51842935893757, -118.09945924041853],
                                   [-201.8987813352569, -101.56844260081667, 97.5973387735574]]),
    ("svd full", _svd_full, T, 1, [[2., 4.], [6., 8.], [10., 14.]]),
    ("svd repeated values", _svdf, np.array([[2., 0.], [0., 2.], [0., 0.]]), 1, [[1., 0.], [0., 3.], [2.5, 9.]]),
    ("eigh", _eighf, S, 1, [[2.39603156470819, 0., 0.], [1.4939444408859561, 2.019765799960769, 0.],
                            [0.8752611159213523, -0.584644948138726, 1.5842026353310377]]),
    ("eigh 2nd", _eighf, S, 2, [[-0.8132753310803472, 0., 0.], [2.305195334967805, -1.5608732221170982, 0.],
                                [-0.7465899939087954, 0.18844586259736218, 2.374148553197446]]),
    ("eigh repeated", _eighf, np.eye(3) * 2, 1, [[1., 0., 0.], [0., 2., 0.], [0., 0., 3.]]),
    ("pinv", lambda x: tf.reduce_sum(tf.linalg.pinv(x) ** 2), T, 1, [
        [30.91836734693864, -21.999999999999908], [-11.244897959183612, 7.999999999999957],
        [-1.4081632653061082, 0.9999999999999899]]),
    ("pinv singular", lambda x: tf.reduce_sum(tf.linalg.pinv(x) ** 2), np.array([[1., 2.], [2., 4.]]), 1,
     [[-0.0032, -0.0064], [-0.0064, -0.0128]]),
    ("lstsq tall l2", _lstsq(A[:, :2], l2_regularizer=0.1), T, 1, [
        [-9.079391050496753, 3.0044969282491536], [-69.35171962233608, 50.61366797471347],
        [42.723716822542954, -30.269028736985128]]),
    ("lstsq tall l2 2nd", _lstsq(A[:, :2], l2_regularizer=0.1), T, 2, [
        [37372.233967457345, -30198.55906013248], [-36670.9466982196, 25610.335757979155],
        [11801.089364928936, -7192.8283034536435]]),
    ("lstsq wide", _lstsq(A[:2, :2]), W, 1, [
        [161.46938775509264, -62.44897959183341, -12.938775510203962],
        [-114.57142857142213, 44.28571428571139, 9.142857142856387]]),
]


@pytest.mark.parametrize("what,f,x,order,want", GRADIENTS, ids=[g[0] for g in GRADIENTS])
def test_gradients_are_tensorflows(what, f, x, order, want):
    np.testing.assert_allclose(_grad(f, x, order), want, rtol=1e-7, atol=1e-9)


def test_lu_solve_gradients_are_tensorflows():
    b, lu_in = tf.constant(T), tf.constant(A)
    with tf.GradientTape() as tape:
        tape.watch(b)
        lu, p = tf.linalg.lu(lu_in)
        y = tf.reduce_sum(tf.linalg.lu_solve(lu, p, b) ** 2)
    np.testing.assert_allclose(tape.gradient(y, b).numpy(), [   # TF 2.21's
        [-0.79720369, -0.91071475], [0.87876349, 1.02992991], [2.60760389, 3.59895977]], rtol=1e-7)
    with tf.GradientTape() as tape:
        lu, p = tf.linalg.lu(lu_in)
        tape.watch(lu)
        y = tf.reduce_sum(tf.linalg.lu_matrix_inverse(lu, p) ** 2) + tf.reduce_sum(tf.linalg.lu_reconstruct(lu, p) ** 2)
    np.testing.assert_allclose(tape.gradient(y, lu).numpy(), [   # TF 2.21's
        [9.99147165, 5.06577206, 1.52204694], [22.42069, 5.8214447, 0.42293286],
        [4.68077088, 0.24349879, 3.72822298]], rtol=1e-7)


# (fn, the exception TF 2.21 raises, its message's substance)
ERRORS = [
    (lambda: _grad(lambda x: tf.reduce_sum(tf.linalg.lu(x)[0]), A), LookupError,
     "gradient registry has no entry for: Lu"),
    (lambda: tf.linalg.lu(tf.zeros([2, 2])), InvalidArgumentError, "Input is not invertible."),
    (lambda: tf.linalg.lu(tf.ones([2, 3])), InvalidArgumentError, "Input matrix must be square."),
    (lambda: tf.linalg.eigh(tf.ones([2, 3])), InvalidArgumentError, "Input matrix must be square."),
    (lambda: tf.linalg.svd(tf.ones([3])), InvalidArgumentError, "Input tensor 0 must have rank >= 2, got 1"),
    (lambda: tf.linalg.qr(tf.ones([2, 2], tf.int32)), InvalidArgumentError, "int32"),
    (lambda: tf.linalg.lstsq(tf.ones([3, 2]), tf.ones([2, 1])), InvalidArgumentError,
     "Matrix size-incompatible: In[0]: [3, 2], In[1]: [2, 1]"),
    (lambda: _grad(lambda x: tf.reduce_sum(tf.linalg.qr(x, full_matrices=True)[0]), T), NotImplementedError,
     "QrGrad not implemented when nrows > ncols and full_matrices is true"),
    (lambda: _grad(_svd_full, np.ones([4, 2])), NotImplementedError,
     "svd gradient is not implemented for abs(m - n) > 1 when full_matrices is True"),
    (lambda: _grad(_lstsq(A[:, :2], fast=False), T), ValueError, "Gradient not defined for fast=False"),
]


@pytest.mark.parametrize("fn,kind,message", ERRORS, ids=[e[2][:30] for e in ERRORS])
def test_errors_are_tensorflows(fn, kind, message):
    with pytest.raises(kind) as err:
        fn()
    assert message in str(err.value)


def test_a_singular_lu_raises_from_compiled_code():
    compiled = tf.function(lambda a, b: tf.linalg.lu_solve(*tf.linalg.lu(a), b), jit_compile=True)
    np.testing.assert_allclose(compiled(tf.constant(L3), tf.constant(T)).numpy(), np.linalg.solve(L3, T),
                               rtol=1e-12)
    with pytest.raises(InvalidArgumentError, match="Lu: Input is not invertible."):
        compiled(tf.zeros([3, 3], tf.float64), tf.constant(T))


@pytest.mark.slow   # every op is also compiled on its own by tests/codegen/test_codegen_ops.py
def test_compiled_equals_eager():
    rng = np.random.default_rng(5)
    batch = rng.normal(size=(2, 4, 3))

    def everything(a, t, s, batch):
        q, r = tf.linalg.qr(batch)
        qf, rf = tf.linalg.qr(t, full_matrices=True)
        sv, u, v = tf.linalg.svd(batch)
        e, ev = tf.linalg.eigh(s)
        lu, p = tf.linalg.lu(a)
        return [q, r, qf, rf, sv, tf.abs(u), tf.abs(v), tf.linalg.svd(t, compute_uv=False), e, tf.abs(ev),
                tf.linalg.eigvalsh(s), lu, p, tf.linalg.lu_solve(lu, p, t), tf.linalg.lu_matrix_inverse(lu, p),
                tf.linalg.lstsq(t, a[:, :2]), tf.linalg.lstsq(tf.transpose(t), a[:2, :1], l2_regularizer=0.5),
                tf.linalg.lstsq(batch, tf.ones([2, 4, 1], tf.float64), fast=False), tf.linalg.pinv(t),
                tf.linalg.matrix_rank(batch)]

    args = [tf.constant(x) for x in (L3, T, S, batch)]
    compiled = tf.function(everything, jit_compile=True)
    for g, want in zip(compiled(*args), everything(*args)):
        np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    assert compiled.get_concrete_function(*args).program.fallback is None \
        or tf.tracer.engine.get_backend() != "numba"


def test_jacobians_vectorize_through_the_decompositions():
    from tapeflow.passes.vectorize import vectorize
    from tapeflow.runtime.interpret import run_graph

    def f(x, b):
        q, r = tf.linalg.qr(x)
        s, u, v = tf.linalg.svd(x)
        e = tf.linalg.eigvalsh(tf.matmul(x, x, transpose_a=True))
        return (tf.reduce_sum(q * q) + tf.reduce_sum(r) + tf.reduce_sum(s) + tf.reduce_sum(e)
                + tf.reduce_sum(tf.linalg.lstsq(x, b)) + tf.reduce_sum(tf.abs(u)) + tf.reduce_sum(tf.abs(v)))

    rng = np.random.default_rng(6)
    x, b = rng.normal(size=(4, 3)), rng.normal(size=(4, 1))
    graph = tf.function(f).get_concrete_function(tf.constant(x), tf.constant(b)).graph
    xs = np.stack([x, 2. * x, x + 1.])
    v = vectorize(graph, [True, False], 3)
    assert v.fallbacks == []
    got = run_graph(v.graph, xs, b)[0]
    np.testing.assert_allclose(got, [f(tf.constant(r), tf.constant(b)).numpy() for r in xs], rtol=1e-10)


@pytest.mark.parametrize("axis,keepdims,value,grad_row", [
    ((1, 2), False, [10.19849027, 15.1592099], [0.07804623, 0.32440426, 0.19631214, 0.29058598]),
    ((0, 2), True, [[[9.68606417], [9.70763243], [12.48946907]]], [0.24924769, 0.20147759, 0.17537045, 0.16583363]),
    ((-1, -3), False, [9.68606417, 9.70763243, 12.48946907], [0.24924769, 0.20147759, 0.17537045, 0.16583363]),
])
def test_matrix_2_norm_is_tensorflows(axis, keepdims, value, grad_row):
    x = tf.constant(np.arange(24.).reshape(2, 3, 4) ** 1.5 % 7)
    with tf.GradientTape() as tape:
        tape.watch(x)
        n = tf.norm(x, ord=2, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(n.numpy(), value, rtol=1e-8)   # TF 2.21's
    np.testing.assert_allclose(tape.gradient(n, x).numpy()[0, 0], grad_row, rtol=1e-7)
