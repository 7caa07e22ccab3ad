"""``DaskStrategy``: tapeflow functions and their gradients over data on a Dask cluster.

One step (``value_and_grad``):

1. the function's saved program is on every worker already (sent once as a task holding
   its bytes, replicated, named by its content hash; each worker loads it once);
2. the parameters go once to every worker: inside its one task when small, else scattered
   once, broadcast;
3. each worker runs the chunks it holds (``tasks="worker"``) or one task per chunk
   (``tasks="chunk"``): the gradient program on the chunk, times its weight (SUM: 1,
   MEAN: rows / total rows);
4. the reduction tree (``tree.py``: fixed by the number of chunks, ``split_every`` children
   per node, added in chunk order): each worker sends only the subtrees it completed (or
   tree tasks add the chunks' results), never one value per chunk to the client, and the
   result has the same bits wherever the chunks were.

Jacobians over rows (``jacobian``, ``batch_jacobian``) are not reduced: each chunk's block
is computed where the chunk is and the blocks are concatenated in row order.
"""
import enum
from concurrent.futures import CancelledError
import itertools
from typing import NamedTuple
import uuid

import dask
import dask.array as da
import numpy as np
from distributed import wait

import tapeflow as tf

from . import tree, worker
from .data import DistributedDataset
from .shipped import program_bytes


INLINE_PARAM_BYTES = 1 << 16      # parameters up to this size travel inside the step's tasks


class ReduceOp(enum.Enum):
    """TensorFlow's ``tf.distribute.ReduceOp``. ``MEAN`` is the mean over data *rows*: each
    chunk's value is weighted by its rows, so a per-chunk mean of a per-row loss reduces to the
    mean over all rows whatever the chunking (TensorFlow's per-replica mean, when all replicas
    have equal batches, is the same number)."""
    SUM = "SUM"
    MEAN = "MEAN"


class PerReplica:
    """Per-chunk values, still on the cluster (``futures``: one per chunk, each a tuple of
    arrays). ``values`` fetches them (one transfer per chunk: for inspection, not steps)."""

    def __init__(self, futures, rows, single):
        self.futures, self.rows, self._single = list(futures), tuple(rows), single

    @property
    def values(self):
        out = [f.result() for f in self.futures]
        return [_to_tensors(v, self._single) for v in out]

    def __len__(self):
        return len(self.futures)

    def __repr__(self):
        return f"PerReplica({len(self.futures)} chunks, rows={list(self.rows)})"


def _to_tensors(arrays, single):
    ts = [tf.constant(a) for a in arrays]
    return ts[0] if single else ts


def _as_list(params):
    if isinstance(params, (list, tuple)):
        return list(params), False
    return [params], True


def _numpy(x):
    if isinstance(x, (tf.Tensor, tf.Variable)):
        return np.asarray(x.numpy())
    return np.asarray(x)


class Program(NamedTuple):
    """A function's program on the cluster: ``key`` (its content hash), ``future`` (its files,
    replicated on every worker), ``nbytes`` (their size), ``returns_list``, ``outputs``
    ((TensorShape, dtype name) per output, rows unknown when traced so)."""
    key: str
    future: object
    nbytes: int
    returns_list: bool
    outputs: tuple


