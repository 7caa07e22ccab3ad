"""The ops that take a shape as a tensor (DynamicReshape, DynamicBroadcastTo, SumToShape,
SplitV, DynamicStridedSliceGrad, DynamicUnsortedSegmentSum: ir/defs/array.py, reduce.py).

A graph reaches codegen with static shapes (one with unknown dims is specialised per input
shape first, where these ops become their static forms), so here the output's static shape
is the size the shape input holds: each op is emitted as its static form, the shape input
unread.
"""
from types import SimpleNamespace

from ..emitter import index, lit
from .array import copy_loops
from .registry import CODEGEN, stmt_op


def _as(node, op, n_inputs):
    """``node`` seen as its static form ``op``: the first ``n_inputs`` inputs only."""
    return SimpleNamespace(op=op, inputs=node.inputs[:n_inputs], outputs=node.outputs,
                           attrs=node.attrs, line=getattr(node, "line", None))


@stmt_op("DynamicReshape")
def _dynamic_reshape(em, node, shape):
    (y,) = node.outputs
    CODEGEN["Reshape"].emit(em, _as(node, "Reshape", 1), shape=tuple(y.aval.shape))


@stmt_op("DynamicStridedSliceGrad")
def _dynamic_strided_slice_grad(em, node, spec, shape):
    (y,) = node.outputs
    CODEGEN["StridedSliceGrad"].emit(em, _as(node, "StridedSliceGrad", 1), spec=spec,
                                     shape=tuple(y.aval.shape))


@stmt_op("SplitV")
def _split_v(em, node, sizes, axis):
    ax = axis % len(node.inputs[0].aval.shape)
    CODEGEN["Split"].emit(em, _as(node, "Split", 1), axis=axis,
                          sizes=tuple(y.aval.shape[ax] for y in node.outputs))


@stmt_op("DynamicUnsortedSegmentSum")
def _dynamic_unsorted_segment_sum(em, node, num_segments):
    (y,) = node.outputs
    CODEGEN["UnsortedSegmentSum"].emit(em, _as(node, "UnsortedSegmentSum", 2),
                                       num_segments=y.aval.shape[0])


@stmt_op("DynamicBroadcastTo")
def _dynamic_broadcast_to(em, node, shape):
    x, (y,) = node.inputs[0], node.outputs
    if not y.aval.shape:
        em.bind(y, em.ref(x))
        return
    lead = len(y.aval.shape) - len(x.aval.shape)
    out = em.alloc(y)
    copy_loops(em, y.aval.shape, out, lambda i: i,
               lambda i: em.read(x, ["0" if d == 1 else v
                                     for v, d in zip(i[lead:], x.aval.shape)]))


@stmt_op("SumToShape")
def _sum_to_shape(em, node, shape):
    """Every element of ``g`` added into the target element it was broadcast from."""
    g, (y,) = node.inputs[0], node.outputs
    target = tuple(y.aval.shape)
    if tuple(g.aval.shape) == target:
        em.bind(y, em.ref(g))
        return
    lead = len(g.aval.shape) - len(target)
    if not target:
        acc = em.fresh("acc")
        em.line(f"{acc} = {lit(0, y.aval.dtype)}")
        with em.loops(g.aval.shape) as idx:
            em.line(f"{acc} += {em.read(g, idx)}")
        em.define(y, acc)
        return
    out = em.alloc(y, fill=lit(0, y.aval.dtype))
    with em.loops(g.aval.shape) as idx:
        at = ["0" if d == 1 else v for v, d in zip(idx[lead:], target)]
        em.line(f"{out}[{index(at)}] += {em.read(g, idx)}")
