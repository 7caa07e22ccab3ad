"""Batching rule of the generic Conv op: a batch of inputs is one more batch dimension
(``batch_dims + 1``); a batched filter asks for the loop."""
from .registry import batching


@batching("Conv")
def _conv(b, node, inputs, batched):
    if batched[1]:
        return None
    attrs = dict(node.attrs, batch_dims=node.attrs.get("batch_dims", 1) + 1)
    return [(b.emit1("Conv", [inputs[0], inputs[1]], attrs), True)]