class DaskStrategy:
    """Runs tapeflow functions chunk by chunk on a ``dask.distributed`` cluster.

    ``client``: a ``distributed.Client`` (its workers must import the same tapeflow).
    ``split_every``: children per node of the reduction tree (Dask's name, default 8).
    ``tasks``: ``"worker"`` (default): per step, one task per worker runs the chunks it holds
    and sends back only the subtrees of the reduction tree it completed, then the client
    finishes the tree — Dask's per-task overhead (milliseconds) is paid per worker, not per chunk;
    ``"chunk"``: one task per chunk and one per tree node (finer load balancing and work
    stealing, more overhead). Both give the same bits: the tree depends on the chunks only.
    The functions given to ``run``, ``value_and_grad``, ``gradient`` and
    ``hessian_vector_product`` take the parameters first, then one argument per data
    argument of the dataset: ``fn(w, b, x, y)``; they must be traceable by
    ``tapeflow.function`` and return a scalar (``run``: a tensor or a list of tensors).

    The example needs a cluster, so doctest skips it:

    >>> from dask.distributed import Client, LocalCluster
    >>> from tapeflow import distribute
    >>> client = Client(LocalCluster(n_workers=2, threads_per_worker=1))  # doctest: +SKIP
    >>> strategy = distribute.DaskStrategy(client)  # doctest: +SKIP
    >>> x, y = np.ones((1000, 3), np.float32), np.zeros((1000,), np.float32)
    >>> data = strategy.experimental_distribute_dataset((x, y))  # doctest: +SKIP
    >>> def loss_fn(w, x, y):
    ...     return tf.reduce_mean((tf.linalg.matvec(x, w) - y) ** 2)
    >>> loss, grads = strategy.value_and_grad(loss_fn, [tf.Variable(tf.ones([3]))], data)  # doctest: +SKIP
    >>> float(loss)  # doctest: +SKIP
    9.0
    """

    def __init__(self, client, split_every=8, tasks="worker"):
        if split_every < 2:
            raise ValueError("split_every must be at least 2")
        if tasks not in ("worker", "chunk"):
            raise ValueError(f"tasks must be 'worker' or 'chunk', not {tasks!r}")
        self.tasks = tasks
        self.client = client
        self.split_every = int(split_every)
        self._programs = {}
        self._token = uuid.uuid4().hex[:8]
        self._steps = itertools.count()
        self.last_step = {}

    @property
    def num_replicas_in_sync(self):
        return len(self.client.scheduler_info(n_workers=-1)["workers"])

    # -- data -------------------------------------------------------------------------------
    def experimental_distribute_dataset(self, data, names=None):
        """``data``: a Dask array, a list of NumPy shards, or a tuple of those (one per data
        argument, same rows). The chunks are persisted on the workers."""
        if isinstance(data, DistributedDataset):
            return data
        return DistributedDataset(self.client, data, names)

    # -- programs ---------------------------------------------------------------------------
    def program(self, fn, params, dataset):
        """The ``Program`` of ``fn`` over parameters shaped like ``params`` and the dataset's
        data arguments, on every worker (loaded once where it is made, to fail early on the
        cluster). Cached: a second step sends nothing."""
        ps, _ = _as_list(params)
        pspecs = tuple((tuple(_numpy(p).shape), _numpy(p).dtype.str) for p in ps)
        ckey = (fn, pspecs, dataset.specs, frozenset(dataset.rows))
        hit = self._programs.get(ckey)
        if hit is not None:
            return hit
        info = {}
        traced = _trace(fn, pspecs, dataset, info)
        key, files = program_bytes(traced)
        # a task holding the bytes, not scattered data: if every worker holding the program
        # dies, Dask recomputes it from the task (scattered data would be lost for good);
        # then replicated to every worker, as a broadcast scatter would be
        fut = self.client.submit(worker.program_value, key, files, key=f"tapeflow-program-{key}",
                                 pure=False)
        wait([fut])
        if fut.status == "error":
            fut.result()
        self.client.replicate([fut])
        self._programs[ckey] = Program(key, fut, sum(len(b) for b in files.values()),
                                       info.get("returns_list", False), info.get("outputs", ()))
        return self._programs[ckey]

    # -- TensorFlow's vocabulary ------------------------------------------------------------
    def run(self, fn, args=(), dataset=None):
        """``fn(*args, *chunk)`` on every chunk of ``dataset``: a ``PerReplica`` of futures."""
        dataset = self.experimental_distribute_dataset(dataset)
        ps, _ = _as_list(list(args))
        program = self.program(fn, ps, dataset)
        prog, returns_list = program.future, program.returns_list
        pfut = self._scatter_params(ps)
        step = self._step_key("run")
        futs = [self.client.submit(worker.call_chunk, prog, pfut, dataset.meta(i), *chunk,
                                   key=f"{step}-{i}", pure=False)
                for i, chunk in enumerate(dataset.chunks)]
        return PerReplica(futs, dataset.rows, not returns_list)

    def reduce(self, reduce_op, value, axis=None):
        """Tree reduction of a ``PerReplica`` over its chunks (SUM, or MEAN over rows)."""
        if axis is not None:
            raise NotImplementedError("reduce(..., axis=...) is not supported; axis=None only")
        reduce_op = ReduceOp(reduce_op.value if isinstance(reduce_op, ReduceOp) else reduce_op)
        total = float(sum(value.rows))
        weights = [1.0] * len(value.rows) if reduce_op is ReduceOp.SUM else \
            [r / total for r in value.rows]
        out = self._tree(value.futures, weights, self._step_key("reduce")).result()
        return _to_tensors(out, value._single)

    # -- gradients --------------------------------------------------------------------------
    def value_and_grad(self, fn, params, dataset, reduce_op=ReduceOp.MEAN):
        """(value, gradients w.r.t. ``params``) of ``fn(*params, *chunk)`` reduced over the
        chunks. ``params``: a tensor/variable/array or a list of them (gradients likewise;
        an unconnected parameter gets zeros)."""
        dataset = self.experimental_distribute_dataset(dataset)
        ps, single = _as_list(params)
        program = self.program(fn, ps, dataset)
        prog, nbytes = program.future, program.nbytes
        out = self._retried(lambda: self._step("grad", prog, self._scatter_params(ps, True), None,
                                                dataset, self._weights(reduce_op, dataset)))
        self._account(ps, out, nbytes, dataset)
        value, grads = tf.constant(out[0]), [tf.constant(g) for g in out[1:]]
        return value, grads[0] if single else grads

    def gradient(self, fn, params, dataset, reduce_op=ReduceOp.MEAN):
        """The gradients of ``value_and_grad`` alone: the chunks do not compute the value
        (a third less work for W10's logistic loss: its softplus is never evaluated)."""
        dataset = self.experimental_distribute_dataset(dataset)
        ps, single = _as_list(params)
        program = self.program(fn, ps, dataset)
        out = self._retried(lambda: self._step("gradient", program.future,
                                                self._scatter_params(ps, True), None, dataset,
                                                self._weights(reduce_op, dataset)))
        self._account(ps, out, program.nbytes, dataset)
        grads = [tf.constant(g) for g in out]
        return grads[0] if single else grads

    def hessian_vector_product(self, fn, params, vector, dataset, reduce_op=ReduceOp.MEAN):
        """H v, H the Hessian of the reduced ``fn`` w.r.t. ``params`` (same structure as
        ``vector``), by nested tapes over the loaded program on each chunk."""
        dataset = self.experimental_distribute_dataset(dataset)
        ps, single = _as_list(params)
        vs, _ = _as_list(vector)
        if len(vs) != len(ps):
            raise ValueError(f"{len(vs)} vector parts for {len(ps)} parameters")
        prog = self.program(fn, ps, dataset).future
        out = self._retried(lambda: self._step("hvp", prog, self._scatter_params(ps, True),
                                                self._scatter_params(vs, True), dataset,
                                                self._weights(reduce_op, dataset)))
        out = [tf.constant(a) for a in out]
        return out[0] if single else out

    # -- jacobians over data rows ----------------------------------------------------------
    def jacobian(self, fn, params, dataset, as_dask_array=False):
        """The jacobian of ``fn(*params, *chunk)`` w.r.t. ``params`` over all rows, as
        ``tape.jacobian(fn(*params, *data), params)`` on the whole data in one process: one
        tensor per parameter, shaped ``[rows, *output_shape[1:], *param.shape]``.

        ``fn`` returns one tensor with a row per data row, and rows are independent (row i's
        output depends on data row i and the parameters only): each chunk's block is computed
        where the chunk is, and the blocks are concatenated in row order (not added), so the
        result has the same bits for the same chunking. An unconnected parameter gets zeros,
        as in ``value_and_grad``. ``as_dask_array``: Dask arrays chunked as the dataset's rows,
        left on the cluster (the jacobian has as many rows as the data: fetch it to the client
        only if it fits), instead of tensors."""
        return self._jacobian(fn, params, dataset, None, as_dask_array)

    def batch_jacobian(self, fn, params, dataset, source=0, as_dask_array=False):
        """The per-row jacobian of ``fn(*params, *chunk)`` w.r.t. data argument ``source`` (its
        index or name), as ``tape.batch_jacobian(fn(...), data[source])`` on the whole data:
        shaped ``[rows, *output_shape[1:], *data[source].shape[1:]]``. Same rules as
        ``jacobian``; the output has rank 2 at least, as TensorFlow requires."""
        dataset = self.experimental_distribute_dataset(dataset)
        if isinstance(source, str):
            if source not in dataset.names:
                raise ValueError(f"batch_jacobian: no data argument named {source!r}; the "
                                 f"dataset has {list(dataset.names)}")
            source = dataset.names.index(source)
        if not isinstance(source, int) or not 0 <= source < len(dataset.specs):
            raise ValueError(f"batch_jacobian: source must name one of the "
                             f"{len(dataset.specs)} data arguments, got {source!r}")
        return self._jacobian(fn, params, dataset, source, as_dask_array)[0]

    def _jacobian(self, fn, params, dataset, source, as_dask_array):
        dataset = self.experimental_distribute_dataset(dataset)
        ps, single = _as_list(params)
        program = self.program(fn, ps, dataset)
        tail, dtype = _per_row_output(program, dataset, source)
        if source is None:
            shapes = [(*tail, *_numpy(p).shape) for p in ps]
        else:
            shapes = [(*tail, *dataset.specs[source][1])]
        if as_dask_array:
            blocks = self._retried(lambda: self._jacobian_tasks(program.future, ps, dataset,
                                                                source, per_chunk=True))
            out = _dask_arrays(blocks, dataset.rows, shapes, dtype)
        else:
            blocks = self._retried(lambda: self._jacobian_tasks(program.future, ps, dataset,
                                                                source, per_chunk=False))
            out = [tf.constant(np.concatenate([b[j] for b in blocks]))
                   for j in range(len(shapes))]
        return out[0] if single and source is None else out

    def _jacobian_tasks(self, prog, ps, dataset, source, per_chunk):
        """Every chunk's blocks in chunk order: per_chunk, one future per chunk (left on the
        cluster); else fetched, one task per worker (its chunks' blocks in one transfer)."""
        pfut = self._scatter_params(ps, per_worker=not per_chunk)
        step = self._step_key("jacobian")
        if per_chunk or self.tasks == "chunk":
            futs = [self.client.submit(worker.jacobian_blocks, prog, pfut, dataset.meta(i),
                                       source, *chunk, key=f"{step}-{i}", pure=False)
                    for i, chunk in enumerate(dataset.chunks)]
            return futs if per_chunk else self.client.gather(futs)
        parts = []
        for g, (addr, idx) in enumerate(sorted(self._placement(dataset).items())):
            flat = [f for i in idx for f in dataset.chunks[i]]
            parts.append(self.client.submit(
                worker.jacobian_group, prog, pfut, source, [dataset.meta(i) for i in idx],
                len(dataset.specs), *flat, key=f"{step}-group{g}", pure=False,
                workers=[addr] if addr else None, allow_other_workers=True))
        merged = {}
        for part in self.client.gather(parts):
            merged.update(part)
        return [merged[i] for i in range(dataset.num_chunks)]

    # -- helpers ----------------------------------------------------------------------------
    def _step(self, kind, prog, pfut, vfut, dataset, weights):
        """One reduction over the dataset's chunks: the root's tuple of arrays."""
        step = self._step_key(kind)
        n, k = dataset.num_chunks, self.split_every
        if self.tasks == "chunk":
            self._sent_subtrees = n         # every leaf is a task's result
            leaves = [self.client.submit(worker.chunk, kind, prog, pfut, vfut, dataset.meta(i),
                                         weights[i], *chunk, key=f"{step}-{i}", pure=False)
                      for i, chunk in enumerate(dataset.chunks)]
            return self._tree(leaves, None, step).result()
        parts, placement = [], self._placement(dataset)
        self._sent_subtrees = sum(tree.subtree_count(idx, n, k) for idx in placement.values())
        for g, (addr, idx) in enumerate(sorted(placement.items())):
            flat = [f for i in idx for f in dataset.chunks[i]]
            parts.append(self.client.submit(
                worker.group, kind, prog, pfut, vfut, n, k, [dataset.meta(i) for i in idx],
                [weights[i] for i in idx], len(dataset.specs), *flat,
                key=f"{step}-group{g}", pure=False,
                workers=[addr] if addr else None, allow_other_workers=True))
        # the workers' subtrees come to the client, which completes the tree: the same bytes
        # a last task would receive, one scheduling round trip less per step
        return worker.finish(n, k, *self.client.gather(parts))

    @staticmethod
    def _retried(step):
        """``step()``, run once more if a worker's death cancelled it. Dask recomputes lost
        task results, but data scattered to a worker that dies while the broadcast is still
        under way is gone, and what reads it is cancelled: the retry scatters the parameters
        again. The tree has a fixed shape, so the retry gives the same bits."""
        try:
            return step()
        except CancelledError:
            return step()

    def _placement(self, dataset):
        """{worker address: indices of the chunks it holds} (by each chunk's first array; a
        chunk Dask holds nowhere yet goes to a task the scheduler places). Asked of the
        scheduler once per dataset: a stale answer (a worker died, Dask recomputed its chunks
        elsewhere) only costs locality, since the tasks may run on other workers."""
        cached = getattr(dataset, "_placement", None)
        if cached is not None and "" not in cached:
            return cached
        firsts = [chunk[0] for chunk in dataset.chunks]
        wait(firsts)
        who = self.client.who_has(firsts)
        groups = {}
        for i, f in enumerate(firsts):
            holders = sorted(who.get(f.key, ()))
            groups.setdefault(holders[0] if holders else "", []).append(i)
        dataset._placement = groups
        return groups

    def _weights(self, reduce_op, dataset):
        reduce_op = ReduceOp(reduce_op.value if isinstance(reduce_op, ReduceOp) else reduce_op)
        if reduce_op is ReduceOp.SUM:
            return [1.0] * dataset.num_chunks
        total = float(dataset.num_rows)
        return [r / total for r in dataset.rows]

    def _scatter_params(self, ps, per_worker=False):
        """The parameters as the step's tasks take them. ``per_worker`` (one task per worker)
        and at most ``INLINE_PARAM_BYTES``: inside the tasks themselves — each worker gets
        one copy either way, and the step saves the scatter's round trip; else scattered
        once, broadcast to every worker, one future for all tasks."""
        arrays = tuple(_numpy(p) for p in ps)
        if per_worker and self.tasks == "worker" and \
                sum(a.nbytes for a in arrays) <= INLINE_PARAM_BYTES:
            return arrays
        return self.client.scatter([arrays], broadcast=True, hash=False)[0]

    def _step_key(self, what):
        return f"tapeflow-{what}-{self._token}-{next(self._steps)}"

    def _tree(self, futures, weights, step):
        """Fixed-shape tree over chunk order: groups of ``split_every`` consecutive values."""
        level, depth = list(futures), 0
        first = True
        while len(level) > 1 or first:
            groups = [level[i:i + self.split_every] for i in range(0, len(level), self.split_every)]
            new = []
            for g, group in enumerate(groups):
                w = weights[g * self.split_every:(g + 1) * self.split_every] if first and \
                    weights is not None else None
                new.append(self.client.submit(worker.tree_sum, w, *group,
                                              key=f"{step}-sum{depth}-{g}", pure=False))
            level, first, depth = new, False, depth + 1
        return level[0]

    def _account(self, ps, out, program_nbytes, dataset):
        """Bytes of one step, for the scaling estimate (docs/distribute.md)."""
        result_bytes = int(sum(np.asarray(a).nbytes for a in out))
        self.last_step = {
            "chunks": dataset.num_chunks, "tasks": self.tasks,
            "param_bytes": int(sum(_numpy(p).nbytes for p in ps)),
            "result_bytes": result_bytes,
            # values leaving the chunk tasks toward the root (subtrees of the tree), at most
            "reduction_bytes": int(self._sent_subtrees * result_bytes),
            "program_bytes": int(program_nbytes)}


