"""What runs on a Dask worker: one chunk through the loaded program, and the tree's sums.

Everything here is a module-level function, so Dask sends a reference (``module.name``),
not a pickled closure; the program itself arrives as data (``program.load_program``).
Every result is a tuple of NumPy arrays. A leaf multiplies its results by the chunk's weight
(1 for SUM, rows/total for MEAN) so the tree only adds; each sum adds its children in chunk
order, so the result depends on the chunking alone, never on which worker ran what.
"""
import numpy as np

import tapeflow as tf
from tapeflow.runtime.tensor import wrap

from .errors import ChunkError
from . import shipped as _program
from . import tree
from .shipped import load_program


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
    """Tensors over the chunk's own memory: a read-only view each, no copy (``tf.constant``
    copies, 8 ms of a 30 ms W10 chunk). Dask holds the arrays and no task writes to them."""
    return [wrap(np.asarray(a).view()) for a in arrays]


def _scaled(arrays, weight):
    if weight == 1.0:
        return tuple(arrays)
    return tuple(np.asarray(a * np.asarray(weight, a.dtype)) for a in arrays)


def program_value(key, files):
    """The program's travelling form, loaded here once on the way (a bad program fails now)."""
    load_program(key, files)
    return key, files


def call_chunk(program, params, meta, *arrays):
    """The program's outputs on one chunk, flattened to a tuple of arrays."""
    fn = load_program(*program)
    data = check_chunk(meta, arrays)
    out = fn(_constants(params), _constants(data))
    leaves = list(out) if isinstance(out, (list, tuple)) else [out]
    return tuple(np.asarray(t.numpy()) for t in leaves)


def _python_function(fn, kind):
    """What a chunk runs for ``kind`` ("grad", "gradient", "hvp", or ("jacobian", source)),
    around the
    loaded program ``fn``: our own ``tapeflow.function`` (the tape inside, the loaded program
    inlined), so a chunk runs one compiled program instead of a forward and a backward
    program and the tape's bookkeeping between them."""
    def value_and_grad(params, data):
        with tf.GradientTape() as tape:
            tape.watch(params)
            value = fn(params, data)
        grads = tape.gradient(value, params)
        return value, [tf.zeros_like(p) if g is None else tf.convert_to_tensor(g)
                       for g, p in zip(grads, params, strict=True)]

    def gradient(params, data):
        return value_and_grad(params, data)[1]

    def hvp(params, vector, data):
        with tf.GradientTape() as outer:
            outer.watch(params)
            with tf.GradientTape() as inner:
                inner.watch(params)
                value = fn(params, data)
            grads = inner.gradient(value, params)
            terms = [tf.reduce_sum(g * v) for g, v in zip(grads, vector, strict=True)
                     if g is not None]
            dot = tf.add_n(terms) if terms else None
        hv = outer.gradient(dot, params) if dot is not None else [None] * len(params)
        return [tf.zeros_like(p) if h is None else tf.convert_to_tensor(h)
                for h, p in zip(hv, params, strict=True)]

    def jacobian(params, data):
        with tf.GradientTape() as tape:
            tape.watch(params)
            target = fn(params, data)
        return target, tape.jacobian(target, params,
                                     unconnected_gradients=tf.UnconnectedGradients.ZERO)

    def batch_jacobian(params, data):
        source = kind[1]
        with tf.GradientTape() as tape:
            tape.watch(data[source])
            target = fn(params, data)
        return target, [tape.batch_jacobian(target, data[source])]
    if kind == "grad":
        return value_and_grad
    if kind == "gradient":
        return gradient
    if kind == "hvp":
        return hvp
    return jacobian if kind[1] is None else batch_jacobian


def _row_free(python_fn, kind, params, meta):
    """``python_fn`` as a ``tapeflow.function`` traced once with unknown rows
    (``TensorSpec([None, ...])`` for every data argument), so chunks of any size share one
    trace; if it cannot be traced so (an op whose gradient needs the rows), a plain
    ``tapeflow.function``, traced once per chunk size. Compiled, never tiered: an interpreter
    tier answering the first chunks while Numba compiles would make a step's bits depend on
    timing, and results must be bitwise repeatable."""
    pspecs = [tf.TensorSpec(np.shape(p), tf.as_dtype(np.asarray(p).dtype)) for p in params]
    dspecs = [tf.TensorSpec([None, *tail], tf.as_dtype(np.dtype(dt)))
              for _, tail, dt in meta["specs"]]
    signature = [pspecs, pspecs, dspecs] if kind == "hvp" else [pspecs, dspecs]
    try:
        traced = tf.function(python_fn, input_signature=signature, jit_compile=True)
        traced.get_concrete_function()
        return traced
    except Exception:    # noqa: BLE001 - any trace failure: the per-size trace will say why
        return tf.function(python_fn, jit_compile=True)


