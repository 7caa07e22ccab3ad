"""NumPy kernel of Bitcast: a view of the bytes (little-endian, as TensorFlow on x86)."""
import numpy as np

from ..registry import kernel


@kernel("Bitcast")
def _bitcast(x, type):
    x = np.asarray(x)
    x = x if x.flags.c_contiguous else x.copy()
    out = type.np
    if x.dtype.itemsize == np.dtype(out).itemsize:
        return x.view(out).copy()
    if x.dtype.itemsize > np.dtype(out).itemsize:
        return x.reshape(x.shape + (1,)).view(out).copy()
    return x.view(out).reshape(x.shape[:-1]).copy()
