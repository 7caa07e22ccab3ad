"""Kernels of the stateless random ops: TensorFlow's Philox values (runtime/philox.py)."""
import numpy as np

from .. import philox
from ..registry import kernel

OPS = ("StatelessRandomGetKeyCounter", "StatelessRandomUniformV2", "StatelessRandomNormalV2",
       "StatelessTruncatedNormalV2", "StatelessRandomUniformIntV2",
       "StatelessRandomUniformFullIntV2")


@kernel("StatelessRandomGetKeyCounter")
def _get_key_counter(seed):
    s = np.asarray(seed).astype(np.int64).view(np.uint64)   # int32 seeds sign-extended
    k0, k1, c0, c1, c2, c3 = (np.uint64(w) for w in philox.key_counter(s[0], s[1]))
    sh = np.uint64(32)
    return (np.array([k0 | (k1 << sh)], np.uint64),
            np.array([c0 | (c1 << sh), c2 | (c3 << sh)], np.uint64))


def _kc(key, counter):
    return philox.from_words(np.asarray(key).view(np.uint64), np.asarray(counter).view(np.uint64))


def _fill(fn, key, counter, shape, dtype):
    n = int(np.prod(shape))
    kc = _kc(key, counter)
    if dtype.np == np.float16:
        if fn is philox.uniform:
            return philox.uniform_half(n, kc).reshape(shape)
        out = np.empty(n, np.float32)
        fn(out, kc)
        return out.astype(np.float16).reshape(shape)
    out = np.empty(n, dtype.np)
    fn(out, kc)
    return out.reshape(shape)


@kernel("StatelessRandomUniformV2")
def _uniform(key, counter, shape, dtype):
    return _fill(philox.uniform, key, counter, shape, dtype)


@kernel("StatelessRandomNormalV2")
def _normal(key, counter, shape, dtype):
    return _fill(philox.normal, key, counter, shape, dtype)


@kernel("StatelessTruncatedNormalV2")
def _truncated_normal(key, counter, shape, dtype):
    return _fill(philox.truncated_normal, key, counter, shape, dtype)


@kernel("StatelessRandomUniformIntV2")
def _uniform_int(key, counter, minval, maxval, shape):
    lo, hi = int(minval), int(maxval)
    if lo >= hi:
        raise ValueError(f"Need minval < maxval, got {lo} >= {hi}")
    out = np.empty(int(np.prod(shape)), np.asarray(minval).dtype)
    philox.uniform_int(out, _kc(key, counter), np.int64(lo), np.int64(hi))
    return out.reshape(shape)


@kernel("StatelessRandomUniformFullIntV2")
def _full_int(key, counter, shape, dtype):
    unsigned = np.uint32 if dtype.np.itemsize == 4 else np.uint64
    out = np.empty(int(np.prod(shape)), unsigned)
    philox.full_int(out, _kc(key, counter))
    return out.view(dtype.np).reshape(shape)
