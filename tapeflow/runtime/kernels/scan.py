"""NumPy kernels of the cumulative ops: NumPy's sequential accumulate, shifted when exclusive."""
import numpy as np

from ..registry import kernel
from .math import _quiet


def _scan(accumulate, identity):
    def run(x, axis, exclusive=False, reverse=False):
        x = np.asarray(x)
        if reverse:
            x = np.flip(x, axis)
        if exclusive:
            first = np.full_like(np.take(x, [0], axis=axis), identity)
            x = np.concatenate([first, np.delete(x, -1, axis=axis)], axis=axis)
        out = accumulate(x, axis=axis, dtype=x.dtype)
        return np.ascontiguousarray(np.flip(out, axis) if reverse else out)
    return run


kernel("Cumsum")(_quiet(_scan(np.add.accumulate, 0)))
kernel("Cumprod")(_quiet(_scan(np.multiply.accumulate, 1)))
kernel("CumulativeLogsumexp")(_quiet(_scan(np.logaddexp.accumulate, -np.inf)))
