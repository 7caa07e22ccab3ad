"""TensorFlow's stateless random numbers, bit for bit: Philox4x32-10 and its conversions.

A seed ``(s0, s1)`` becomes a Philox key and counter as TensorFlow's ``GenerateKey`` makes
them (one Philox block of the seed under a fixed key). Output group ``g`` (4 float32, 2
float64, ...) is the Philox block of counter + ``g``; a truncated normal group owns 256
blocks and draws from them one 32-bit word at a time until enough values fall in (-2, 2).
Floats come from the mantissa bits (``Uint32ToFloat``: [1, 2) minus 1), normals from
TensorFlow's Box-Muller in the output's precision, with libm's ``logf``/``sinf``/``cosf``
(Numba calls the C library, as TensorFlow's kernels do), so the values are TensorFlow's.

The NumPy kernels and the compiled programs call the same functions (Numba ``njit``).
"""
import math

import numpy as np
from numba import njit

_JIT = dict(cache=True, nogil=True)
_MASK = np.uint64(0xFFFFFFFF)


@njit(**_JIT)
def block(c0, c1, c2, c3, k0, k1):
    """One Philox4x32-10 block: 4 words (uint64 holding 32 bits each)."""
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * c0
        p1 = np.uint64(0xCD9E8D57) * c2
        hi0, lo0 = p0 >> np.uint64(32), p0 & _MASK
        hi1, lo1 = p1 >> np.uint64(32), p1 & _MASK
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        k0 = (k0 + np.uint64(0x9E3779B9)) & _MASK
        k1 = (k1 + np.uint64(0xBB67AE85)) & _MASK
    return c0, c1, c2, c3


@njit(**_JIT)
def key_counter(s0, s1):
    """TensorFlow's ``GenerateKey``: the key (2 words) and counter (4 words) of a seed."""
    a, b = np.uint64(s0), np.uint64(s1)
    m0, m1, m2, m3 = block(a & _MASK, a >> np.uint64(32), b & _MASK, b >> np.uint64(32),
                           np.uint64(0x3EC8F720), np.uint64(0x02461E29))
    return m0, m1, np.uint64(0), np.uint64(0), m2, m3


@njit(**_JIT)
def from_words(key, counter):
    """The key/counter tuple of TensorFlow's V2 ops: ``key`` one 64-bit word, ``counter``
    two (low word first; int64 or uint64 arrays, their bits)."""
    k = np.uint64(key[0])
    c = np.uint64(counter[0])
    d = np.uint64(counter[1])
    return (k & _MASK, k >> np.uint64(32), c & _MASK, c >> np.uint64(32), d & _MASK,
            d >> np.uint64(32))


@njit(**_JIT)
def group_block(kc, g):
    """The Philox block of output group ``g`` (counter + ``g``, a 128-bit add) of the
    key/counter tuple ``kc`` (``key_counter`` or ``from_words``)."""
    k0, k1, c0, c1, c2, c3 = (np.uint64(kc[0]), np.uint64(kc[1]), np.uint64(kc[2]),
                              np.uint64(kc[3]), np.uint64(kc[4]), np.uint64(kc[5]))
    g = np.uint64(g)
    t = c0 + (g & _MASK)
    c0, carry = t & _MASK, t >> np.uint64(32)
    t = c1 + (g >> np.uint64(32)) + carry
    c1, carry = t & _MASK, t >> np.uint64(32)
    t = c2 + carry
    c2, carry = t & _MASK, t >> np.uint64(32)
    c3 = (c3 + carry) & _MASK
    return block(c0, c1, c2, c3, k0, k1)


@njit(**_JIT)
def u32_to_f32(x):
    return np.uint32(np.uint32(127 << 23) | (np.uint32(x) & np.uint32(0x7FFFFF))) \
        .view(np.float32) - np.float32(1.0)


@njit(**_JIT)
def u64_to_f64(hi, lo):
    man = ((hi << np.uint64(32)) | lo) & np.uint64((1 << 52) - 1)
    return np.uint64(np.uint64(1023 << 52) | man).view(np.float64) - 1.0


@njit(**_JIT)
def box_muller_f32(x0, x1):
    u1 = u32_to_f32(x0)
    if u1 < np.float32(1.0e-7):
        u1 = np.float32(1.0e-7)
    v1 = np.float32(2.0 * math.pi * np.float64(u32_to_f32(x1)))   # 2.0f * M_PI: a double
    u2 = np.float32(math.sqrt(np.float32(-2.0) * np.float32(math.log(u1))))
    return np.float32(math.sin(v1)) * u2, np.float32(math.cos(v1)) * u2


@njit(**_JIT)
def box_muller_f64(x0, x1, x2, x3):
    u1 = u64_to_f64(x0, x1)
    if u1 < 1.0e-7:
        u1 = 1.0e-7
    v1 = 2.0 * math.pi * u64_to_f64(x2, x3)
    u2 = math.sqrt(-2.0 * math.log(u1))
    return math.sin(v1) * u2, math.cos(v1) * u2


