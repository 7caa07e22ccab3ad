"""Decompositions and matrix functions: slogdet, QR, SVD, eigh, LU, least squares, expm, sqrtm.

Every op maps over leading (batch) dims; multi-output ops return their outputs in
TensorFlow's order (``Svd``: s, u, v; ``SelfAdjointEigV2``: e, v; ``Lu``: lu, p).
"""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import AVal, FLOATS, check_dtype, defop


def _matrix(aval, what="input"):
    check_dtype(aval, FLOATS)
    if len(aval.shape) < 2:
        raise InferError(f"Input tensor 0 must have rank >= 2, got {len(aval.shape)} ({what} of "
                         f"shape {list(aval.shape)})")
    return aval.shape[:-2], aval.shape[-2], aval.shape[-1]


def _square(aval, what="input"):
    batch, rows, cols = _matrix(aval, what)
    if rows is not None and cols is not None and rows != cols:
        raise InferError(f"Input matrix must be square. Got shape {list(aval.shape)}")
    return batch, rows


def _slogdet(avals):
    batch, _ = _square(avals[0])
    out = AVal(batch, avals[0].dtype)
    return out, out


defop("LogMatrixDeterminant", _slogdet, multi_output=True)


def _qr(avals, full_matrices=False):
    batch, m, n = _matrix(avals[0])
    k = m if full_matrices or m is None or n is None else min(m, n)
    dt = avals[0].dtype
    return AVal(batch + (m, k), dt), AVal(batch + (k, n), dt)


def _svd(avals, compute_uv=True, full_matrices=False):
    """s [..., P], u [..., M, M or P], v [..., N, N or P]; without uv, u and v are empty
    vectors (TF's shape function)."""
    batch, m, n = _matrix(avals[0])
    dt = avals[0].dtype
    p = None if m is None or n is None else min(m, n)
    if not compute_uv:
        return AVal(batch + (p,), dt), AVal((0,), dt), AVal((0,), dt)
    ku, kv = (m, n) if full_matrices else (p, p)
    return AVal(batch + (p,), dt), AVal(batch + (m, ku), dt), AVal(batch + (n, kv), dt)


def _eigh(avals, compute_v=True):
    batch, n = _square(avals[0])
    dt = avals[0].dtype
    return AVal(batch + (n,), dt), AVal(batch + (n, n) if compute_v else (0,), dt)


def _lu(avals, output_idx_type=D.int32):
    batch, n = _square(avals[0])
    if output_idx_type not in (D.int32, D.int64):
        raise InferError(f"output_idx_type must be int32 or int64, got {output_idx_type.name}")
    return avals[0], AVal(batch + (n,), output_idx_type)


def _solve_ls(avals, l2_regularizer=0.0, fast=True):
    a, b = avals
    batch, m, n = _matrix(a, "matrix")
    bbatch, rows, k = _matrix(b, "rhs")
    if a.dtype != b.dtype:
        raise InferError(f"matrix has dtype {a.dtype.name} but rhs has {b.dtype.name}")
    if batch != bbatch or (m is not None and rows is not None and m != rows):
        raise InferError(f"Matrix size-incompatible: In[0]: {list(a.shape)}, In[1]: {list(b.shape)} "
                         f"(matrix and rhs must be [..., M, N] and [..., M, K])")
    return AVal(batch + (n, k), a.dtype)


defop("Qr", _qr, attrs={"full_matrices": "bool"}, multi_output=True)
defop("Svd", _svd, attrs={"compute_uv": "bool", "full_matrices": "bool"}, multi_output=True)
defop("SelfAdjointEigV2", _eigh, attrs={"compute_v": "bool"}, multi_output=True)
defop("Lu", _lu, attrs={"output_idx_type": "dtype"}, multi_output=True)
defop("MatrixSolveLs", _solve_ls, arity=2, attrs={"l2_regularizer": "number", "fast": "bool"},
      same_dtype=(0, 1))


def _square_matrix_function(avals):
    _square(avals[0])
    return avals[0]


def _tridiagonal_solve(avals, partial_pivoting=True, perturb_singular=False):
    """Diagonals in TF's compact form [..., 3, M] (superdiagonal, diagonal, subdiagonal);
    rhs [..., M, K]."""
    d, rhs = avals
    check_dtype(d, FLOATS)
    if d.dtype != rhs.dtype:
        raise InferError(f"diagonals has dtype {d.dtype.name} but rhs has {rhs.dtype.name}")
    if len(d.shape) < 2 or (d.shape[-2] is not None and d.shape[-2] != 3):
        raise InferError(f"Expected 3 diagonals got {d.shape[-2] if len(d.shape) >= 2 else list(d.shape)}")
    if len(rhs.shape) != len(d.shape) or rhs.shape[:-2] != d.shape[:-2]:
        raise InferError(f"diagonals {list(d.shape)} and rhs {list(rhs.shape)} must have the same "
                         f"batch dimensions")
    if d.shape[-1] is not None and rhs.shape[-2] is not None and d.shape[-1] != rhs.shape[-2]:
        raise InferError(f"Expected number of left-hand sided and right-hand sides to be equal, got "
                         f"{d.shape[-1]} and {rhs.shape[-2]}")
    return rhs


defop("MatrixExponential", _square_matrix_function)
defop("MatrixSquareRoot", _square_matrix_function)
defop("TridiagonalSolve", _tridiagonal_solve, arity=2,
      attrs={"partial_pivoting": "bool", "perturb_singular": "bool"}, same_dtype=(0, 1))