def _per_row_output(program, dataset, source):
    """(output shape after the rows, dtype) of a function a jacobian over rows can take: one
    tensor whose first axis is the rows (unknown when traced so, else a chunk's rows)."""
    what = "jacobian" if source is None else "batch_jacobian"
    if program.returns_list or len(program.outputs) != 1:
        raise ValueError(f"{what} over data rows: the function must return one tensor, not "
                         f"{len(program.outputs)} outputs")
    shape, dtype = program.outputs[0]
    rank = shape.rank
    least = 1 if source is None else 2
    got = _aval(shape, dtype)
    if rank is None or rank < least or (shape[0] is not None and shape[0] not in dataset.rows):
        raise ValueError(f"{what} over data rows: the function returns {got}; it must return "
                         f"one row per data row (shape [rows, ...], rank {least} at least)")
    tail = tuple(shape[1:])
    if any(d is None for d in tail):
        raise ValueError(f"{what} over data rows: the function's output {got} has an unknown "
                         f"size after the rows")
    return tail, dtype


def _aval(shape, dtype):
    """``float32[?, 2]``, as the chunk errors write shapes (``?``: unknown)."""
    dims = "?" if shape.rank is None else ", ".join("?" if d is None else str(d) for d in shape)
    return f"{dtype}[{dims}]"


