"""Datasets on the cluster: each data argument split into the same row chunks.

A data argument is a Dask array (split along axis 0 by its own chunks; the other axes are
made one chunk) or a list of NumPy shards (one chunk each). All arguments must have the
same row chunks; Dask arrays after the first are rechunked to the first one's rows.
Chunks are persisted as futures (``client.compute`` of each block), so the data is read
or generated once and stays in the workers' memory across steps.
"""
import numpy as np

from .errors import ChunkError


def _is_dask_array(x):
    return type(x).__module__.startswith("dask.array") and hasattr(x, "to_delayed")


def _shard_specs(name, shards, rows_ref):
    """Check a list of NumPy shards on the client: the error names the bad chunk."""
    arrays = [np.asarray(s) for s in shards]
    if not arrays:
        raise ValueError(f"data argument {name!r}: no shards")
    tail, dtype = arrays[0].shape[1:], arrays[0].dtype
    start = 0
    for i, a in enumerate(arrays):
        if a.ndim == 0:
            raise ChunkError(f"chunk {i} of data argument {name!r} is a scalar; shards need rows")
        stop = start + a.shape[0]
        if a.shape[1:] != tail or a.dtype != dtype:
            raise ChunkError(f"chunk {i} (rows {start}:{stop}) of data argument {name!r}: "
                             f"expected {dtype.name}[{a.shape[0]}, {', '.join(map(str, tail))}] "
                             f"like chunk 0, got {a.dtype.name}{list(a.shape)}")
        if rows_ref is not None and a.shape[0] != rows_ref[i]:
            raise ChunkError(f"chunk {i} of data argument {name!r} has {a.shape[0]} rows; "
                             f"the first data argument's chunk {i} has {rows_ref[i]}")
        start = stop
    if rows_ref is not None and len(arrays) != len(rows_ref):
        raise ChunkError(f"data argument {name!r} has {len(arrays)} chunks; the first data "
                         f"argument has {len(rows_ref)}")
    return arrays, tuple(tail), dtype


class DistributedDataset:
    """Data in row chunks on the cluster (``strategy.experimental_distribute_dataset``).

    ``arrays``: a tuple with one entry per data argument, or one entry alone; an entry is a
    Dask array or a *list* of NumPy shards (a list is always the shards of one argument).

    ``rows``: rows per chunk; ``specs``: (name, trailing shape, dtype) per argument;
    ``chunks[i]``: the futures of chunk i, one per argument.
    """

    def __init__(self, client, arrays, names=None):
        if not isinstance(arrays, tuple):      # one argument: a Dask array or a list of shards
            arrays = (arrays,)
        if not arrays:
            raise ValueError("no data arguments")
        names = list(names) if names is not None else [f"data{i}" for i in range(len(arrays))]
        if len(names) != len(arrays):
            raise ValueError(f"{len(names)} names for {len(arrays)} data arguments")
        self.names = tuple(names)
        self._client = client
        per_arg, specs, rows = [], [], None
        for name, a in zip(names, arrays, strict=True):
            if _is_dask_array(a):
                blocks, tail, dtype, rows = self._dask_blocks(client, name, a, rows)
            else:
                shards, tail, dtype = _shard_specs(name, a, rows)
                rows = rows or tuple(s.shape[0] for s in shards)
                blocks = client.scatter(shards)
            per_arg.append(blocks)
            specs.append((name, tail, dtype.str))
        self.rows = tuple(int(r) for r in rows)
        self.specs = tuple(specs)
        self.chunks = [tuple(blocks[i] for blocks in per_arg) for i in range(len(self.rows))]
        self.starts = tuple(int(s) for s in np.concatenate([[0], np.cumsum(self.rows)[:-1]]))

    @staticmethod
    def _dask_blocks(client, name, a, rows):
        if a.ndim == 0:
            raise ValueError(f"data argument {name!r} is a scalar; data needs rows")
        if any(np.isnan(c) for cs in a.chunks for c in cs):
            raise ValueError(f"data argument {name!r} has unknown chunk sizes; call "
                             f"compute_chunk_sizes() first")
        want_rows = rows if rows is not None else a.chunks[0]
        if sum(want_rows) != a.shape[0]:
            raise ChunkError(f"data argument {name!r} has {a.shape[0]} rows; the first data "
                             f"argument has {sum(want_rows)}")
        target = (tuple(want_rows),) + tuple((d,) for d in a.shape[1:])
        if a.chunks != target:
            a = a.rechunk(target)
        blocks = list(a.to_delayed().reshape(-1))
        return client.compute(blocks), tuple(a.shape[1:]), a.dtype, tuple(want_rows)

    @property
    def num_chunks(self):
        return len(self.rows)

    @property
    def num_rows(self):
        return sum(self.rows)

    def meta(self, i):
        return {"index": i, "start": self.starts[i], "stop": self.starts[i] + self.rows[i],
                "specs": self.specs}

    def gather(self):
        """The whole dataset on the client, one NumPy array per data argument (for checks
        and small data: it moves every chunk)."""
        parts = self._client.gather([list(chunk) for chunk in self.chunks])
        return tuple(np.concatenate([p[k] for p in parts]) for k in range(len(self.specs)))

    def release(self):
        for chunk in self.chunks:
            for f in chunk:
                f.release()
        self.chunks = []
