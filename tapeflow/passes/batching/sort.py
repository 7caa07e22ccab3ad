"""Batching rules of TopKV2 (it works on the last axis: a batch dimension in front changes
nothing) and InTopKV2 (2-D only: the loop)."""
from .registry import batching


@batching("TopKV2")
def _top_k(b, node, inputs, batched):
    return [(v, True) for v in b.emit("TopKV2", inputs, node.attrs)]


@batching("InTopKV2")
def _in_top_k(b, node, inputs, batched):
    return None
