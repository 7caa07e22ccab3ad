"""Gather/scatter by index tuples for compiled programs (runtime/kernels/indexing.py per row):
indices checked as the kernels check them, rows visited in index order."""
import numpy as np
from numba import njit

_JIT = dict(cache=True, error_model="numpy", nogil=True)


@njit(**_JIT)
def _row(idx, r, dims):
    flat = 0
    for d in range(idx.shape[1]):
        i = idx[r, d]
        if i < 0 or i >= dims[d]:
            raise IndexError("an index tuple is out of range (GatherNd/ScatterNd)")
        flat = flat * dims[d] + i
    return flat


@njit(**_JIT)
def gather_nd(p, idx, dims, out):
    """out[r, :] = p[row of idx[r], :] for p (N, q), idx (m, k), out (m, q)."""
    for r in range(idx.shape[0]):
        flat = _row(idx, r, dims)
        for c in range(p.shape[1]):
            out[r, c] = p[flat, c]


@njit(**_JIT)
def scatter_nd(idx, upd, dims, out, mode):
    """Combine rows of upd (m, q) into out (N, q): 0 replace, 1 add, 2 subtract, 3 max, 4 min
    (max/min: NaN wins, as np.maximum.at)."""
    for r in range(idx.shape[0]):
        flat = _row(idx, r, dims)
        for c in range(upd.shape[1]):
            u = upd[r, c]
            if mode == 0:
                out[flat, c] = u
            elif mode == 1:
                out[flat, c] += u
            elif mode == 2:
                out[flat, c] -= u
            elif mode == 3:
                o = out[flat, c]
                out[flat, c] = o if (o > u or o != o) else u
            else:
                o = out[flat, c]
                out[flat, c] = o if (o < u or o != o) else u


@njit(**_JIT)
def top_k(x, k, values, indices):
    """Rows of x (rows, n): the k largest, ties by the lower index (the kernel's stable sort
    of the reversed row, read backwards)."""
    n = x.shape[1]
    for r in range(x.shape[0]):
        order = np.argsort(x[r, ::-1].copy(), kind="mergesort")
        for j in range(k):
            i = n - 1 - order[n - 1 - j]
            values[r, j] = x[r, i]
            indices[r, j] = i


@njit(**_JIT)
def in_top_k(p, t, k, out):
    for r in range(p.shape[0]):
        target = t[r]
        if target < 0 or target >= p.shape[1]:
            out[r] = False
            continue
        v = p[r, target]
        better = 0
        for c in range(p.shape[1]):
            if p[r, c] > v:
                better += 1
        out[r] = np.isfinite(v) and better < k
