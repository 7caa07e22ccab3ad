"""Batching rule of If: on a shared predicate, an If of the vectorized branches.

A batched predicate (rows taking different branches) and While or WhileGrad (rows running
different trip counts) have no rule: they run as the reported loop over the batch.
"""
from .registry import batching


@batching("If")
def if_(b, node, inputs, batched):
    if batched[0]:
        return None
    flags = list(batched[1:])
    branches = [b.vectorize(node.attrs[k], flags) for k in ("then_graph", "else_graph")]
    outs = b.emit("If", inputs, {"then_graph": branches[0], "else_graph": branches[1]})
    return [(o, True) for o in outs]
