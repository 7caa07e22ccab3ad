"""Batching rules of the indexing ops: reverse and roll shift their axes past the batch
dimension; gather/scatter by index tuples put each row's batch coordinate in front of its index
tuples, so one op on the batched tensor serves every row."""
import numpy as np

from .registry import batching, shift_axis


@batching("ReverseV2")
def _reverse(b, node, inputs, batched):
    rank = len(node.inputs[0].aval.shape)
    axis = tuple(shift_axis(a, rank) for a in node.attrs["axis"])
    return [(b.emit1("ReverseV2", inputs, {"axis": axis}), True)]


@batching("Roll")
def _roll(b, node, inputs, batched):
    rank = len(node.inputs[0].aval.shape)
    axis = tuple(shift_axis(a, rank) for a in node.attrs["axis"])
    return [(b.emit1("Roll", inputs, dict(node.attrs, axis=axis)), True)]


def _with_row(b, indices, batched):
    """Index tuples [B, *I, k+1]: each row's tuples with its own batch coordinate first, so
    one gather/scatter on the batched tensor does every row's. None: sizes not static."""
    shape = tuple(indices.aval.shape[1:] if batched else indices.aval.shape)
    if any(d is None for d in shape) or not shape:
        return None
    idx = b.broadcast(indices, batched, shape)
    row_shape = (b.size,) + shape[:-1] + (1,)
    rows = np.broadcast_to(np.arange(b.size).reshape((b.size,) + (1,) * len(shape)), row_shape)
    rows = b.graph.const(np.ascontiguousarray(rows, dtype=indices.aval.dtype.np))
    return b.emit1("ConcatV2", [rows, idx], {"axis": len(shape)})


@batching("GatherNd")
def _gather_nd(b, node, inputs, batched):
    params, indices = inputs
    if not batched[0]:      # the indices' batch dim is a leading index dim: the output's
        return [(b.emit1("GatherNd", [params, indices]), True)]
    idx = _with_row(b, indices, batched[1])
    if idx is None:
        return None
    return [(b.emit1("GatherNd", [params, idx]), True)]


@batching("ScatterNd")
def _scatter_nd(b, node, inputs, batched):
    indices, updates = inputs
    idx = _with_row(b, indices, batched[0])
    if idx is None:
        return None
    ups = b.broadcast(updates, batched[1], node.inputs[1].aval.shape)
    shape = (b.size,) + tuple(node.attrs["shape"])
    return [(b.emit1("ScatterNd", [idx, ups], {"shape": shape}), True)]


@batching("TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub", "TensorScatterMax",
          "TensorScatterMin")
def _tensor_scatter(b, node, inputs, batched):
    tensor, indices, updates = inputs
    idx = _with_row(b, indices, batched[1])
    if idx is None or any(d is None for v in node.inputs for d in v.aval.shape):
        return None
    tensor = b.broadcast(tensor, batched[0], node.inputs[0].aval.shape)
    ups = b.broadcast(updates, batched[2], node.inputs[2].aval.shape)
    return [(b.emit1(node.op, [tensor, idx, ups]), True)]
