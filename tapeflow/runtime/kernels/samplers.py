"""Kernels of the stateless samplers: TensorFlow's values (runtime/philox_samplers.py)."""
import numpy as np

from .. import philox
from .. import philox_samplers as ps
from ..registry import kernel
from .random import _kc

OPS = ("StatelessMultinomial", "StatelessRandomGammaV3", "StatelessRandomPoisson",
       "StatelessRandomBinomial", "StatelessParameterizedTruncatedNormal", "RandomIndexShuffle")


def seed_kc(seed):
    """The Philox key/counter tuple of a seed of 2 (int32 seeds sign-extended, as TF's)."""
    s = np.asarray(seed).astype(np.int64).view(np.uint64)
    return philox.key_counter(s[0], s[1])


def highest(np_dtype):
    """The largest value of a dtype, as a double (TensorFlow's ``NumTraits<U>::highest()``)."""
    dt = np.dtype(np_dtype)
    return float(np.finfo(dt).max if dt.kind == "f" else np.iinfo(dt).max)


@kernel("StatelessMultinomial")
def _multinomial(logits, seed, num_samples, output_dtype, threads):
    logits = np.asarray(logits)
    out = np.empty((logits.shape[0], num_samples), output_dtype.np)
    if out.size:
        starts = ps.multinomial_starts(logits.shape[0], logits.shape[1], num_samples, threads)
        ps.multinomial(out, logits.astype(np.float64), starts, seed_kc(seed))
    return out


@kernel("StatelessRandomGammaV3")
def _gamma(key, counter, alpha, shape):
    alpha = np.asarray(alpha)
    out = np.empty(int(np.prod(shape)))
    if out.size:
        if alpha.size == 0:
            raise ValueError(f"Input alpha should have non-zero element count, got: 0")
        ps.gamma(out, alpha.astype(np.float64).ravel(), _kc(key, counter))
    return out.astype(alpha.dtype).reshape(shape)


@kernel("StatelessRandomPoisson")
def _poisson(seed, lam, shape, dtype):
    out = np.empty(int(np.prod(shape)))
    if out.size:
        ps.poisson(out, np.asarray(lam).astype(np.float64).ravel(), highest(dtype.np),
                   seed_kc(seed))
    return out.astype(dtype.np).reshape(shape)


def binomial_plan(counts, probs):
    counts, probs = np.asarray(counts).ravel(), np.asarray(probs).ravel()
    method, p = np.empty(counts.size, np.int8), np.zeros(counts.size)
    consts = np.array([1, 10, 0.5], probs.dtype)
    plan = ps.binomial_plan.py_func if probs.dtype == np.float16 else ps.binomial_plan
    plan(method, p, counts, probs, consts)
    return method, counts.astype(np.float64), p


@kernel("StatelessRandomBinomial")
def _binomial(seed, counts, probs, shape, dtype):
    out = np.empty(int(np.prod(shape)))
    if out.size:
        ps.binomial(out, *binomial_plan(counts, probs), seed_kc(seed))
    with np.errstate(invalid="ignore"):
        return out.astype(dtype.np).reshape(shape)


def truncated_normal_consts(np_dtype):
    return np.array([0, 0.5, 1.3, 2, 4], np_dtype)


@kernel("StatelessParameterizedTruncatedNormal")
def _truncated_normal(seed, means, stddevs, minvals, maxvals, shape, threads):
    dt = np.asarray(means).dtype
    out = np.empty(int(np.prod(shape)), dt)
    if out.size:
        params = [np.ascontiguousarray(np.asarray(x)).ravel() for x in
                  (means, stddevs, minvals, maxvals)]
        starts = ps.shard_starts(out.size, ps.truncated_normal_cost(dt.itemsize), threads)
        ps.parameterized_truncated_normal(out, *params, truncated_normal_consts(dt), starts,
                                          seed_kc(seed))
    return out.reshape(shape)


@kernel("RandomIndexShuffle")
def _index_shuffle(index, seed, max_index, rounds):
    index, seed, max_index = np.asarray(index), np.asarray(seed), np.asarray(max_index)
    words = seed.astype(np.int64 if seed.dtype.kind == "i" else np.uint64).view(np.uint64)
    n = max(index.size, max_index.size, words.size // 3)
    for i in range(n):
        idx, top = index.flat[i % index.size], max_index.flat[i % max_index.size]
        if idx < 0:
            raise ValueError(f"index must be >= 0 but was {idx}")
        if top < 0:
            raise ValueError(f"max_index must be >= 0 but was {top}")
        if top < idx:
            raise ValueError(f"max_index must be >= index, but {top} < {idx}")
    out = np.empty(n, np.uint64)
    ps.index_shuffle(out, index.astype(np.uint64).ravel(), words.reshape(-1, 3),
                     max_index.astype(np.uint64).ravel(), rounds, index.dtype.kind == "i")
    out = out.astype(index.dtype)
    return out.reshape(()) if index.ndim == 0 and seed.ndim == 1 and max_index.ndim == 0 else out
