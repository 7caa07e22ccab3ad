"""Batching rules of elementwise ops: broadcasting already does the work once ranks line up."""
from ...ir.opdef import OPS
from .registry import batching

def broadcasting(b, node, inputs, batched):
    """Batched inputs get ones between the batch dim and their own dims (right-aligned
    broadcasting then lines the batch dim up); unbatched inputs broadcast as they did."""
    rank = len(node.outputs[0].aval.shape)
    args = [b.align(v, rank) if f else v for v, f in zip(inputs, batched)]
    return [(b.emit1(node.op, args, node.attrs), True)]


def same_shape(b, node, inputs, batched):
    shape = node.outputs[0].aval.shape
    args = [b.broadcast(v, f, shape) for v, f in zip(inputs, batched)]
    return [(b.emit1(node.op, args, node.attrs), True)]


for _name, _op in OPS.items():
    if _op.kind == "elementwise":
        batching(_name)(same_shape if _op.same_shape else broadcasting)
