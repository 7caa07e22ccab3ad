"""Batching rule of ParallelConcat: batched [B, 1, ...] inputs (shared ones broadcast) joined
along axis 1 by ConcatV2, which gives the same values."""
from .registry import batching


@batching("ParallelConcat")
def parallel_concat(b, node, inputs, batched):
    args = [b.broadcast(v, f, w.aval.shape) for v, f, w in zip(inputs, batched, node.inputs)]
    return [(b.emit1("ConcatV2", args, {"axis": 1}), True)]
