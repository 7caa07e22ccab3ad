"""The generic Conv op compiled: the input's batch dimensions folded into one (a reshape of
the arrays), then the Conv2D/Conv3D calls of templates/conv.py."""
from ...ir.defs.conv_raw import spatial, window_attrs
from ..emitter import shape_lit
from .conv import _gemm, _geometry, _width
from .registry import stmt_op


def _five(shape, n):
    """A folded channels-last shape as the 5-D one the jitted loops take."""
    return (shape[0], 1) + tuple(shape[1:]) if n == 2 else tuple(shape)


@stmt_op("Conv")
def _conv(em, node, batch_dims=1, **attrs):
    x, w = node.inputs
    (y,) = node.outputs
    xs, ws, ys = x.aval.shape, w.aval.shape, y.aval.shape
    n = spatial(xs, batch_dims)
    rows = 1
    for d in xs[:batch_dims]:
        rows = rows * d
    xf = (rows,) + tuple(xs[batch_dims:])
    yf = (rows,) + tuple(ys[batch_dims:])
    a = window_attrs(attrs, n)
    geo = _geometry(xf, ws[:n], a)
    out = em.alloc(y)
    xv, wv, yv = em.fresh("cv"), em.fresh("cv"), em.fresh("cv")
    em.line(f"{xv} = np.ascontiguousarray({em.ref(x)}).reshape({shape_lit(_five(xf, n))})")
    wfive = (1,) + tuple(ws) if n == 2 else tuple(ws)
    em.line(f"{wv} = np.ascontiguousarray({em.ref(w)}).reshape({shape_lit(wfive)})")
    em.line(f"{yv} = {out}.reshape({shape_lit(_five(yf, n))})")
    if _gemm(node, y.aval.dtype, _width(ws)):
        em.line(f"rt.conv_gemm({xv}, {wv}, {yv}, {geo})")
    else:
        em.line(f"rt.conv_direct_fwd({xv}, {wv}, {yv}, False, {geo})")
