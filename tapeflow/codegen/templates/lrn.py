"""LRN and LRNGrad (runtime/kernels/lrn.py) as loops over the positions and the depth
window, adding in the kernel's order and dtype."""
from ..emitter import lit, shape_lit
from .registry import stmt_op


def _rows(em, v, name):
    """``v`` ([N, H, W, C]) viewed as [N*H*W, C]; returns (view, P, C)."""
    n, h, w, c = v.aval.shape
    p = n * h * w
    view = em.fresh(name)
    em.line(f"{view} = {em.as_array(v)}.reshape({shape_lit((p, c))})")
    return view, p, c


def _norm(em, xv, p, d, depth, depth_radius, bias, alpha, dt):
    """Code leaving ``bias + alpha * sum(x[p, k]**2)`` over d's window in a fresh variable."""
    acc, k, norm = em.fresh("acc"), em.fresh("k"), em.fresh("norm")
    em.line(f"{acc} = {lit(0, dt)}")
    with em.block(f"for {k} in range(max(0, {d} - {depth_radius}), "
                  f"min({depth}, {d} + {depth_radius} + 1)):"):
        em.line(f"{acc} = {acc} + {xv}[{p}, {k}] * {xv}[{p}, {k}]")
    em.line(f"{norm} = {lit(bias, dt)} + {lit(alpha, dt)} * {acc}")
    return norm


@stmt_op("LRN")
def _lrn(em, node, depth_radius, bias, alpha, beta):
    (x,), (y,) = node.inputs, node.outputs
    dt = y.aval.dtype
    xv, p, c = _rows(em, x, "xv")
    out = em.alloc(y)
    yv = em.fresh("yv")
    em.line(f"{yv} = {out}.reshape({shape_lit((p, c))})")
    with em.loops((p, c)) as (i, d):
        norm = _norm(em, xv, i, d, c, depth_radius, bias, alpha, dt)
        em.line(f"{yv}[{i}, {d}] = {xv}[{i}, {d}] / {norm} ** {lit(beta, dt)}")


@stmt_op("LRNGrad")
def _lrn_grad(em, node, depth_radius, bias, alpha, beta):
    """Each depth d's gradient: its diagonal term, and its share added over d's window."""
    (g, x, y), (r,) = node.inputs, node.outputs
    dt = r.aval.dtype
    gv, p, c = _rows(em, g, "gv")
    xv, _, _ = _rows(em, x, "xv")
    yv, _, _ = _rows(em, y, "yv")
    out = em.alloc(r)
    rv, share = em.fresh("rv"), em.fresh("share")
    em.line(f"{rv} = {out}.reshape({shape_lit((p, c))})")
    em.line(f"{share} = np.empty({shape_lit((c,))}, dtype={rv}.dtype)")
    with em.loops((p,)) as (i,):
        with em.loops((c,)) as (d,):
            norm = _norm(em, xv, i, d, c, depth_radius, bias, alpha, dt)
            em.line(f"{rv}[{i}, {d}] = {gv}[{i}, {d}] * {norm} ** {lit(-beta, dt)}")
            em.line(f"{share}[{d}] = {lit(-2 * alpha * beta, dt)} * {gv}[{i}, {d}] * "
                    f"{yv}[{i}, {d}] / {norm}")
        with em.loops((c,)) as (d,):
            acc, k = em.fresh("acc"), em.fresh("k")
            em.line(f"{acc} = {lit(0, dt)}")
            with em.block(f"for {k} in range(max(0, {d} - {depth_radius}), "
                          f"min({c}, {d} + {depth_radius} + 1)):"):
                em.line(f"{acc} = {acc} + {share}[{k}]")
            em.line(f"{rv}[{i}, {d}] = {rv}[{i}, {d}] + {xv}[{i}, {d}] * {acc}")
