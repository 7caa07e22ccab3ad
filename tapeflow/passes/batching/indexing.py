"""Batching rules of the indexing ops: reverse and roll shift their axes past the batch
dimension; gather/scatter by index tuples take the loop (None) unless only the data is
batched and the op gathers along leading axes it does not touch."""
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


@batching("GatherNd", "ScatterNd", "TensorScatterUpdate", "TensorScatterAdd",
          "TensorScatterSub", "TensorScatterMax", "TensorScatterMin")
def _by_index_tuples(b, node, inputs, batched):
    return None   # the loop over the batch (indices would need the batch coordinate prepended)
