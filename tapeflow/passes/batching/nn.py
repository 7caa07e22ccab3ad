"""Batching rules of the non-elementwise nn ops (softmax along an axis)."""
from .registry import batching, shift_axis


@batching("Softmax", "LogSoftmax")
def softmax(b, node, inputs, batched):
    rank = len(node.inputs[0].aval.shape)
    return [(b.emit1(node.op, inputs, {"axis": shift_axis(node.attrs.get("axis", -1), rank)}), True)]
