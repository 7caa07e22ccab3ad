"""NumPy kernels of the linear algebra ops."""
import numpy as np

from ...ir.defs.linalg import parse_einsum
from ..blas_threads import one_thread
from ..registry import kernel


def _t(x, transpose):
    return np.swapaxes(x, -1, -2) if transpose else x


@kernel("MatMul")
def _matmul(a, b, transpose_a=False, transpose_b=False):
    a, b = _t(a, transpose_a), _t(b, transpose_b)
    if a.ndim < 2 or b.ndim < 2:
        return np.matmul(a, b)
    # a small product on one BLAS thread (blas_threads.py: spinning pools on a busy machine)
    work = a.size // max(a.shape[-1], 1) * a.shape[-1] * b.shape[-1]
    with one_thread(work):
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
    """Reads only the lower triangle, like TensorFlow; a non-positive-definite input is an error."""
    return np.linalg.cholesky(a)
