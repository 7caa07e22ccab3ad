"""Batching rules of elementwise ops: broadcasting already does the work once ranks line up."""
from ...ir.opdef import OPS
from .registry import batching

# Elementwise ops that do not broadcast: every input must have the output's shape.
SAME_SHAPE = ("AddN", "Betainc", "ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "LeakyReluGrad")


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
        batching(_name)(same_shape if _name in SAME_SHAPE else broadcasting)
