"""NumPy kernels of the decompositions and matrix functions (ir/defs/decomp.py)."""
import numpy as np

from ..registry import KERNELS, kernel
from .linalg_tridiag import tridiagonal_solve_batch


@kernel("LogMatrixDeterminant")
def _slogdet(a):
    """(sign, log|det|); a singular matrix gives sign 0 and -inf, no error (as TensorFlow)."""
    sign, logdet = np.linalg.slogdet(a)
    return sign.astype(a.dtype), logdet.astype(a.dtype)


@kernel("Qr")
def _qr(a, full_matrices=False):
    """LAPACK's Householder QR (geqrf/orgqr): the same signs as TensorFlow's (R's diagonal
    may be negative)."""
    q, r = np.linalg.qr(a, mode="complete" if full_matrices and a.shape[-2] > a.shape[-1] else "reduced")
    return q, r


@kernel("Svd")
def _svd(a, compute_uv=True, full_matrices=False):
    """Singular values in descending order; v is V itself (a = u diag(s) v^T), not V^T."""
    if not compute_uv:
        empty = np.zeros((0,), a.dtype)
        return np.linalg.svd(a, compute_uv=False), empty, empty
    u, s, vt = np.linalg.svd(a, full_matrices=full_matrices)
    return s, u, np.swapaxes(vt, -1, -2)


@kernel("SelfAdjointEigV2")
def _eigh(a, compute_v=True):
    """Ascending eigenvalues of the matrix the lower triangle defines."""
    if not compute_v:
        return np.linalg.eigvalsh(a, UPLO="L"), np.zeros((0,), a.dtype)
    return np.linalg.eigh(a, UPLO="L")


def lu_one(a):
    """Partial-pivoting LU of one matrix: (packed L\\U, perm) with a[perm] = L @ U, the first
    largest pivot chosen; an exactly zero pivot is TF's "Input is not invertible." error."""
    n = a.shape[0]
    lu = np.array(a, dtype=a.dtype, copy=True)
    perm = np.arange(n)
    for j in range(n):
        p = j + int(np.argmax(np.abs(lu[j:, j])))
        if lu[p, j] == 0:
            raise ValueError("Input is not invertible.")
        if p != j:
            lu[[j, p]] = lu[[p, j]]
            perm[[j, p]] = perm[[p, j]]
        lu[j + 1:, j] /= lu[j, j]
        lu[j + 1:, j + 1:] -= np.outer(lu[j + 1:, j], lu[j, j + 1:])
    return lu, perm


@kernel("Lu")
def _lu(a, output_idx_type=None):
    a3 = a.reshape((-1,) + a.shape[-2:])
    lus, perms = np.empty_like(a3), np.empty(a3.shape[:2], dtype=output_idx_type.np)
    for i in range(a3.shape[0]):
        lus[i], perms[i] = lu_one(a3[i])
    return lus.reshape(a.shape), perms.reshape(a.shape[:-1])


def _regularized_gram_cholesky(a, l2, first_kind):
    """TF's _RegularizedGramianCholesky: chol(A^T A + l2 I) (first kind) or chol(A A^T + l2 I);
    a Gram matrix that is not positive definite gives NaN (TF's Cholesky), so the solution is NaN."""
    at = np.swapaxes(a, -1, -2)
    gram = at @ a if first_kind else a @ at
    if l2:
        gram = gram + l2 * np.eye(gram.shape[-1], dtype=a.dtype)
    return KERNELS["Cholesky"](gram)


@kernel("MatrixSolveLs")
def _solve_ls(a, b, l2_regularizer=0.0, fast=True):
    """fast: the normal equations through a Cholesky factor (TF's); otherwise the
    minimum-norm least-squares solution (``l2_regularizer`` ignored, as TF)."""
    m, n = a.shape[-2:]
    if not fast:
        if a.ndim == 2:
            return np.linalg.lstsq(a, b, rcond=None)[0]
        a3, b3 = a.reshape((-1, m, n)), b.reshape((-1,) + b.shape[-2:])
        out = np.stack([np.linalg.lstsq(x, y, rcond=None)[0] for x, y in zip(a3, b3)])
        return out.reshape(a.shape[:-2] + (n, b.shape[-1]))
    at = np.swapaxes(a, -1, -2)
    chol = _regularized_gram_cholesky(a, l2_regularizer, m >= n)
    if m >= n:
        return _chol_solve(chol, at @ b)
    return at @ _chol_solve(chol, b)


def _chol_solve(chol, rhs):
    y = np.linalg.solve(chol, rhs)   # a NaN factor (TF's failed Cholesky) gives NaN, no error
    return np.linalg.solve(np.swapaxes(chol, -1, -2), y)


def expm_batch(a):
    """SciPy's scaling-and-squaring Padé expm (Higham 2005, TF's algorithm) per matrix."""
    from scipy.linalg import expm  # noqa: PLC0415  (import cost: SciPy's linalg only when used)
    if a.size == 0:
        return np.array(a, copy=True)
    return np.asarray(expm(a), dtype=a.dtype)


def sqrtm_batch(a):
    """The principal square root (Schur method) per matrix; one with a negative real
    eigenvalue has no real root: NaN, as TensorFlow's."""
    from scipy.linalg import sqrtm  # noqa: PLC0415  (import cost: SciPy's linalg only when used)
    a3 = a.reshape((-1,) + a.shape[-2:])
    out = np.empty_like(a3)
    for i in range(a3.shape[0]):
        if a3.shape[-1] == 0:
            continue
        with np.errstate(all="ignore"):
            r = sqrtm(a3[i])
        if np.iscomplexobj(r) and np.any(np.imag(r) != 0):
            out[i] = np.nan
        else:
            out[i] = np.real(r)
    return out.reshape(a.shape)


kernel("MatrixExponential")(expm_batch)
kernel("MatrixSquareRoot")(sqrtm_batch)


@kernel("TridiagonalSolve")
def _tridiagonal_solve(diags, rhs, partial_pivoting=True, perturb_singular=False):
    d3 = diags.reshape((-1,) + diags.shape[-2:])
    r3 = rhs.reshape((-1,) + rhs.shape[-2:])
    out = np.empty_like(r3)
    with np.errstate(all="ignore"):
        tridiagonal_solve_batch(d3, r3, out, partial_pivoting, perturb_singular,
                                float(np.finfo(rhs.dtype).eps))
    return out.reshape(rhs.shape)
