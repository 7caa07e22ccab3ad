"""Bitcast (runtime/kernels/bitcast.py): a copy of the flat input viewed as the new dtype."""
from ..emitter import np_type, shape_lit
from .registry import stmt_op


@stmt_op("Bitcast")
def _bitcast(em, node, type):
    (x,), (y,) = node.inputs, node.outputs
    n = 1
    for d in x.aval.shape:
        n *= d
    flat = em.fresh("flat")
    em.line(f"{flat} = np.ascontiguousarray({em.as_array(x)}).reshape({shape_lit((n,))})")
    out_shape = y.aval.shape
    m = 1
    for d in out_shape:
        m *= d
    view = f"{flat}.view({np_type(y.aval.dtype)})"
    if out_shape:
        em.define(y, f"{view}.reshape({shape_lit(tuple(out_shape))}).copy()")
    else:
        em.define(y, f"{view}[0]")
