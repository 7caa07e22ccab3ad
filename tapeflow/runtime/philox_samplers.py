"""TensorFlow's stateless samplers over Philox, bit for bit: categorical (``StatelessMultinomial``),
gamma, Poisson, binomial, the parameterized truncated normal, and ``random_index_shuffle``'s
Simon cipher.

Each follows its TensorFlow CPU kernel step for step, in the kernel's precision: which Philox
block feeds which draw, the order a kernel takes the values of a block in (gamma and Poisson
take them last first), the rejection tests and their constants. Gamma, Poisson and binomial
give each output its own stretch of blocks (256, or 42 for binomial inversion), so their
values do not depend on TensorFlow's threads. Categorical and the truncated normal draw from
one stream that TensorFlow splits between its intra-op threads once the work is large, each
shard restarting the stream at its own place: ``shard_starts`` cuts the work where
TensorFlow's ``Shard`` (Eigen's ``parallelFor``) does for a given thread count, so the values
are TensorFlow's on the same thread setting. The NumPy kernels and the compiled programs call
these same functions.
"""
import math
import os

import numpy as np
from numba import njit

from . import blas_threads
from .philox import box_muller_f32, box_muller_f64, group_block, u32_to_f32, u64_to_f64

_JIT = dict(cache=True, nogil=True)


def tf_intra_op_threads():
    """The intra-op thread count TensorFlow would shard with: the one set through
    ``tf.config.threading``, else the CPUs this process may run on (TF's default)."""
    return blas_threads.intra_op_threads() or len(os.sched_getaffinity(0))


