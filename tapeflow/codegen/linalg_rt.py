"""Jitted helpers of the linear algebra templates (``codegen/templates/linalg*.py``).

Generated code reaches them as ``rt.name`` (``jit_helpers`` re-exports them). Each works on
one matrix, or on a batch flattened to 3-D, with every size read from its arguments; the
semantics are the NumPy kernels' (runtime/kernels/linalg*.py), TensorFlow's.
"""
import numpy as np
from numba import njit

from ..runtime.kernels import linalg_decomp as _kernels
from ..runtime.kernels import linalg_tridiag as _tridiag
# triangular solves and Cholesky factors on NumPy's OpenBLAS (trsm/potrf)
from .lapack import cholesky_into, cholesky_or_nan, tri_inverse_into, tri_matmul_into, tri_solve_into

_JIT = dict(cache=True, error_model="numpy", nogil=True)


@njit(**_JIT)
def outer_into(a, b, out):
    """out = a @ b for a [m, 1] and b [1, n]."""
    for i in range(out.shape[0]):
        x = a[i, 0]
        for j in range(out.shape[1]):
            out[i, j] = x * b[0, j]


@njit(**_JIT)
def band_part_into(x, out, num_lower, num_upper):
    nb, rows, cols = x.shape
    for b in range(nb):
        for i in range(rows):
            for j in range(cols):
                keep = (num_lower < 0 or i - j <= num_lower) and (num_upper < 0 or j - i <= num_upper)
                out[b, i, j] = x[b, i, j] if keep else 0


@njit(**_JIT)
def _diag_len(rows, cols, d):
    return min(rows + min(0, d), cols - max(0, d))


@njit(**_JIT)
def _diagonal(d, width, rows, cols, left_super, left_sub):
    """Diagonal ``d`` of a rows x cols matrix: its length, its offset in a packed row of
    ``width`` (by the alignment), and its first (row, col)."""
    n = _diag_len(rows, cols, d)
    off = 0 if (d >= 0 and left_super) or (d <= 0 and left_sub) else width - n
    return n, off, max(0, -d), max(0, d)


@njit(**_JIT)
def diag_part_into(x, out, lo, hi, pad, left_super, left_sub):
    """out [nb, hi-lo+1, width]: diagonals hi..lo of each matrix of x [nb, rows, cols]."""
    nb, rows, cols = x.shape
    width = out.shape[2]
    for b in range(nb):
        for j in range(hi - lo + 1):
            n, off, r0, c0 = _diagonal(hi - j, width, rows, cols, left_super, left_sub)
            for t in range(width):
                out[b, j, t] = x[b, r0 + t - off, c0 + t - off] if off <= t < off + n else pad


@njit(**_JIT)
def diag_into(dg, out, lo, hi, left_super, left_sub):
    """Writes diagonals hi..lo of dg [nb, hi-lo+1, width] into out [nb, rows, cols]."""
    nb, rows, cols = out.shape
    width = dg.shape[2]
    for b in range(nb):
        for j in range(hi - lo + 1):
            n, off, r0, c0 = _diagonal(hi - j, width, rows, cols, left_super, left_sub)
            for t in range(n):
                out[b, r0 + t, c0 + t] = dg[b, j, off + t]


@njit(**_JIT)
def slogdet_into(a, sign, logdet):
    """sign [nb], logdet [nb] of each matrix of a [nb, n, n]."""
    for b in range(a.shape[0]):
        s, l = np.linalg.slogdet(a[b])
        sign[b] = s
        logdet[b] = l


@njit(**_JIT)
def qr_into(a, q, r, complete):
    """Householder QR of each matrix (LAPACK's, as NumPy's). Numba's qr is the reduced one:
    the complete Q of a tall matrix is the Q of [a, 0], whose extra reflectors are identities."""
    nb, m, n = a.shape
    for b in range(nb):
        if complete and m > n:
            wide = np.zeros((m, m), dtype=a.dtype)
            wide[:, :n] = a[b]
            qq, rr = np.linalg.qr(wide)
            q[b] = qq
            r[b] = rr[:, :n]
        else:
            qq, rr = np.linalg.qr(np.ascontiguousarray(a[b]))
            q[b] = qq
            r[b] = rr


