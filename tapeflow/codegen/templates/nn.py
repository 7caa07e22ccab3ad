"""Softmax and LogSoftmax (runtime/kernels/nn.py): one pass per row, no temporaries.

For each row along ``axis``: the max (nan-propagating, like np.max), the sum of exp(x - max)
accumulated in float64, then the row is written; the kernel's expression order is kept
(softmax multiplies by the reciprocal of the sum, log-softmax subtracts the log of the sum).
The activations (Relu, Elu, ...) are elementwise and live in ``elementwise.py``.
"""
from ...ir.shapes import num_elements
from ..emitter import cast, lit, parallel_condition, shape_lit
from ..sizeclass import choose
from .elementwise import TRANSCENDENTAL
from .registry import stmt_op


def _row_split(shape, ax):
    return num_elements(shape[:ax]), shape[ax], num_elements(shape[ax + 1:])


@stmt_op("Softmax", "LogSoftmax")
def _softmax(em, node, axis=-1):
    (x,), (y,) = node.inputs, node.outputs
    dt = y.aval.dtype
    pre, n, post = _row_split(x.aval.shape, axis % len(x.aval.shape))
    f32 = dt.name == "float32"
    exp = "fm.exp_f32" if f32 else "np.exp"
    log = "fm.log_f32" if f32 else "np.log"
    xv, yv = em.fresh("xv"), em.fresh("yv")
    out = em.alloc(y)
    em.line(f"{xv} = {em.ref(x)}.reshape({shape_lit((pre, n, post))})")
    em.line(f"{yv} = {out}.reshape({shape_lit((pre, n, post))})")
    # speed only: a size class, no guard (sizeclass.py)
    par = choose(lambda: f"{node.op} over {list(x.aval.shape)}",
                 [("rows", pre, ">", 1, None),
                  parallel_condition(pre * n * post * 2 * TRANSCENDENTAL)],
                 "parallel", "serial")
    m, s = em.fresh("mx"), em.fresh("sm")
    with em.loops((pre, post), parallel=par) as (p, q):
        em.line(f"{m} = {lit(float('-inf'), dt)}")
        with em.loops((n,)) as (j,):
            em.line(f"{m} = rt.maximum({m}, {xv}[{p}, {j}, {q}])")
        em.line(f"{s} = 0.0")
        with em.loops((n,)) as (j,):
            em.line(f"{s} += {exp}({xv}[{p}, {j}, {q}] - {m})")
        if node.op == "Softmax":
            r = em.fresh("r")
            em.line(f"{r} = {lit(1, dt)} / {cast(s, dt)}")
            with em.loops((n,)) as (j,):
                em.line(f"{yv}[{p}, {j}, {q}] = {exp}({xv}[{p}, {j}, {q}] - {m}) * {r}")
        else:
            r = em.fresh("r")
            em.line(f"{r} = {log}({cast(s, dt)})")
            with em.loops((n,)) as (j,):
                em.line(f"{yv}[{p}, {j}, {q}] = ({xv}[{p}, {j}, {q}] - {m}) - {r}")
