"""Batching rules of TopKV2 (it works on the last axis: a batch dimension in front changes
nothing) and InTopKV2 (2-D only: the batch folds into its rows)."""
from .registry import batching


@batching("TopKV2")
def _top_k(b, node, inputs, batched):
    return [(v, True) for v in b.emit("TopKV2", inputs, node.attrs)]


@batching("InTopKV2")
def _in_top_k(b, node, inputs, batched):
    """The batch folded into InTopKV2's rows: [B, N, C] predictions as [B*N, C]."""
    (n, c), = [node.inputs[0].aval.shape]
    if n is None or c is None:
        return None
    predictions = b.reshape(b.broadcast(inputs[0], batched[0], (n, c)), (b.size * n, c))
    targets = b.reshape(b.broadcast(inputs[1], batched[1], (n,)), (b.size * n,))
    out = b.emit1("InTopKV2", [predictions, targets], node.attrs)
    return [(b.reshape(out, (b.size, n)), True)]