_functions = {}


def chunk_function(program, kind, params, meta):
    """The ``tapeflow.function`` running ``kind`` on this worker's chunks of ``program``,
    made once per worker (kept warm across chunks and steps, like the program)."""
    key = (program[0], kind)
    with _program._lock:
        hit = _functions.get(key)
    if hit is None:
        made = _row_free(_python_function(load_program(*program), kind), kind, params, meta)
        with _program._lock:
            hit = _functions.setdefault(key, made)
    return hit


def _leaf(kind, program, params, vector, meta, weight, arrays):
    data = check_chunk(meta, arrays)
    fn = chunk_function(program, kind, params, meta)
    if kind == "hvp":
        out = fn(_constants(params), _constants(vector), _constants(data))
    elif kind == "grad":
        value, grads = fn(_constants(params), _constants(data))
        out = [value, *grads]
    else:
        out = fn(_constants(params), _constants(data))
    return _scaled([t.numpy() for t in out], weight)


def chunk(kind, program, params, vector, meta, weight, *arrays):
    """One chunk's leaf of the reduction tree, times ``weight``: for ``kind`` "grad", (value,
    d value / d params...); "gradient", the gradients alone (the value is not computed);
    "hvp", the Hessian of the value w.r.t. params times ``vector``."""
    return _leaf(kind, program, params, vector, meta, weight, arrays)


def group(kind, program, params, vector, n, k, metas, weights, n_args, *flat):
    """Several chunks held by this worker, one after the other; returns the largest subtrees
    of the reduction tree made of them alone (``tree.complete_nodes``), so only those cross
    the network."""
    leaves = {}
    for c, (meta, weight) in enumerate(zip(metas, weights, strict=True)):
        arrays = flat[c * n_args:(c + 1) * n_args]
        leaves[meta["index"]] = _leaf(kind, program, params, vector, meta, weight, arrays)
    return tree.complete_nodes(leaves, n, k)


def finish(n, k, *parts):
    """The root of the reduction tree from the workers' subtrees."""
    merged = {}
    for p in parts:
        merged.update(p)
    return tree.root(merged, n, k)


def tree_sum(weights, *parts):
    """Sum of ``weights[i] * parts[i]`` (weights None: plain sum), left to right: one node of
    the tree when every chunk is a task of its own."""
    if weights is not None:
        parts = [_scaled(p, w) for p, w in zip(parts, weights, strict=True)]
    return tree.add(parts)


# -- jacobians over rows: blocks, not sums ---------------------------------------------------

def jacobian_blocks(program, params, meta, source, *arrays):
    """Chunk ``meta``'s block of the jacobian (one array per parameter) or of the batch
    jacobian (one array): rows are independent, so the blocks are concatenated in row order
    by the caller, never added."""
    data = check_chunk(meta, arrays)
    fn = chunk_function(program, ("jacobian", source), params, meta)
    target, blocks = fn(_constants(params), _constants(data))
    rows = meta["stop"] - meta["start"]
    if target.shape.rank == 0 or target.shape[0] != rows:
        raise ValueError(
            f"chunk {meta['index']} (rows {meta['start']}:{meta['stop']}): the function "
            f"returned {target.dtype.name}{list(target.shape)}; a jacobian over data rows needs "
            f"one output row per data row ({rows} first)")
    return tuple(np.asarray(b.numpy()) for b in blocks)


def jacobian_group(program, params, source, metas, n_args, *flat):
    """The blocks of several chunks held by this worker, ``{chunk index: blocks}`` (one task
    per worker: Dask's per-task cost is paid per worker, not per chunk)."""
    return {meta["index"]: jacobian_blocks(program, params, meta, source,
                                           *flat[c * n_args:(c + 1) * n_args])
            for c, meta in enumerate(metas)}


def loaded_programs():
    """(programs loaded in this process, their keys): for tests and the dashboard's curious."""
    return _program.loads["count"], _program.cached_keys()
