"""Gradient-check cases of the linear algebra ops (see ops/cases.py).

Matrices that are inverted, solved or factored are kept well conditioned (a
diagonal shift); Cholesky's input is built as x x^T + 3I, since its gradient, like
TensorFlow's, is the symmetric one (perturbing only the upper triangle would not
change the output, so raw finite differences would disagree).
"""
import numpy as np

import tapeflow as tf

from ops.cases import Case

R = np.random.default_rng(2)


def u(*shape, lo=-1.0, hi=1.0):
    return R.uniform(lo, hi, shape)


def well(*shape, shift=3.0):
    """A (batch of) square matrix with a dominant diagonal: far from singular."""
    return u(*shape) + shift * np.eye(shape[-1])


def _spd(x):
    """x x^T + 3I: symmetric positive definite for any x."""
    return tf.matmul(x, x, transpose_b=True) + tf.constant(3.0 * np.eye(x.shape[-1]))


LU_INPUT = u(2, 3, 3) + np.array([[0.0, 3.0, 0.0], [3.0, 0.0, 0.0], [0.0, 0.0, 3.0]])


def _tridiag(*shape):
    """Compact diagonals [..., 3, M] of a diagonally dominant tridiagonal matrix."""
    d = u(*shape[:-1], 3, shape[-1])
    d[..., 1, :] += 3.0
    return d


def _sym(*shape):
    """A symmetric matrix with well separated eigenvalues (eigh's gradient divides by gaps)."""
    x = u(*shape, shape[-1])
    return x + np.swapaxes(x, -1, -2) + np.diag(np.arange(shape[-1]) * 2.0)


def _svd_product(svd):
    """u diag(s^2) v^T: independent of the singular vectors' signs."""
    s, uu, v = svd
    k = s.shape[-1]
    return tf.matmul(uu[..., :k] * tf.expand_dims(s, -2) ** 2, v[..., :k], transpose_b=True) \
        + tf.reduce_sum(uu[..., :k] * uu[..., :k])


