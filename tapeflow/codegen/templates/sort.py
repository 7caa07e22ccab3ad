"""TopKV2 and InTopKV2 (runtime/kernels/sort.py) through codegen/index_helpers.py, on
(rows, n) views of the input."""
from ...ir.shapes import num_elements
from ..emitter import shape_lit
from .registry import stmt_op


@stmt_op("TopKV2")
def _top_k(em, node, k, sorted=True, index_type=None):
    (x,) = node.inputs
    vals, idx = node.outputs
    shape = x.aval.shape
    rows = num_elements(shape[:-1])
    xv = em.fresh("xv")
    em.line(f"{xv} = {em.ref(x)}.reshape({shape_lit((rows, shape[-1]))})")
    vo, io = em.alloc(vals), em.alloc(idx)
    view = shape_lit((rows, k))
    em.line(f"rt.top_k({xv}, {k}, {vo}.reshape({view}), {io}.reshape({view}))")


@stmt_op("InTopKV2")
def _in_top_k(em, node, k):
    p, t = node.inputs
    (y,) = node.outputs
    out = em.alloc(y)
    em.line(f"rt.in_top_k({em.ref(p)}, {em.ref(t)}, {k}, {out})")
