"""IsotonicRegression (runtime/kernels/isotonic.py) as the same pool-adjacent-violators loop
per row, the pools kept in three arrays (start, sum, mean) of the row's length."""
from ..emitter import np_type, shape_lit
from .registry import stmt_op


@stmt_op("IsotonicRegression")
def _isotonic(em, node):
    (x,), (y, s) = node.inputs, node.outputs
    shape = x.aval.shape
    n = shape[-1] if shape else 1
    rows = 1
    for d in shape[:-1]:
        rows *= d
    dt = np_type(y.aval.dtype)
    xv, yv, sv = em.fresh("xv"), em.fresh("yv"), em.fresh("sv")
    em.line(f"{xv} = {em.as_array(x)}.reshape({shape_lit((rows, n))})")
    out, seg = em.alloc(y), em.alloc(s)
    em.line(f"{yv} = {out}.reshape({shape_lit((rows, n))})")
    em.line(f"{sv} = {seg}.reshape({shape_lit((rows, n))})")
    start, total, mean = em.fresh("start"), em.fresh("total"), em.fresh("mean")
    em.line(f"{start} = np.empty({n} + 1, dtype=np.int64)")
    em.line(f"{total} = np.empty({shape_lit((n,))}, dtype={dt})")
    em.line(f"{mean} = np.empty({shape_lit((n,))}, dtype={dt})")
    with em.loops((rows,)) as (r,):
        top = em.fresh("top")
        em.line(f"{top} = 0")
        with em.loops((n,)) as (c,):
            v = em.fresh("v")
            em.line(f"{v} = {dt}({xv}[{r}, {c}])")
            em.line(f"{start}[{top}] = {c}")
            em.line(f"{total}[{top}] = {v}")
            em.line(f"{mean}[{top}] = {v}")
            em.line(f"{top} += 1")
            with em.block(f"while {top} > 1 and {mean}[{top} - 1] > {mean}[{top} - 2]:"):
                em.line(f"{total}[{top} - 2] = {total}[{top} - 2] + {total}[{top} - 1]")
                em.line(f"{mean}[{top} - 2] = {total}[{top} - 2] / {dt}({c} + 1 - {start}[{top} - 2])")
                em.line(f"{top} -= 1")
        em.line(f"{start}[{top}] = {n}")
        with em.loops((top,)) as (k,):
            c2 = em.fresh("c")
            with em.block(f"for {c2} in range({start}[{k}], {start}[{k} + 1]):"):
                em.line(f"{yv}[{r}, {c2}] = {mean}[{k}]")
                em.line(f"{sv}[{r}, {c2}] = {k}")
