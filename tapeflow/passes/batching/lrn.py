"""Batching rules of LRN and LRNGrad: the batch folds into N (shared inputs broadcast first),
one op on [B * N, H, W, C], reshaped back. Unknown sizes take the loop."""
from .registry import batching


@batching("LRN", "LRNGrad")
def lrn(b, node, inputs, batched):
    shape = tuple(node.inputs[0].aval.shape)
    if any(d is None for d in shape):
        return None
    folded = [b.reshape(b.broadcast(v, flag, shape), (b.size * shape[0],) + shape[1:])
              for v, flag in zip(inputs, batched)]
    out = b.emit1(node.op, folded, node.attrs)
    return [(b.reshape(out, (b.size,) + shape), True)]
