"""Cumulative scans for compiled programs, on a (pre, n, post) view of the input, in NumPy's
sequential order so results are bit for bit the kernels' (runtime/kernels/scan.py)."""
import numpy as np
from numba import njit

_JIT = dict(cache=True, error_model="numpy", nogil=True)


@njit(**_JIT)
def _order(t, n, reverse):
    return n - 1 - t if reverse else t


@njit(**_JIT)
def cumsum3(x, out, exclusive, reverse):
    pre, n, post = x.shape
    step = 1 if reverse else -1          # where the previous element of the scan is
    for i in range(pre):
        for k in range(post):
            for t in range(n):
                j = _order(t, n, reverse)
                if t == 0:
                    out[i, j, k] = 0 if exclusive else x[i, j, k]
                else:
                    out[i, j, k] = out[i, j + step, k] + (x[i, j + step, k] if exclusive else x[i, j, k])


@njit(**_JIT)
def cumprod3(x, out, exclusive, reverse):
    pre, n, post = x.shape
    step = 1 if reverse else -1
    for i in range(pre):
        for k in range(post):
            for t in range(n):
                j = _order(t, n, reverse)
                if t == 0:
                    out[i, j, k] = 1 if exclusive else x[i, j, k]
                else:
                    out[i, j, k] = out[i, j + step, k] * (x[i, j + step, k] if exclusive else x[i, j, k])


@njit(**_JIT)
def cumlogsumexp3(x, out, exclusive, reverse):
    pre, n, post = x.shape
    step = 1 if reverse else -1
    for i in range(pre):
        for k in range(post):
            for t in range(n):
                j = _order(t, n, reverse)
                if t == 0:
                    out[i, j, k] = -np.inf if exclusive else x[i, j, k]
                else:
                    out[i, j, k] = np.logaddexp(out[i, j + step, k],
                                                x[i, j + step, k] if exclusive else x[i, j, k])
