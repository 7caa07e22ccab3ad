"""Batching rule of Bitcast: it touches only the last axis, so the batched input takes the op."""
from .registry import batching


@batching("Bitcast")
def bitcast(b, node, inputs, batched):
    return [(b.emit1(node.op, inputs, node.attrs), True)]