def _dask_arrays(futures, rows, shapes, dtype):
    """One Dask array per block kind: chunk i's block ``j`` is ``futures[i][j]``, rows
    concatenated in chunk order."""
    out = []
    for j, tail in enumerate(shapes):
        parts = [da.from_delayed(dask.delayed(f)[j], (r, *tail), dtype=np.dtype(dtype))
                 for f, r in zip(futures, rows, strict=True)]
        out.append(da.concatenate(parts, axis=0))
    return out


def _signature(pspecs, dataset, rows=None):
    params = [tf.TensorSpec(list(shape), tf.as_dtype(np.dtype(dt)))
              for shape, dt in pspecs]
    data = [tf.TensorSpec([rows, *tail], tf.as_dtype(np.dtype(dt)))
            for _, tail, dt in dataset.specs]
    return params, data


def _wrapper(fn, info):
    def program(params, data):
        out = fn(*params, *data)
        info["returns_list"] = isinstance(out, (list, tuple))
        leaves = out if info["returns_list"] else [out]
        info["outputs"] = tuple((tf.TensorShape(getattr(t, "shape", ())),
                                 getattr(getattr(t, "dtype", None), "name", None))
                                for t in leaves)
        return out
    return program


def _trace(fn, pspecs, dataset, info):
    """A ``tapeflow.function`` of (params, data) with a trace for the dataset's chunks.

    First one trace with unknown rows (``TensorSpec([None, ...])``: the loaded program is
    specialised to each chunk's rows on the worker); if the function cannot be traced with
    unknown rows, one trace per distinct chunk size."""
    python_fn = getattr(fn, "python_function", fn)
    try:
        sig = list(_signature(pspecs, dataset))
        traced = tf.function(_wrapper(python_fn, info), input_signature=sig)
        traced.get_concrete_function(*sig)
        return traced
    except Exception:
        traced = tf.function(_wrapper(python_fn, info))
        for rows in sorted(set(dataset.rows)):
            traced.get_concrete_function(*_signature(pspecs, dataset, rows))
        return traced
