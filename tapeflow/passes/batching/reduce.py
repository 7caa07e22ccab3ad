"""Batching rules of reductions: the reduced axes move one to the right."""
from ...ir.defs.reduce import reduction_axes
from .registry import batching


@batching("Sum", "Mean", "Prod", "Max", "Min", "Any", "All")
def reduction(b, node, inputs, batched):
    (x,) = inputs
    rank = len(node.inputs[0].aval.shape)
    axes = tuple(a + 1 for a in reduction_axes(node.attrs.get("axis"), rank))
    attrs = dict(node.attrs, axis=axes)
    return [(b.emit1(node.op, [x], attrs), True)]


@batching("ArgMax", "ArgMin")
def arg_reduction(b, node, inputs, batched):
    (x,) = inputs
    rank = len(node.inputs[0].aval.shape)
    (ax,) = reduction_axes(node.attrs["axis"], rank)
    return [(b.emit1(node.op, [x], dict(node.attrs, axis=ax + 1)), True)]


@batching("UnsortedSegmentSum", "DynamicUnsortedSegmentSum")
def segment_sum(b, node, inputs, batched):
    """Only batched data with shared segment ids: the batch dim joins the trailing dims."""
    data, ids = inputs[:2]
    if any(batched[1:]):
        return None
    k = len(node.inputs[1].aval.shape)
    rank = len(node.inputs[0].aval.shape)
    perm = tuple(range(1, k + 1)) + (0,) + tuple(range(k + 1, rank + 1))
    moved = b.emit1("Transpose", [data], {"perm": perm})
    out = b.emit1(node.op, [moved, ids, *inputs[2:]], node.attrs)   # [n, B, *rest]
    orank = len(out.aval.shape)
    back = (1, 0) + tuple(range(2, orank))
    return [(b.emit1("Transpose", [out], {"perm": back}), True)]
