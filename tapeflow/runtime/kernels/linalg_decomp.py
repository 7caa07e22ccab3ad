"""NumPy kernels of the decompositions and matrix functions (ir/defs/decomp.py)."""
import numpy as np

from ..registry import kernel


@kernel("LogMatrixDeterminant")
def _slogdet(a):
    """(sign, log|det|); a singular matrix gives sign 0 and -inf, no error (as TensorFlow)."""
    sign, logdet = np.linalg.slogdet(a)
    return sign.astype(a.dtype), logdet.astype(a.dtype)
