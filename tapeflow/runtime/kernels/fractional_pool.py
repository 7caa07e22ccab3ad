"""NumPy kernels of fractional pooling (ir/defs/fractional_pool.py) and the pooling
sequence, TensorFlow's bit for bit.

TensorFlow seeds a ``PhiloxRandom(seed, seed2)`` (key: seed's two words; counter: zero, zero,
seed2's two words) and draws the row sequence, then the column sequence, from it:
pseudo-random, one block (2 words as a double ``u`` in [0, 1), scaled by the largest ``u``
keeping every gap ``n // out`` or one more; boundaries ``ceil(alpha * (i + u))``);
random, ``n % out`` gaps of ``n // out + 1`` first, then shuffled (``i`` swapped with
``i + word % (out - i)``, one word each, ``ceil(out / 4)`` blocks reserved). Seeds (0, 0)
are a fresh random pair per call, as TensorFlow's. ``pooling_sequence`` is jitted: the
compiled programs call it too (codegen/templates/fractional_pool.py).
"""
import math

import numpy as np
from numba import njit

from ...ir.defs.fractional_pool import output_size
from .. import philox
from ..registry import kernel

_MASK = np.uint64(0xFFFFFFFF)


@njit(cache=True, nogil=True)
def pooling_sequence(n_in, n_out, pseudo, seed, seed2, skip, out):
    """Fill ``out`` (int64, ``n_out + 1``) with the cumulative pooling sequence drawn from
    ``PhiloxRandom(seed, seed2)`` after ``skip`` blocks; returns the blocks it reserved."""
    s, s2 = np.uint64(seed), np.uint64(seed2)
    kc = (s & _MASK, s >> np.uint64(32), np.uint64(0), np.uint64(0), s2 & _MASK,
          s2 >> np.uint64(32))
    diff = np.empty(n_out, np.int64)
    k = n_in // n_out
    if pseudo:
        w = philox.group_block(kc, skip)
        alpha = n_in / n_out
        max_u = min((k + 2) / alpha - 1, (n_in + 1 - k) / alpha - (n_out - 1))
        u = philox.u64_to_f64(w[0], w[1]) * max_u
        prev = 1
        for i in range(1, n_out + 1):
            cur = n_in + 1 if i == n_out else int(math.ceil(alpha * (i + u)))
            diff[i - 1] = cur - prev
            prev = cur
        used = 1
    else:
        extra = n_in % n_out
        for i in range(n_out):
            diff[i] = k + 1 if i < extra else k
        used = (n_out + 3) // 4
        w = philox.group_block(kc, skip)
        j, g = 0, 0
        for i in range(n_out - 1):
            if j == 4:
                g += 1
                w = philox.group_block(kc, skip + g)
                j = 0
            t = i + int(w[j] % np.uint64(n_out - i))
            j += 1
            diff[i], diff[t] = diff[t], diff[i]
    out[0] = 0
    for i in range(n_out):
        out[i + 1] = out[i] + diff[i]
    return used


def seeds(seed, seed2):
    """The op's seed pair as unsigned words; (0, 0): a fresh random pair (TensorFlow's
    nondeterministic generator)."""
    if seed == 0 and seed2 == 0:
        seed, seed2 = (int(v) for v in np.random.SeedSequence().generate_state(2, np.uint64))
    return seed & 0xFFFFFFFFFFFFFFFF, seed2 & 0xFFFFFFFFFFFFFFFF


def sequences(shape, out_shape, pseudo_random, seed, seed2):
    s, s2 = (np.uint64(v) for v in seeds(seed, seed2))
    row = np.empty(out_shape[1] + 1, np.int64)
    col = np.empty(out_shape[2] + 1, np.int64)
    used = pooling_sequence(shape[1], out_shape[1], pseudo_random, s, s2, 0, row)
    pooling_sequence(shape[2], out_shape[2], pseudo_random, s, s2, used, col)
    return row, col


def windows(row, col, shape, overlapping):
    """(output row, output column, input rows, input columns) of each pooling cell."""
    for i in range(len(row) - 1):
        r1 = min(row[i + 1] if overlapping else row[i + 1] - 1, shape[1] - 1)
        for j in range(len(col) - 1):
            c1 = min(col[j + 1] if overlapping else col[j + 1] - 1, shape[2] - 1)
            yield i, j, range(row[i], r1 + 1), range(col[j], c1 + 1)


def _pool(x, pooling_ratio, pseudo_random, overlapping, seed, seed2, avg):
    out_shape = [output_size(d, r) for d, r in zip(x.shape, pooling_ratio)]
    row, col = sequences(x.shape, out_shape, pseudo_random, seed, seed2)
    y = np.empty(out_shape, x.dtype)
    for i, j, rows, cols in windows(row, col, x.shape, overlapping):
        acc = None
        for h in rows:
            for w in cols:
                v = x[:, h, w, :]
                acc = v.copy() if acc is None else (acc + v if avg else np.maximum(acc, v))
        if avg:
            n = len(rows) * len(cols)
            acc = acc / x.dtype.type(n) if x.dtype.kind == "f" else \
                np.sign(acc) * (np.abs(acc) // n)
        y[:, i, j, :] = acc
    return y, row, col


@kernel("FractionalMaxPool")
def _fractional_max_pool(x, pooling_ratio, pseudo_random=False, overlapping=False,
                         deterministic=False, seed=0, seed2=0):
    return _pool(x, pooling_ratio, pseudo_random, overlapping, seed, seed2, False)


@kernel("FractionalAvgPool")
def _fractional_avg_pool(x, pooling_ratio, pseudo_random=False, overlapping=False,
                         deterministic=False, seed=0, seed2=0):
    return _pool(x, pooling_ratio, pseudo_random, overlapping, seed, seed2, True)


@kernel("FractionalMaxPoolGrad")
def _fractional_max_pool_grad(x, y, dy, row, col, overlapping=False):
    """Each output gradient to its cell's first maximum (row-major), TensorFlow's CPU."""
    dx = np.zeros(x.shape, dy.dtype)
    b, c = np.indices((x.shape[0], x.shape[3]), sparse=True)
    for i, j, rows, cols in windows(row, col, x.shape, overlapping):
        best = x[:, rows[0], cols[0], :].copy()
        bh = np.full(best.shape, rows[0])
        bw = np.full(best.shape, cols[0])
        for h in rows:
            for w in cols:
                v = x[:, h, w, :]
                upd = best < v
                best = np.where(upd, v, best)
                bh, bw = np.where(upd, h, bh), np.where(upd, w, bw)
        np.add.at(dx, (np.broadcast_to(b, bh.shape), bh, bw, np.broadcast_to(c, bh.shape)),
                  dy[:, i, j, :])
    return dx


@kernel("FractionalAvgPoolGrad")
def _fractional_avg_pool_grad(x, dy, row, col, overlapping=False):
    """Each output gradient spread evenly over its cell, summed in float64 (TensorFlow's)."""
    acc = np.zeros(x.shape, np.float64)
    for i, j, rows, cols in windows(row, col, x.shape, overlapping):
        share = dy[:, i, j, :].astype(np.float64) / (len(rows) * len(cols))
        for h in rows:
            for w in cols:
                acc[:, h, w, :] += share
    return acc.astype(dy.dtype) if dy.dtype.kind == "f" else np.trunc(acc).astype(dy.dtype)
