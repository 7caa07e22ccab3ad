"""The stateless samplers compiled: the program calls the same Numba functions the NumPy kernels
call (runtime/philox_samplers.py, as ``rt.philox_*``), so compiled and eager values are the same
bits. float16 is not compiled (Numba has no float16): such a program runs on the interpreter."""
import numpy as np

from ...ir.shapes import num_elements
from ...runtime import philox_samplers as ps
from ...runtime.kernels.samplers import highest
from ..emitter import Unsupported, np_type, shape_lit
from .registry import stmt_op


def _no_half(node, *values):
    if any(v.aval.dtype.name == "float16" for v in values):
        raise Unsupported(f"{node.op} in float16 (Numba has no float16)")


def _flat(em, v, dtype=None):
    """A 1-D contiguous copy of ``v`` (a scalar becomes one element), cast to ``dtype``."""
    ref = em.ref(v)
    arr = f"np.array([{ref}])" if not v.aval.shape else f"np.ascontiguousarray({ref}).reshape(-1)"
    return f"{arr}.astype({dtype or np_type(v.aval.dtype)})"


def _seed_kc(em, seed):
    kc = em.fresh("kc")
    ref = em.ref(seed)
    em.line(f"{kc} = rt.philox_key_counter(np.uint64(np.int64({ref}[0])), "
            f"np.uint64(np.int64({ref}[1])))")
    return kc


def _result(em, node, buf, dtype):
    y = node.outputs[0]
    cast = f"{buf}.astype({np_type(dtype)})"
    if not y.aval.shape:
        em.define(y, f"{cast}[0]")
    else:
        em.define(y, f"{cast}.reshape({shape_lit(y.aval.shape)})")


def _starts(starts):
    return f"np.array([{', '.join(str(int(x)) for x in starts)}], dtype=np.int64)"


@stmt_op("StatelessMultinomial")
def _multinomial(em, node, num_samples, output_dtype, threads):
    _no_half(node, node.inputs[0])
    logits, seed = node.inputs
    kc = _seed_kc(em, seed)
    buf = em.fresh("r")
    em.line(f"{buf} = np.zeros(({logits.aval.shape[0]}, {num_samples}), "
            f"dtype={np_type(output_dtype)})")
    batch, classes = logits.aval.shape
    starts = _starts(ps.multinomial_starts(batch, classes, num_samples, threads) if batch and
                     classes and num_samples else [0])
    em.line(f"rt.philox_multinomial({buf}, np.ascontiguousarray({em.ref(logits)})"
            f".astype(np.float64), {starts}, {kc})")
    em.define(node.outputs[0], buf)


@stmt_op("StatelessRandomGammaV3")
def _gamma(em, node, shape):
    key, counter, alpha = node.inputs
    _no_half(node, alpha)
    buf = em.fresh("r")
    em.line(f"{buf} = np.empty({num_elements(shape)}, dtype=np.float64)")
    em.line(f"rt.philox_gamma({buf}, {_flat(em, alpha, 'np.float64')}, rt.philox_from_words("
            f"{em.ref(key)}.view(np.uint64), {em.ref(counter)}.view(np.uint64)))")
    _result(em, node, buf, alpha.aval.dtype)


@stmt_op("StatelessRandomPoisson")
def _poisson(em, node, shape, dtype):
    seed, lam = node.inputs
    _no_half(node, lam, node.outputs[0])
    kc = _seed_kc(em, seed)
    buf = em.fresh("r")
    em.line(f"{buf} = np.empty({num_elements(shape)}, dtype=np.float64)")
    em.line(f"rt.philox_poisson({buf}, {_flat(em, lam, 'np.float64')}, "
            f"{highest(dtype.np)!r}, {kc})")
    _result(em, node, buf, dtype)


@stmt_op("StatelessRandomBinomial")
def _binomial(em, node, shape, dtype):
    seed, counts, probs = node.inputs
    _no_half(node, counts, node.outputs[0])
    kc = _seed_kc(em, seed)
    t = np_type(counts.aval.dtype)
    n, p, meth, pp, buf = (em.fresh(x) for x in ("n", "p", "m", "q", "r"))
    em.line(f"{n} = {_flat(em, counts)}")
    em.line(f"{p} = {_flat(em, probs)}")
    em.line(f"{meth} = np.zeros({n}.size, dtype=np.int8)")
    em.line(f"{pp} = np.zeros({n}.size, dtype=np.float64)")
    em.line(f"rt.philox_binomial_plan({meth}, {pp}, {n}, {p}, "
            f"np.array([1.0, 10.0, 0.5], dtype={t}))")
    em.line(f"{buf} = np.empty({num_elements(shape)}, dtype=np.float64)")
    em.line(f"rt.philox_binomial({buf}, {meth}, {n}.astype(np.float64), {pp}, {kc})")
    _result(em, node, buf, dtype)


@stmt_op("StatelessParameterizedTruncatedNormal")
def _truncated_normal(em, node, shape, threads):
    seed, *params = node.inputs
    _no_half(node, *params)
    t = np_type(params[0].aval.dtype)
    kc = _seed_kc(em, seed)
    buf = em.fresh("r")
    em.line(f"{buf} = np.empty({num_elements(shape)}, dtype={t})")
    flats = ", ".join(_flat(em, v) for v in params)
    cost = ps.truncated_normal_cost(np.dtype(params[0].aval.dtype.np).itemsize)
    starts = _starts(ps.shard_starts(num_elements(shape), cost, threads))
    em.line(f"rt.philox_parameterized_truncated_normal({buf}, {flats}, "
            f"np.array([0.0, 0.5, 1.3, 2.0, 4.0], dtype={t}), {starts}, {kc})")
    _result(em, node, buf, params[0].aval.dtype)


@stmt_op("RandomIndexShuffle")
def _index_shuffle(em, node, rounds):
    index, seed, max_index = node.inputs
    n = 1 if not node.outputs[0].aval.shape else node.outputs[0].aval.shape[0]
    buf = em.fresh("r")
    em.line(f"{buf} = np.empty({n}, dtype=np.uint64)")
    em.line(f"rt.philox_index_shuffle({buf}, {_flat(em, index, 'np.uint64')}, "
            f"{_flat(em, seed, 'np.uint64')}.reshape(-1, 3), "
            f"{_flat(em, max_index, 'np.uint64')}, {rounds}, "
            f"{index.aval.dtype.name in ('int32', 'int64')})")
    _result(em, node, buf, index.aval.dtype)