def shard_starts(total, cost_per_unit, threads):
    """Where TensorFlow's ``Shard`` cuts [0, total) for ``threads`` intra-op threads: Eigen's
    ``parallelFor`` (its cost model, block size and parallel efficiency search) over blocks of
    one size; one shard when the work is cheap or there is one thread. A kernel whose stream
    restarts at each shard (categorical) gives TensorFlow's values only with its cuts."""
    if total <= 1 or threads <= 1:
        return np.zeros(1, np.int64)
    cost = float(total) * cost_per_unit
    want = min((cost - 100000) / 100000 + 0.9, 2147483647.0)
    if min(threads, max(1, int(want))) == 1:
        return np.zeros(1, np.int64)
    size = min(total, max(-(-total // (4 * threads)), int(1.0 / (cost_per_unit / 40000))))
    largest = min(total, 2 * size)
    count = -(-total // size)
    efficiency = count / (-(-count // threads) * threads)
    prev = count
    while efficiency < 1.0 and prev > 1:
        coarser = -(-total // (prev - 1))
        if coarser > largest:
            break
        coarser_count = -(-total // coarser)
        prev = coarser_count
        coarser_efficiency = coarser_count / (-(-coarser_count // threads) * threads)
        if coarser_efficiency + 0.01 >= efficiency:
            size, count = coarser, coarser_count
            efficiency = max(efficiency, coarser_efficiency)
    return np.arange(0, total, size, dtype=np.int64)


def multinomial_starts(batch, num_classes, num_samples, threads):
    """The rows where TensorFlow's categorical kernel starts a shard (its cost estimate)."""
    cost = int(50 * (num_samples * math.log(num_classes) / math.log(2) + num_classes))
    return shard_starts(batch, cost, threads)


@njit(**_JIT)
def multinomial(out, logits, starts, kc):
    """``out`` [batch, num_samples] (int) filled with class indices drawn from the rows of
    ``logits`` (float64): TensorFlow's CPU kernel, a double uniform (two Philox words, the
    first the high part) times the row's running total of exp(logit - max), found in the
    running totals (non-finite logits add nothing). A shard starting at row r
    (``starts``, ``multinomial_starts``) starts at block r (num_samples + 3) / 4; its rows
    draw one after the other."""
    nb, nc = logits.shape
    ns = out.shape[1]
    cdf = np.empty(nc)
    blk = np.uint64(0)
    pos = 4
    w = group_block(kc, 0)
    shard = 0
    for b in range(nb):
        if shard < starts.size and b == starts[shard]:
            blk = np.uint64(b * (ns + 3) // 4)
            pos = 4
            shard += 1
        mx = -np.inf
        for j in range(nc):
            x = logits[b, j]
            if np.isfinite(x) and x > mx:
                mx = x
        total = 0.0
        for j in range(nc):
            x = logits[b, j]
            e = math.exp(x - mx)
            if np.isfinite(x):
                total += e
            cdf[j] = total
        for s in range(ns):
            pair = np.zeros(2, np.uint64)
            for k in range(2):
                if pos == 4:
                    w = group_block(kc, blk)
                    blk += np.uint64(1)
                    pos = 0
                pair[k] = w[pos]
                pos += 1
            to_find = u64_to_f64(pair[0], pair[1]) * total
            j = 0
            while j < nc and cdf[j] <= to_find:
                j += 1
            out[b, s] = j


@njit(**_JIT)
def gamma(out, alpha, kc):
    """``out`` (flat float64, samples x alphas) filled with TensorFlow's gamma(alpha, 1)
    samples: Marsaglia-Tsang over double normals and uniforms, output ``i`` (alpha-major
    order) starting at block 256 i; alpha == 1 is -log1p(-u)."""
    if out.size == 0:
        return
    na = alpha.size
    spa = out.size // na
    for idx in range(out.size):
        ai = idx // spa
        si = idx - ai * spa
        a = alpha[ai]
        blk = np.uint64(256) * np.uint64(idx)
        if a == 1.0:
            w = group_block(kc, blk)
            res = -math.log1p(-u64_to_f64(w[2], w[3]))
        else:
            small = a < 1.0
            d = a + (2.0 / 3 if small else -1.0 / 3)
            c = 1.0 / 3 / math.sqrt(d)
            nrem = 0
            urem = 0
            n0 = n1 = u0 = u1 = 0.0
            while True:
                if nrem == 0:
                    w = group_block(kc, blk)
                    blk += np.uint64(1)
                    n0, n1 = box_muller_f64(w[0], w[1], w[2], w[3])
                    nrem = 2
                nrem -= 1
                x = n1 if nrem == 1 else n0
                v = 1.0 + c * x
                if v <= 0.0:
                    continue
                v = v * v * v
                if urem == 0:
                    w = group_block(kc, blk)
                    blk += np.uint64(1)
                    u0, u1 = u64_to_f64(w[0], w[1]), u64_to_f64(w[2], w[3])
                    urem = 2
                urem -= 1
                u = u1 if urem == 1 else u0
                if u < 1.0 - 0.0331 * (x * x) * (x * x) or \
                        math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
                    res = d * v
                    if small:
                        if urem == 0:
                            w = group_block(kc, blk)
                            blk += np.uint64(1)
                            u0, u1 = u64_to_f64(w[0], w[1]), u64_to_f64(w[2], w[3])
                            urem = 2
                        urem -= 1
                        b = u1 if urem == 1 else u0
                        res *= b ** (1.0 / a)
                    break
        out[si * na + ai] = res


@njit(**_JIT)
def poisson(out, rate, highest, kc):
    """``out`` (flat float64, samples x rates) filled with TensorFlow's Poisson samples, in
    doubles: Knuth's product of uniforms below rate 10, Hormann's transformed rejection
    above; output ``i`` (rate-major order) starts at block 256 i, uniforms taken last first."""
    if out.size == 0:
        return
    nr = rate.size
    spr = out.size // nr
    for idx in range(out.size):
        ri = idx // spr
        si = idx - ri * spr
        lam = rate[ri]
        blk = np.uint64(256) * np.uint64(idx)
        urem = 0
        u0 = u1 = 0.0
        if lam < 10.0:
            limit = math.exp(-lam)
            prod = 1.0
            x = 0.0
            while True:
                if urem == 0:
                    w = group_block(kc, blk)
                    blk += np.uint64(1)
                    u0, u1 = u64_to_f64(w[0], w[1]), u64_to_f64(w[2], w[3])
                    urem = 2
                urem -= 1
                prod = prod * (u1 if urem == 1 else u0)
                if prod <= limit and x <= highest:
                    break
                x += 1.0
            out[si * nr + ri] = x
            continue
        log_rate = math.log(lam)
        b = 0.931 + 2.53 * math.sqrt(lam)
        a = -0.059 + 0.02483 * b
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        while True:
            if urem == 0:
                w = group_block(kc, blk)
                blk += np.uint64(1)
                u0, u1 = u64_to_f64(w[0], w[1]), u64_to_f64(w[2], w[3])
                urem = 2
            urem -= 1
            u = (u1 if urem == 1 else u0) - 0.5
            if urem == 0:
                w = group_block(kc, blk)
                blk += np.uint64(1)
                u0, u1 = u64_to_f64(w[0], w[1]), u64_to_f64(w[2], w[3])
                urem = 2
            urem -= 1
            v = u1 if urem == 1 else u0
            us = 0.5 - abs(u)
            k = math.floor((2.0 * a / us + b) * u + lam + 0.43)
            if k > highest:
                continue
            if us >= 0.07 and v <= 0.9277 - 3.6224 / (b - 2.0):
                break
            if k < 0 or (us < 0.013 and v > us):
                continue
            s = math.log(v * inv_alpha / (a / (us * us) + b))
            t = -lam + k * log_rate - math.lgamma(k + 1.0)
            if s <= t:
                break
        out[si * nr + ri] = k


@njit(**_JIT)
def _binomial_inversion(count, prob, kc, blk):
    geom_sum = 0.0
    num_geom = 0
    urem = 0
    u0 = u1 = 0.0
    while True:
        if urem == 0:
            w = group_block(kc, blk)
            blk += np.uint64(1)
            u0, u1 = u64_to_f64(w[0], w[1]), u64_to_f64(w[2], w[3])
            urem = 2
        urem -= 1
        u = u1 if urem == 1 else u0
        geom_sum += math.ceil(math.log(u) / math.log1p(-prob))
        if geom_sum > count:
            break
        num_geom += 1
    return float(num_geom)


_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287])


@njit(**_JIT)
def _stirling_tail(k):
    if k <= 9:
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


@njit(**_JIT)
def _btrs(count, prob, kc, blk):
    stddev = math.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor((count + 1) * prob)
    urem = 0
    u0 = u1 = 0.0
    while True:
        if urem == 0:
            w = group_block(kc, blk)
            blk += np.uint64(1)
            u0, u1 = u64_to_f64(w[0], w[1]), u64_to_f64(w[2], w[3])
            urem = 2
        urem -= 1
        u = u1 if urem == 1 else u0
        if urem == 0:
            w = group_block(kc, blk)
            blk += np.uint64(1)
            u0, u1 = u64_to_f64(w[0], w[1]), u64_to_f64(w[2], w[3])
            urem = 2
        urem -= 1
        v = u1 if urem == 1 else u0
        u = u - 0.5
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + c)
        if us >= 0.07 and v <= v_r:
            return k
        if k < 0 or k > count:
            continue
        v = math.log(v * alpha / (a / (us * us) + b))
        upper = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * math.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * math.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        if v <= upper:
            return k


@njit(**_JIT)
def binomial(out, method, counts, probs, kc):
    """``out`` (flat float64, samples x batch) filled with TensorFlow's binomial samples.
    ``method`` per batch member (decided in the parameters' precision, ``binomial_plan``):
    0 zero, 1 all, 2/3 BTRS/inversion on p, 4/5 count minus BTRS/inversion on 1 - p, 6 NaN;
    ``counts``/``probs`` float64 (for 4/5 ``probs`` holds 1 - p as TensorFlow rounds it)."""
    if out.size == 0:
        return
    nb = counts.size
    spb = out.size // nb
    for idx in range(out.size):
        bi = idx // spb
        si = idx - bi * spb
        m = method[bi]
        n = counts[bi]
        p = probs[bi]
        if m == 0:
            res = 0.0
        elif m == 1:
            res = n
        elif m == 2:
            res = _btrs(n, p, kc, np.uint64(256) * np.uint64(idx))
        elif m == 3:
            res = _binomial_inversion(n, p, kc, np.uint64(42) * np.uint64(idx))
        elif m == 4:
            res = n - _btrs(n, p, kc, np.uint64(256) * np.uint64(idx))
        elif m == 5:
            res = n - _binomial_inversion(n, p, kc, np.uint64(42) * np.uint64(idx))
        else:
            res = np.nan
        out[si * nb + bi] = res

@njit(**_JIT)
def binomial_plan(method, p, counts, probs, consts):
    """The method of each batch member (into ``method``) and the probability it samples with
    (into ``p``), decided as TensorFlow's kernel does in the parameters' own precision:
    ``counts``, ``probs`` and ``consts`` ([1, 10, 0.5]) share their dtype. Its ``py_func``
    runs the same steps on float16 in NumPy, which rounds as Eigen's half does."""
    one, ten, half = consts[0], consts[1], consts[2]
    for i in range(counts.size):
        n = counts[i]
        pr = probs[i]
        if np.float64(n) <= 0.0 or pr <= consts[0] - consts[0]:
            method[i] = 0
        elif pr >= one:
            method[i] = 1
        elif pr <= half:
            method[i] = 2 if n * pr >= ten else 3
            p[i] = pr
        elif pr > half:
            q = one - pr
            method[i] = 4 if n * q >= ten else 5
            p[i] = q
        else:
            method[i] = 6


@njit(**_JIT)
def _fill(buf, kc, blk, normal):
    """``buf`` (float32 or float64, 4 or 2 values) filled from block ``blk``: TensorFlow's
    Normal or Uniform distribution of the buffer's precision."""
    w = group_block(kc, blk)
    if buf.itemsize == 8:
        if normal:
            a, b = box_muller_f64(w[0], w[1], w[2], w[3])
            buf[0], buf[1] = a, b
        else:
            buf[0], buf[1] = u64_to_f64(w[0], w[1]), u64_to_f64(w[2], w[3])
    elif normal:
        a, b = box_muller_f32(w[0], w[1])
        c, d = box_muller_f32(w[2], w[3])
        buf[0], buf[1], buf[2], buf[3] = a, b, c, d
    else:
        for j in range(4):
            buf[j] = u32_to_f32(w[j])


def truncated_normal_cost(itemsize):
    """TensorFlow's cost estimate per output of its truncated normal kernel (Eigen's op costs
    on an AVX build without FMA: sqrt 8 or 28, exp 34 or 51 cycles for float32 or float64)."""
    sqrt_cost, exp_cost = (28, 51) if itemsize == 8 else (8, 34)
    uniform = 10 + 3                     # PhiloxRandom::kElementCost + Uniform's
    init = 2 * 2 + 2 + sqrt_cost + 4 + exp_cost + 1
    rejection = 2 * uniform + 7 + exp_cost
    return init + 2 * rejection


@njit(**_JIT)
def parameterized_truncated_normal(out, means, stddevs, minvals, maxvals, consts, starts, kc):
    """``out`` (flat float32/float64, samples x batch) filled as TensorFlow's
    ``TruncatedNormalFunctorV2`` does, in the output's precision: per batch member a normal
    rejection sampler, a uniform one or an exponential one, drawing from one stream of blocks
    per shard (``starts``: ``shard_starts`` of ``truncated_normal_cost``), which starts at
    block ceil(2000 start / values per block). ``consts`` holds 0, 0.5, 1.3, 2, 4 in the
    output's dtype."""
    zero, half, k13, two, four = consts[0], consts[1], consts[2], consts[3], consts[4]
    if out.size == 0:
        return
    nb = means.size
    spb = out.size // nb
    size = 2 if out.itemsize == 8 else 4
    buf = np.empty(4, out.dtype)
    ubuf = np.empty(4, out.dtype)
    z = np.empty(4, out.dtype)
    g = np.empty(4, out.dtype)
    for k in range(starts.size):
        start = starts[k]
        limit = starts[k + 1] if k + 1 < starts.size else out.size
        blk = np.uint64((start * 2 * 1000 + size - 1) // size)
        idx = start
        while idx < limit:
            bi = idx // spb
            si = idx - bi * spb
            mean, sd, lo, hi = means[bi], stddevs[bi], minvals[bi], maxvals[bi]
            if not (sd > zero and lo < hi and (np.isfinite(lo) or np.isfinite(hi))):
                raise ValueError("Invalid parameters")
            if (np.isinf(lo) and lo < zero) or hi < mean:
                lo, hi = hi, lo
                sd = -sd
            nmin = (lo - mean) / sd
            nmax = (hi - mean) / sd
            root = math.sqrt(nmin * nmin + four)
            cutoff = two * math.exp(half + (nmin * (nmin - root)) / four) / (nmin + root)
            diff = nmax - nmin
            iters = 0
            if (nmin < -k13 and nmax >= zero) or (nmax > k13 and nmin <= zero):
                while si < spb and idx < limit:
                    _fill(buf, kc, blk, True)
                    blk += np.uint64(1)
                    for i in range(size):
                        if buf[i] >= nmin and buf[i] <= nmax:
                            out[si * nb + bi] = buf[i] * sd + mean
                            si += 1
                            idx += 1
                            if si >= spb or idx >= limit:
                                break
                            iters = 0
                        else:
                            iters += 1
                            if iters > 1000:
                                raise ValueError("TruncatedNormal randn rejection sampler "
                                                 "failed to accept a sample.")
            elif diff < cutoff:
                plus = zero if nmin < zero else nmin * nmin
                while si < spb and idx < limit:
                    _fill(buf, kc, blk, False)
                    blk += np.uint64(1)
                    for i in range(size):
                        z[i] = buf[i] * diff + nmin
                        g[i] = (plus - z[i] * z[i]) / two
                    _fill(ubuf, kc, blk, False)
                    blk += np.uint64(1)
                    for i in range(size):
                        accept = ubuf[i] <= math.exp(g[i])
                        if accept or iters + 1 >= 1000:
                            if not accept:
                                raise ValueError("TruncatedNormal uniform rejection sampler "
                                                 "failed to accept a sample.")
                            out[si * nb + bi] = z[i] * sd + mean
                            si += 1
                            idx += 1
                            if si >= spb or idx >= limit:
                                break
                            iters = 0
                        else:
                            iters += 1
            else:
                alpha = (nmin + math.sqrt(nmin * nmin + four)) / two
                while si < spb and idx < limit:
                    _fill(buf, kc, blk, False)
                    blk += np.uint64(1)
                    i = 0
                    while i < size:
                        zz = -math.log(buf[i]) / alpha + nmin
                        x = alpha - zz if nmin < alpha else nmin - alpha
                        gg = math.exp(-x * x / two)
                        u = buf[i + 1]
                        i += 2
                        accept = u <= gg and zz < nmax
                        if accept or iters + 1 >= 1000:
                            if not accept:
                                raise ValueError("TruncatedNormal exponential distribution "
                                                 "rejection sampler failed to accept a sample.")
                            out[si * nb + bi] = zz * sd + mean
                            si += 1
                            idx += 1
                            if si >= spb or idx >= limit:
                                break
                            iters = 0
                        else:
                            iters += 1


_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(**_JIT)
def _rot(x, r, width, mask, left):
    r, width = np.uint64(r), np.uint64(width)
    if left:
        return ((x << r) | (x >> (width - r))) & mask
    return ((x >> r) | (x << (width - r))) & mask


@njit(**_JIT)
def _simon_f(x, width, mask):
    return (_rot(x, 1, width, mask, True) & _rot(x, 8, width, mask, True)) ^ \
        _rot(x, 2, width, mask, True)


@njit(**_JIT)
def index_shuffle(out, index, seed, max_index, rounds, signed):
    """``out`` (flat uint64) = TensorFlow's ``random_index_shuffle`` of each index: the Simon
    cipher with TensorFlow's key schedule on blocks of 2W bits (W from ``max_index``, at least
    8), applied again until the value is at most ``max_index`` (cycle walking). ``index``,
    ``max_index`` (uint64; ``signed``: they hold int32/int64 bits) and ``seed`` (uint64 rows
    of 3 words) broadcast from one row."""
    for i in range(out.size):
        idx = index[i if index.size > 1 else 0]
        top = max_index[i if max_index.size > 1 else 0]
        row = i if seed.shape[0] > 1 else 0
        if signed and np.int64(idx) < 0:
            raise ValueError("index must be >= 0")
        if signed and np.int64(top) < 0:
            raise ValueError("max_index must be >= 0")
        if top < idx:
            raise ValueError("max_index must be >= index")
        if top == np.uint64(0):
            out[i] = np.uint64(0)
            continue
        bits = int(math.ceil(math.log2(float(top))))
        bits = max(bits + bits % 2, 16)
        if bits > 64:
            bits = 64
        width = bits // 2
        mask = _M64 >> np.uint64(64 - width)
        keys = np.empty(max(rounds, 3), np.uint64)
        for j in range(3):
            keys[j] = seed[row, j] & np.uint64(0xFFFFFFFF) & mask
        c = np.uint64(0xFFFFFFFC) & mask
        zbits = np.uint64(0x7369F885192C0EF5) & mask
        for j in range(3, rounds):
            keys[j] = c ^ (zbits & np.uint64(1)) ^ keys[j - 3] ^ \
                _rot(keys[j - 1], 3, width, mask, False) ^ _rot(keys[j - 1], 4, width, mask, False)
            zbits = zbits >> np.uint64(1)
        value = idx
        while True:
            left = (value >> np.uint64(width)) & mask
            right = value & mask
            for j in range(0, keys.size - 1, 2):
                left ^= _simon_f(right, width, mask)
                left ^= keys[j]
                right ^= _simon_f(left, width, mask)
                right ^= keys[j + 1]
            value = (left << np.uint64(width)) | right
            if value <= top:
                break
        out[i] = value