CASES = {
    "MatMul": [
        Case(lambda x, y: tf.matmul(x, y), [u(2, 3), u(3, 4)]),
        Case(lambda x, y: tf.matmul(x, y, transpose_a=True), [u(3, 2), u(3, 4)], note="transpose_a"),
        Case(lambda x, y: tf.matmul(x, y, transpose_b=True), [u(2, 3), u(4, 3)], note="transpose_b"),
        Case(lambda x, y: tf.matmul(x, y, transpose_a=True, transpose_b=True), [u(3, 2), u(4, 3)],
             note="both transposed"),
        Case(lambda x: tf.matmul(x, x) * x, [u(3, 3)], note="x @ x"),
        Case(lambda x, y: tf.matmul(x, y), [u(2, 3, 4), u(4, 2)], note="batch @ matrix"),
        Case(lambda x, y: tf.matmul(x, y, transpose_b=True), [u(2, 1, 2, 3), u(3, 4, 3)],
             note="broadcast batch dims"),
        Case(lambda x, y: x @ y, [u(1, 2, 3), u(2, 3, 2)], note="operator, batch dim 1 vs 2"),
    ],
    "Einsum": [
        Case(lambda x, y: tf.einsum("ij,jk->ik", x, y), [u(2, 3), u(3, 2)]),
        Case(lambda x: tf.einsum("ij,jk", x, x), [u(3, 3)], note="implicit output, same operand"),
        Case(lambda x: tf.einsum("ii->", x) * x, [u(3, 3)], note="trace"),
        Case(lambda x: tf.einsum("ii->i", x) * tf.einsum("ij->j", x), [u(3, 3)], note="diagonal"),
        Case(lambda x, y: tf.einsum("bxby,bx->bxy", x, y), [u(2, 3, 2, 4), u(2, 3)],
             note="repeated label inside one operand"),
        Case(lambda x, y: tf.einsum("ijk,k->", x, y) * y, [u(2, 3, 2), u(2)], note="summed-out labels"),
        Case(lambda x, y: tf.einsum("...ij,...jk->...ik", x, y), [u(2, 1, 3, 2), u(4, 2, 3)],
             note="ellipsis with broadcasting"),
        Case(lambda x, y: tf.einsum("...i,i->...", x, y), [u(3), u(3)], note="empty ellipsis"),
        Case(lambda x, y, z: tf.einsum("ij,jk,kl->il", x, y, z), [u(2, 3), u(3, 2), u(2, 2)],
             note="three operands"),
        Case(lambda x, y: tf.einsum("i,i,j->j", x, x, y), [u(3), u(2)], note="operand used twice"),
    ],
    "MatrixSolve": [
        Case(lambda a, b: tf.linalg.solve(a, b), [well(3, 3), u(3, 2)]),
        Case(lambda a, b: tf.linalg.solve(a, b, adjoint=True), [well(3, 3), u(3, 2)], note="adjoint"),
        Case(lambda a, b: tf.linalg.solve(a, b), [well(2, 3, 3), u(2, 3, 1)], note="batched"),
    ],
    "MatrixInverse": [
        Case(lambda a: tf.linalg.inv(a), [well(3, 3)]),
        Case(lambda a: tf.linalg.inv(a, adjoint=True), [well(2, 2, 2)], note="adjoint, batched"),
    ],
    "MatrixDeterminant": [
        Case(lambda a: tf.linalg.det(a), [well(3, 3, shift=2.0)]),
        Case(lambda a: tf.linalg.det(a), [well(2, 2, 2, shift=2.0)], note="batched"),
    ],
    "Cholesky": [
        Case(lambda x: tf.linalg.cholesky(_spd(x)), [u(3, 3)], kw={"rtol": 1e-4, "atol": 1e-5}),
        Case(lambda x: tf.linalg.cholesky(_spd(x)), [u(2, 2, 2)], note="batched",
             kw={"rtol": 1e-4, "atol": 1e-5}),
    ],
    "MatrixTriangularSolve": [
        Case(lambda a, b: tf.linalg.triangular_solve(a, b), [well(3, 3), u(3, 2)]),
        Case(lambda a, b: tf.linalg.triangular_solve(a, b, lower=False, adjoint=True),
             [well(2, 3, 3), u(3, 1)], note="upper, adjoint, broadcast batch"),
        Case(lambda a, b: tf.linalg.cholesky_solve(a, b), [well(2, 3, 3), u(2, 3, 2)],
             note="cholesky_solve: two solves"),
        Case(lambda b: tf.linalg.lu_solve(*tf.linalg.lu(tf.constant(LU_INPUT)), b), [u(2, 3, 2)],
             note="lu_solve (Lu of a constant: TF has no gradient for Lu)"),
        Case(lambda x: x * tf.cast(tf.expand_dims(tf.linalg.lu(x).p, -1), x.dtype), [well(2, 3, 3)],
             note="lu's permutation: no gradient reaches Lu (TF registers none)"),
        Case(lambda f: tf.linalg.lu_matrix_inverse(f, [1, 0, 2]) + tf.linalg.lu_reconstruct(f, [2, 0, 1]),
             [well(3, 3)], note="lu_matrix_inverse, lu_reconstruct"),
    ],
    "MatrixBandPart": [
        Case(lambda x: tf.linalg.band_part(x, 1, 0) * x, [u(2, 3, 4)]),
        Case(lambda x: tf.linalg.band_part(x, -1, 1), [u(4, 3)], order=1, note="lower all"),
    ],
    "MatrixDiagPartV3": [
        Case(lambda x: tf.linalg.diag_part(x, k=(-1, 1), align="LEFT_RIGHT", padding_value=9.0) * 2.0,
             [u(2, 3, 4)], note="band of diagonals, padded"),
        Case(lambda x: tf.linalg.diag_part(x, k=1) ** 2, [u(4, 3)], note="one superdiagonal"),
    ],
    "MatrixDiagV3": [
        Case(lambda d: tf.linalg.diag(d) * 3.0, [u(2, 3)]),
        Case(lambda d: tf.linalg.diag(d, k=(-1, 0), num_rows=3, align="LEFT_LEFT") ** 2, [u(2, 3)],
             note="two diagonals"),
        Case(lambda d: tf.linalg.tensor_diag(d) * 2.0, [u(2, 2)], note="tensor_diag"),
    ],
    "MatrixSetDiagV3": [
        Case(lambda x, d: tf.linalg.set_diag(x, d) * x, [u(2, 3, 3), u(2, 3)]),
        Case(lambda x, d: tf.linalg.set_diag(x, d, k=(0, 1)) ** 2, [u(3, 4), u(2, 3)],
             note="two diagonals"),
    ],
    "LogMatrixDeterminant": [
        Case(lambda x: tf.linalg.slogdet(x)[1], [well(3, 3)]),
        Case(lambda x: tf.linalg.slogdet(x).log_abs_determinant * tf.linalg.slogdet(x).sign,
             [well(2, 2, 2, shift=-2.0)], note="batched, negative determinants"),
        Case(lambda x: tf.linalg.logdet(_spd(x)), [u(2, 3, 3)], note="logdet",
             kw={"rtol": 1e-4, "atol": 1e-5}),
    ],
    "Qr": [
        Case(lambda x: tf.linalg.qr(x).q * 2.0 + tf.reduce_sum(tf.linalg.qr(x).r), [u(3, 3)]),
        Case(lambda x: tf.linalg.qr(x)[0] ** 2 + tf.reduce_sum(tf.linalg.qr(x)[1] ** 2), [u(2, 4, 3)],
             note="tall, batched"),
        Case(lambda x: tf.linalg.qr(x)[1] * 3.0 + tf.reduce_sum(tf.linalg.qr(x)[0]), [u(2, 3)],
             note="wide"),
        Case(lambda x: tf.linalg.qr(x, full_matrices=True)[1], [u(2, 4)], order=1,
             note="wide, full_matrices"),
    ],
    "Svd": [
        Case(lambda x: tf.linalg.svd(x, compute_uv=False) ** 2, [u(2, 3, 2)], note="values only"),
        Case(lambda x: _svd_product(tf.linalg.svd(x)), [u(3, 3)]),
        Case(lambda x: _svd_product(tf.linalg.svd(x)), [u(2, 2, 3)], note="wide, batched"),
        Case(lambda x: tf.linalg.pinv(x), [u(3, 2)], note="pinv"),
        Case(lambda x: _svd_product(tf.linalg.svd(x, full_matrices=True)), [u(3, 2)], order=1,
             note="full_matrices, tall"),
    ],
    "SelfAdjointEigV2": [
        Case(lambda x: tf.linalg.eigh(x)[0] * tf.linalg.eigh(x)[1] ** 2, [_sym(3)]),
        Case(lambda x: tf.linalg.eigvalsh(x) ** 2, [_sym(2, 3)], note="values only, batched"),
    ],
    "MatrixSolveLs": [
        Case(lambda a, b: tf.linalg.lstsq(a, b), [u(4, 2), u(4, 2)], note="overdetermined"),
        Case(lambda a, b: tf.linalg.lstsq(a, b, l2_regularizer=0.5), [u(2, 2, 3), u(2, 2, 1)],
             note="underdetermined, regularized, batched"),
    ],
    "MatrixExponential": [
        Case(lambda x: tf.linalg.expm(x), [u(3, 3)]),
        Case(lambda x: tf.linalg.expm(x) * x, [u(2, 2, 2, lo=-2.0, hi=2.0)], note="batched"),
    ],
    "MatrixSquareRoot": [
        Case(lambda x: tf.linalg.sqrtm(x), [well(3, 3)]),
        Case(lambda x: tf.linalg.sqrtm(_spd(x)), [u(2, 2, 2)], note="batched, SPD"),
    ],
    "TridiagonalSolve": [
        Case(lambda d, r: tf.linalg.tridiagonal_solve(d, r), [_tridiag(3), u(3, 2)]),
        Case(lambda d, r: tf.linalg.tridiagonal_solve(d, r, partial_pivoting=False), [_tridiag(2, 4), u(2, 4, 1)],
             note="Thomas, batched"),
        Case(lambda d, r: tf.linalg.tridiagonal_solve(d, r), [u(3, 3), u(3, 1)], note="pivoting"),
        Case(lambda d, r: tf.linalg.tridiagonal_matmul(d, r) + tf.linalg.banded_triangular_solve(d[:2], r),
             [_tridiag(3), u(3, 2)], note="tridiagonal_matmul, banded_triangular_solve"),
        Case(lambda a, b: tf.linalg.cross(a, b) * a, [u(2, 3), u(2, 3)], note="cross"),
    ],
}
NOT_DIFFERENTIABLE = []
