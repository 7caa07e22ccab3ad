"""tapeflow functions, their gradients and Hessian-vector products over data on a Dask cluster.

Needs the ``distribute`` extra (``dask[distributed]``). See ``docs/distribute.md``.

    from dask.distributed import Client
    import tapeflow as tf
    from tapeflow import distribute

    strategy = distribute.DaskStrategy(Client(cluster))
    data = strategy.experimental_distribute_dataset((x, y))     # Dask arrays, persisted
    loss, grads = strategy.value_and_grad(loss_fn, [w, b], data)   # loss_fn(w, b, x, y)
"""
from .data import DistributedDataset
from .errors import ChunkError
from .strategy import DaskStrategy, PerReplica, ReduceOp

__all__ = ["ChunkError", "DaskStrategy", "DistributedDataset", "PerReplica", "ReduceOp"]
