"""NumPy kernels of the linear algebra ops."""
import numpy as np

from ...ir.defs.linalg import diag_len, diag_matrix_shape, diag_offset, parse_einsum
from ..blas_threads import fitting_threads
from ..registry import kernel


def _t(x, transpose):
    return np.swapaxes(x, -1, -2) if transpose else x


@kernel("MatMul")
def _matmul(a, b, transpose_a=False, transpose_b=False):
    a, b = _t(a, transpose_a), _t(b, transpose_b)
    if a.ndim < 2 or b.ndim < 2:
        return np.matmul(a, b)
    # as many BLAS threads as the machine has free (blas_threads.py: spinning pools)
    work = a.size // max(a.shape[-1], 1) * a.shape[-1] * b.shape[-1]
    with fitting_threads(work):
        return np.matmul(a, b)


@kernel("Einsum")
def _einsum(*operands, equation):
    """Runs the explicit form of the equation, so size-1 broadcast dims are summed, never stretched."""
    labels, out, _ = parse_einsum(equation, [np.shape(x) for x in operands])
    return np.einsum(",".join(labels) + "->" + out, *operands, optimize=len(operands) > 2)


@kernel("MatrixSolve")
def _solve(a, rhs, adjoint=False):
    return np.linalg.solve(_t(a, adjoint), rhs)


@kernel("MatrixInverse")
def _inverse(a, adjoint=False):
    return np.linalg.inv(_t(a, adjoint))


kernel("MatrixDeterminant")(np.linalg.det)


@kernel("Cholesky")
def _cholesky(a):
    """Reads only the lower triangle, like TensorFlow. A matrix that is not positive definite
    gets NaN in its whole lower triangle, no error (TF 2.21: "Filling lower-triangular output
    with NaNs")."""
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        pass
    a3 = a.reshape((-1,) + a.shape[-2:])
    out = np.empty_like(a3)
    nan_lower = np.where(np.tri(a.shape[-1], dtype=bool), np.nan, 0.0).astype(a.dtype)
    for i in range(a3.shape[0]):
        try:
            out[i] = np.linalg.cholesky(a3[i])
        except np.linalg.LinAlgError:
            out[i] = nan_lower
    return out.reshape(a.shape)


# -- triangular solve, band and diagonal ops ---------------------------------------------
def _batched_pair(a, b):
    """``a`` [..., M, M] and ``b`` [..., M, K] broadcast to one batch, flattened to 3-D."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a3 = np.broadcast_to(a, batch + a.shape[-2:]).reshape((-1,) + a.shape[-2:])
    b3 = np.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    return batch, a3, b3


@kernel("MatrixTriangularSolve")
def _triangular_solve(a, rhs, lower=True, adjoint=False):
    """BLAS trsm per matrix: reads one triangle; a zero on the diagonal gives inf/nan, no error
    (as TensorFlow's)."""
    from scipy.linalg import blas  # noqa: PLC0415  (import cost: SciPy's BLAS only when used)
    batch, a3, b3 = _batched_pair(a, rhs)
    out = np.empty(b3.shape, dtype=rhs.dtype)
    trsm = blas.dtrsm if rhs.dtype == np.float64 else blas.strsm
    with np.errstate(all="ignore"):
        for i in range(a3.shape[0]):
            if b3.shape[1] and b3.shape[2]:
                out[i] = trsm(1.0, a3[i], b3[i], lower=int(lower), trans_a=int(adjoint))
            else:
                out[i] = b3[i]
    return out.reshape(batch + rhs.shape[-2:])


@kernel("MatrixBandPart")
def _band_part(x, num_lower=-1, num_upper=-1):
    rows, cols = x.shape[-2:]
    i, j = np.arange(rows)[:, None], np.arange(cols)[None, :]
    keep = np.ones((rows, cols), bool)
    if num_lower >= 0:
        keep &= i - j <= num_lower
    if num_upper >= 0:
        keep &= j - i <= num_upper
    return np.where(keep, x, np.zeros((), x.dtype))


def diagonal_indices(rows, cols, d):
    """Row and column indices of diagonal ``d`` of a rows x cols matrix."""
    n = diag_len(rows, cols, d)
    start_r, start_c = max(0, -d), max(0, d)
    return np.arange(start_r, start_r + n), np.arange(start_c, start_c + n)


@kernel("MatrixDiagPartV3")
def _diag_part(x, k=(0, 0), padding_value=0, align="RIGHT_LEFT"):
    lo, hi = k
    rows, cols = x.shape[-2:]
    width = max(diag_len(rows, cols, d) for d in range(lo, hi + 1))
    out = np.full(x.shape[:-2] + (hi - lo + 1, width), padding_value, dtype=x.dtype)
    for j, d in enumerate(range(hi, lo - 1, -1)):
        r, c = diagonal_indices(rows, cols, d)
        off = diag_offset(d, width, rows, cols, align)
        out[..., j, off:off + len(r)] = x[..., r, c]
    return out[..., 0, :] if lo == hi else out


def _fill_diagonals(out, diagonal, k, align):
    lo, hi = k
    rows, cols = out.shape[-2:]
    d3 = diagonal[..., None, :] if lo == hi else diagonal
    width = d3.shape[-1]
    for j, d in enumerate(range(hi, lo - 1, -1)):
        r, c = diagonal_indices(rows, cols, d)
        off = diag_offset(d, width, rows, cols, align)
        out[..., r, c] = d3[..., j, off:off + len(r)]
    return out


@kernel("MatrixDiagV3")
def _matrix_diag(diagonal, k=(0, 0), num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    rows, cols = diag_matrix_shape(diagonal.shape, k, num_rows, num_cols)
    batch = diagonal.shape[:-1] if k[0] == k[1] else diagonal.shape[:-2]
    out = np.full(batch + (rows, cols), padding_value, dtype=diagonal.dtype)
    return _fill_diagonals(out, diagonal, k, align)


@kernel("MatrixSetDiagV3")
def _set_diag(x, diagonal, k=(0, 0), align="RIGHT_LEFT"):
    return _fill_diagonals(np.array(x, copy=True), diagonal, k, align)


from . import linalg_decomp  # noqa: E402,F401  (kernels of the decompositions)
