"""Jitted helpers of the linear algebra templates (``codegen/templates/linalg*.py``).

Generated code reaches them as ``rt.name`` (``jit_helpers`` re-exports them). Each works on
one matrix, or on a batch flattened to 3-D, with every size read from its arguments; the
semantics are the NumPy kernels' (runtime/kernels/linalg*.py), TensorFlow's.
"""
import numpy as np
from numba import njit

_JIT = dict(cache=True, error_model="numpy", nogil=True)


@njit(**_JIT)
def tri_solve_into(a, b, out, lower, adjoint):
    """Substitution with the ``lower`` (or upper) triangle of ``a`` (transposed when
    ``adjoint``); a zero pivot gives inf/nan, as TensorFlow's."""
    n, k = b.shape
    # solving with L^T is backward substitution on the upper triangle
    forward = lower != adjoint
    for step in range(n):
        i = step if forward else n - 1 - step
        for c in range(k):
            out[i, c] = b[i, c]
        for step2 in range(step):
            j = step2 if forward else n - 1 - step2
            f = a[j, i] if adjoint else a[i, j]
            for c in range(k):
                out[i, c] -= f * out[j, c]
        p = a[i, i]
        for c in range(k):
            out[i, c] = out[i, c] / p


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
def _offset(d, width, rows, cols, left_super, left_sub):
    if (d >= 0 and left_super) or (d <= 0 and left_sub):
        return 0
    return width - _diag_len(rows, cols, d)


@njit(**_JIT)
def diag_part_into(x, out, lo, hi, pad, left_super, left_sub):
    """out [nb, hi-lo+1, width]: diagonals hi..lo of each matrix of x [nb, rows, cols]."""
    nb, rows, cols = x.shape
    width = out.shape[2]
    for b in range(nb):
        for j in range(hi - lo + 1):
            d = hi - j
            n = _diag_len(rows, cols, d)
            off = _offset(d, width, rows, cols, left_super, left_sub)
            r0, c0 = max(0, -d), max(0, d)
            for t in range(width):
                out[b, j, t] = x[b, r0 + t - off, c0 + t - off] if off <= t < off + n else pad


@njit(**_JIT)
def diag_into(dg, out, lo, hi, left_super, left_sub):
    """Writes diagonals hi..lo of dg [nb, hi-lo+1, width] into out [nb, rows, cols]."""
    nb, rows, cols = out.shape
    width = dg.shape[2]
    for b in range(nb):
        for j in range(hi - lo + 1):
            d = hi - j
            n = _diag_len(rows, cols, d)
            off = _offset(d, width, rows, cols, left_super, left_sub)
            r0, c0 = max(0, -d), max(0, d)
            for t in range(n):
                out[b, r0 + t, c0 + t] = dg[b, j, off + t]


@njit(**_JIT)
def cholesky_or_nan(a):
    """np.linalg.cholesky, or NaN in the whole lower triangle where ``a`` is not positive
    definite (TensorFlow 2.21's result, no error)."""
    n = a.shape[0]
    try:
        return np.ascontiguousarray(np.linalg.cholesky(a))
    except Exception:  # noqa: BLE001 - Numba catches only by class; LinAlgError is the one
        out = np.zeros((n, n), dtype=a.dtype)
        for i in range(n):
            for j in range(i + 1):
                out[i, j] = np.nan
        return out


@njit(**_JIT)
def slogdet_into(a, sign, logdet):
    """sign [nb], logdet [nb] of each matrix of a [nb, n, n]."""
    for b in range(a.shape[0]):
        s, l = np.linalg.slogdet(a[b])
        sign[b] = s
        logdet[b] = l
__all__ = ["tri_solve_into", "band_part_into", "diag_part_into", "diag_into", "cholesky_or_nan", "slogdet_into"]
