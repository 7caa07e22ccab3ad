"""Segment max, min and product (runtime/kernels/segment.py) as loops over the rows.

Rows fold into their segment in index order with TensorFlow's rule (``acc if x < acc else
x`` for a max), so NaN handling matches the kernel. Bad ids raise here and the call reruns
on the interpreter, which raises the op's InvalidArgumentError.
"""
import numpy as np

from ..emitter import lit, shape_lit
from .registry import stmt_op


def _fold(reduction, acc, x):
    if reduction == "Prod":
        return f"{acc} *= {x}"
    keep = "<" if reduction == "Max" else ">"
    return f"{acc} = {acc} if {x} {keep} {acc} else {x}"


def _init(reduction, dtype, sorted_):
    """The identity: -inf/inf for a sorted max/min of floats, the lowest/highest finite value
    unsorted (and for integers), 1 for a product."""
    if reduction == "Prod":
        return lit(1, dtype)
    if dtype.is_floating:
        top = np.inf if sorted_ else np.finfo(dtype.np).max
        return lit(-top if reduction == "Max" else top, dtype)
    info = np.iinfo(dtype.np)
    return lit(info.min if reduction == "Max" else info.max, dtype)


def _sizes(em, node):
    data, ids = node.inputs
    k = len(ids.aval.shape)
    m = 1
    for d in ids.aval.shape:
        m *= d
    q = 1
    for d in data.aval.shape[k:]:
        q *= d
    return m, q


def _emit(em, node, num_segments, reduction, sorted_):
    data, ids = node.inputs
    (y,) = node.outputs
    m, q = _sizes(em, node)
    dt = y.aval.dtype
    out = em.alloc(y, fill=_init(reduction, dt, sorted_))
    ov, dv, iv = em.fresh("ov"), em.fresh("dv"), em.fresh("iv")
    em.line(f"{ov} = {out}.reshape({shape_lit((num_segments, q))})")
    em.line(f"{dv} = {em.as_array(data)}.reshape({shape_lit((m, q))})")
    em.line(f"{iv} = {em.as_array(ids)}.reshape({shape_lit((m,))})")
    seen = None
    if sorted_ and reduction != "Prod":
        seen = em.fresh("seen")
        em.line(f"{seen} = np.zeros({num_segments}, dtype=np.bool_)")
    with em.loops((m,)) as (i,):
        s = em.fresh("s")
        em.line(f"{s} = {iv}[{i}]")
        if sorted_:
            with em.block(f"if {i} > 0 and {s} < {iv}[{i} - 1]:"):
                em.line(f'raise ValueError("{node.op}: segment ids are not increasing")')
            with em.block(f"if {s} < 0 or {s} >= {num_segments}:"):
                em.line(f'raise IndexError("{node.op}: a segment id is out of range")')
        else:
            with em.block(f"if {s} >= {num_segments}:"):
                em.line(f'raise IndexError("{node.op}: a segment id is out of range '
                        f'[0, {num_segments})")')
        with em.block(f"if {s} >= 0:"):
            if seen is not None:
                em.line(f"{seen}[{s}] = True")
            with em.loops((q,)) as (j,):
                em.line(_fold(reduction, f"{ov}[{s}, {j}]", f"{dv}[{i}, {j}]"))
    if seen is not None:      # TensorFlow's sorted max/min leave an empty segment 0
        with em.loops((num_segments,)) as (t,):
            with em.block(f"if not {seen}[{t}]:"):
                with em.loops((q,)) as (j,):
                    em.line(f"{ov}[{t}, {j}] = {lit(0, dt)}")


def _register(reduction, sorted_):
    op = ("Segment" if sorted_ else "UnsortedSegment") + reduction

    @stmt_op(op)
    def _template(em, node, num_segments):
        _emit(em, node, num_segments, reduction, sorted_)
    _template.__doc__ = f"{op}: rows folded into their segments in index order."


for _r in ("Max", "Min", "Prod"):
    _register(_r, True)
    _register(_r, False)
