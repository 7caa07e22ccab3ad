"""Gradient rules of the decompositions and matrix functions (TF's linalg_grad.py)."""
from ...ops import array as a
from ...ops import linalg as la
from ...ops import math as m
from ...runtime.registry import gradient


@gradient("LogMatrixDeterminant", inputs=(0,))
def _slogdet(op, _, grad_b):
    """TF's _LogMatrixDeterminantGrad: g * inv(A)^T; the sign has no gradient."""
    inv_t = la.inv(op.inputs[0], adjoint=True)
    return [m.multiply(a.expand_dims(a.expand_dims(grad_b, -1), -1), inv_t)]