@njit(**_JIT)
def words(out, kc):
    """``out`` (flat uint32) filled with the Philox words of groups 0, 1, ... in order."""
    n = out.size
    for g in range((n + 3) // 4):
        w = group_block(kc, g)
        for j in range(4):
            if 4 * g + j < n:
                out[4 * g + j] = w[j]


@njit(**_JIT)
def uniform(out, kc):
    """``out`` (flat float32/float64) filled with TensorFlow's stateless uniform [0, 1)."""
    n = out.size
    if out.itemsize == 8:
        for g in range((n + 1) // 2):
            w = group_block(kc, g)
            for j in range(2):
                if 2 * g + j < n:
                    out[2 * g + j] = u64_to_f64(w[2 * j], w[2 * j + 1])
    else:
        for g in range((n + 3) // 4):
            w = group_block(kc, g)
            for j in range(4):
                if 4 * g + j < n:
                    out[4 * g + j] = u32_to_f32(w[j])


def uniform_half(n, kc):
    """TensorFlow's float16 uniform (``Uint16ToHalf``: the low 10 bits of each word)."""
    w = np.empty(n, np.uint32)
    words(w, kc)
    bits = (np.uint16(15 << 10) | (w & np.uint32(0x3FF)).astype(np.uint16))
    return bits.view(np.float16) - np.float16(1.0)


@njit(**_JIT)
def normal(out, kc):
    """``out`` (flat float) filled with TensorFlow's stateless standard normal."""
    n = out.size
    if out.itemsize == 8:
        for g in range((n + 1) // 2):
            w = group_block(kc, g)
            a, b = box_muller_f64(w[0], w[1], w[2], w[3])
            out[2 * g] = a
            if 2 * g + 1 < n:
                out[2 * g + 1] = b
    else:
        for g in range((n + 3) // 4):
            w = group_block(kc, g)
            for j in range(2):
                a, b = box_muller_f32(w[2 * j], w[2 * j + 1])
                if 4 * g + 2 * j < n:
                    out[4 * g + 2 * j] = a
                if 4 * g + 2 * j + 1 < n:
                    out[4 * g + 2 * j + 1] = b


@njit(**_JIT)
def truncated_normal(out, kc):
    """``out`` filled with TensorFlow's stateless normal truncated to (-2, 2): each group of
    4 (float32) or 2 (float64) values draws from its own 256 or 128 Philox blocks."""
    n = out.size
    wide = out.itemsize == 8
    size = 2 if wide else 4
    per_group = 128 if wide else 256
    for g in range((n + size - 1) // size):
        base = g * per_group
        got = 0
        blk = 0
        w = group_block(kc, base)
        pos = 0
        while got < size:
            words = np.zeros(4, np.uint64)
            for k in range(4 if wide else 2):
                if pos == 4:
                    blk += 1
                    w = group_block(kc, base + blk)
                    pos = 0
                words[k] = w[pos]
                pos += 1
            if wide:
                a, b = box_muller_f64(words[0], words[1], words[2], words[3])
            else:
                a, b = box_muller_f32(words[0], words[1])
            for v in (a, b):
                if got < size and abs(v) < 2.0:
                    if g * size + got < n:
                        out[g * size + got] = v
                    got += 1


@njit(**_JIT)
def uniform_int(out, kc, lo, hi):
    """``out`` (flat int32/int64) filled with TensorFlow's stateless uniform ints in
    [lo, hi): ``lo + bits % (hi - lo)``, 32 bits per int32 and 64 per int64."""
    n = out.size
    rng = np.uint64(hi - lo)
    if out.itemsize == 8:
        for g in range((n + 1) // 2):
            w = group_block(kc, g)
            for j in range(2):
                if 2 * g + j < n:
                    bits = w[2 * j] | (w[2 * j + 1] << np.uint64(32))
                    out[2 * g + j] = lo + np.int64(bits % rng)
    else:
        for g in range((n + 3) // 4):
            w = group_block(kc, g)
            for j in range(4):
                if 4 * g + j < n:
                    out[4 * g + j] = lo + np.int64(w[j] % rng)


@njit(**_JIT)
def full_int(out, kc):
    """``out`` (flat int32/int64/uint32/uint64) filled with whole Philox words (two per
    64-bit value, low word first): TensorFlow's ``UniformFullIntDistribution``."""
    n = out.size
    if out.itemsize == 8:
        for g in range((n + 1) // 2):
            w = group_block(kc, g)
            for j in range(2):
                if 2 * g + j < n:
                    out[2 * g + j] = w[2 * j] | (w[2 * j + 1] << np.uint64(32))
    else:
        for g in range((n + 3) // 4):
            w = group_block(kc, g)
            for j in range(4):
                if 4 * g + j < n:
                    out[4 * g + j] = np.uint32(w[j])
