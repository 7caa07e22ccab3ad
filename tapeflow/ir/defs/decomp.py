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
        raise InferError(f"{what} must have rank >= 2, received shape: {list(aval.shape)}")
    return aval.shape[:-2], aval.shape[-2], aval.shape[-1]


def _square(aval, what="input"):
    batch, rows, cols = _matrix(aval, what)
    if rows is not None and cols is not None and rows != cols:
        raise InferError(f"{what} must be a square matrix (or batch of them), got shape "
                         f"{list(aval.shape)}")
    return batch, rows


def _slogdet(avals):
    batch, _ = _square(avals[0])
    out = AVal(batch, avals[0].dtype)
    return out, out


defop("LogMatrixDeterminant", _slogdet, multi_output=True)
