"""Batching rule of IsotonicRegression: every leading axis is a row of problems, so a batched
input of rank >= 2 is the same op; a batched 1-D input becomes [B, d], the same op too."""
from .registry import batching


@batching("IsotonicRegression")
def isotonic(b, node, inputs, batched):
    if not node.inputs[0].aval.shape:
        return None      # a batch of scalars: the loop
    outs = b.emit(node.op, inputs, node.attrs)
    return [(o, True) for o in outs]