@njit(**_JIT)
def svd_into(a, s, u, v, compute_uv, full):
    """s descending, u, and v = V (not V^T) of each matrix."""
    for b in range(a.shape[0]):
        uu, ss, vt = np.linalg.svd(np.ascontiguousarray(a[b]), full_matrices=full)
        s[b] = ss
        if compute_uv:
            u[b] = uu
            v[b] = vt.T


@njit(**_JIT)
def eigh_into(a, e, v, compute_v):
    for b in range(a.shape[0]):
        n = a.shape[1]
        low = np.empty((n, n), dtype=a.dtype)   # the matrix the lower triangle defines
        for i in range(n):
            for j in range(i + 1):
                low[i, j] = a[b, i, j]
                low[j, i] = a[b, i, j]
        ee, vv = np.linalg.eigh(low)
        e[b] = ee
        if compute_v:
            v[b] = vv


@njit(**_JIT)
def lu_into(a, lu, perm):
    """Partial-pivoting LU (runtime/kernels/linalg_decomp.py ``lu_one``): a zero pivot raises,
    and the interpreter then reports TF's error."""
    nb, n, _ = a.shape
    for b in range(nb):
        lu[b] = a[b]
        for i in range(n):
            perm[b, i] = i
        for j in range(n):
            p, best = j, abs(lu[b, j, j])
            for i in range(j + 1, n):
                if abs(lu[b, i, j]) > best:
                    p, best = i, abs(lu[b, i, j])
            if lu[b, p, j] == 0:
                raise ValueError("Input is not invertible.")
            if p != j:
                for c in range(n):
                    t = lu[b, j, c]
                    lu[b, j, c] = lu[b, p, c]
                    lu[b, p, c] = t
                t2 = perm[b, j]
                perm[b, j] = perm[b, p]
                perm[b, p] = t2
            for i in range(j + 1, n):
                lu[b, i, j] /= lu[b, j, j]
                f = lu[b, i, j]
                for c in range(j + 1, n):
                    lu[b, i, c] -= f * lu[b, j, c]


@njit(**_JIT)
def lstsq_into(a, rhs, out, l2, fast):
    """MatrixSolveLs per matrix: the regularized normal equations through a Cholesky factor
    (fast), or the minimum-norm solution."""
    nb, m, n = a.shape
    for b in range(nb):
        x = np.ascontiguousarray(a[b])
        y = np.ascontiguousarray(rhs[b])
        if not fast:
            out[b] = np.linalg.lstsq(x, y)[0]
            continue
        first = m >= n
        gram = x.T @ x if first else x @ x.T
        for i in range(gram.shape[0]):
            gram[i, i] += l2
        chol = cholesky_or_nan(gram)
        if gram.shape[0] and np.isnan(chol[0, 0]):
            out[b] = np.nan   # TF's NaN Cholesky: a NaN solution, no error
            continue
        if first:
            t = np.linalg.solve(chol, x.T @ y)
            out[b] = np.linalg.solve(chol.T.copy(), t)
        else:
            t = np.linalg.solve(chol, y)
            out[b] = x.T @ np.linalg.solve(chol.T.copy(), t)


# -- matrix functions: SciPy's (the kernels'), called in object mode ---------------------
def expm_into(a, out):
    """out[...] = expm of each matrix of a (runtime/kernels/linalg_decomp.py)."""
    out[...] = _kernels.expm_batch(a)


def sqrtm_into(a, out):
    out[...] = _kernels.sqrtm_batch(a)


_tridiagonal_one = njit(**_JIT)(_tridiag.tridiagonal_solve_one)


@njit(**_JIT)
def tridiagonal_solve_into(diags, rhs, out, partial_pivoting, perturb_singular, eps):
    """TF's tridiagonal solves (runtime/kernels/linalg_tridiag.py, the same code jitted)."""
    for b in range(diags.shape[0]):
        _tridiagonal_one(diags[b], rhs[b], out[b], partial_pivoting, perturb_singular, eps)

__all__ = ["tri_solve_into", "band_part_into", "diag_part_into", "diag_into", "cholesky_or_nan",
           "cholesky_into", "tri_inverse_into", "tri_matmul_into", "outer_into",
           "slogdet_into", "qr_into", "svd_into", "eigh_into", "lu_into", "lstsq_into", "expm_into",
           "sqrtm_into", "tridiagonal_solve_into"]
