"""What runs on a Dask worker: one chunk through the loaded program, and the tree's sums.

Everything here is a module-level function, so Dask sends a reference (``module.name``),
not a pickled closure; the program itself arrives as data (``program.load_program``).
Every result is a tuple of NumPy arrays. A leaf multiplies its results by the chunk's weight
(1 for SUM, rows/total for MEAN) so the tree only adds; each sum adds its children in chunk
order, so the result depends on the chunking alone, never on which worker ran what.
"""
import numpy as np

import tapeflow as tf

from .errors import ChunkError
from . import program as _program
from .program import load_program


def check_chunk(meta, arrays):
    """Each array of chunk ``meta`` must have the rows and the trailing shape and dtype the
    program was built for; the error names the chunk, its rows and the argument."""
    index, start, stop, specs = meta["index"], meta["start"], meta["stop"], meta["specs"]
    if len(arrays) != len(specs):
        raise ChunkError(f"chunk {index} (rows {start}:{stop}) has {len(arrays)} arrays; "
                         f"the program takes {len(specs)} data arguments")
    out = []
    for a, (name, tail, dtype) in zip(arrays, specs, strict=True):
        got = np.asarray(a)
        want = (stop - start, *tail)
        if got.shape != want or got.dtype != np.dtype(dtype):
            raise ChunkError(
                f"chunk {index} (rows {start}:{stop}) of data argument {name!r}: expected "
                f"{np.dtype(dtype).name}{list(want)}, got {got.dtype.name}{list(got.shape)}")
        out.append(got)
    return out


def _constants(arrays):
    return [tf.constant(a) for a in arrays]


def _scaled(arrays, weight):
    if weight == 1.0:
        return tuple(arrays)
    return tuple(np.asarray(a * np.asarray(weight, a.dtype)) for a in arrays)


def _grads_or_zeros(grads, params):
    """TensorFlow's None for an unconnected parameter becomes zeros: a sum needs arrays."""
    return [np.zeros_like(p.numpy()) if g is None else g.numpy()
            for g, p in zip(grads, params, strict=True)]


def call_chunk(program, params, meta, *arrays):
    """The program's outputs on one chunk, flattened to a tuple of arrays."""
    fn = load_program(*program)
    data = check_chunk(meta, arrays)
    out = fn(_constants(params), _constants(data))
    leaves = list(out) if isinstance(out, (list, tuple)) else [out]
    return tuple(np.asarray(t.numpy()) for t in leaves)


def value_and_grad_chunk(program, params, meta, weight, *arrays):
    """(value, d value / d params...) on one chunk, times ``weight``."""
    fn = load_program(*program)
    data = check_chunk(meta, arrays)
    ps = _constants(params)
    with tf.GradientTape() as tape:
        tape.watch(ps)
        value = fn(ps, _constants(data))
    grads = tape.gradient(value, ps)
    return _scaled([value.numpy(), *_grads_or_zeros(grads, ps)], weight)


def hvp_chunk(program, params, vector, meta, weight, *arrays):
    """The Hessian of the value w.r.t. params, times ``vector``, on one chunk (nested tapes
    over the loaded program, whose backward program is itself differentiable)."""
    fn = load_program(*program)
    data = check_chunk(meta, arrays)
    ps, vs = _constants(params), _constants(vector)
    with tf.GradientTape() as outer:
        outer.watch(ps)
        with tf.GradientTape() as inner:
            inner.watch(ps)
            value = fn(ps, _constants(data))
        grads = inner.gradient(value, ps)
        dot = tf.add_n([tf.reduce_sum(g * v) for g, v in zip(grads, vs, strict=True)
                        if g is not None]) if any(g is not None for g in grads) else None
    hv = outer.gradient(dot, ps) if dot is not None else [None] * len(ps)
    return _scaled(_grads_or_zeros(hv, ps), weight)


def tree_sum(weights, *parts):
    """Sum of ``weights[i] * parts[i]`` (weights None: plain sum), left to right."""
    total = None
    for i, part in enumerate(parts):
        if weights is not None:
            part = _scaled(part, weights[i])
        if total is None:
            total = tuple(np.array(a, copy=True) for a in part)
        else:
            if len(part) != len(total):
                raise ValueError("tapeflow.distribute: per-replica values of different "
                                 "structure cannot be reduced")
            total = tuple(t + a for t, a in zip(total, part, strict=True))
    return total


def loaded_programs():
    """(programs loaded in this process, their keys): for tests and the dashboard's curious."""
    return _program.loads["count"], _program.cached_keys()
