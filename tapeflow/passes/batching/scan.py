"""Batching rules of the cumulative ops: the scan axis moves past the batch dimension."""
from .registry import batching, shift_axis


@batching("Cumsum", "Cumprod", "CumulativeLogsumexp")
def _scan(b, node, inputs, batched):
    rank = len(node.inputs[0].aval.shape)
    attrs = dict(node.attrs, axis=shift_axis(node.attrs["axis"], rank))
    return [(b.emit1(node.op, inputs, attrs), True)]
