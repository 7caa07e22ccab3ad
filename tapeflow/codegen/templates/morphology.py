"""Dilation2D and its backprop ops (runtime/kernels/morphology.py) as loops written into
the program: for each output, its window's first maximum (row-major, positions outside the
input skipped, TensorFlow's CPU kernels), then the value (forward) or the gradient added at
the maximum's input position or filter offset. Sizes are read from the arrays and SAME's
padding is written as an expression of them (templates/conv.py), one source for every size.
"""
import numpy as np

from ...ir.defs.morphology import window_attrs
from ..emitter import cast, lit
from .conv import _pads_before
from .registry import stmt_op


def _lowest(dtype):
    d = np.dtype(dtype.np)
    return np.finfo(d).min if d.kind == "f" else np.iinfo(d).min


def _argmax_loops(em, node, x, f, attrs):
    """Loops over the output's (b, oh, ow, c) with ``best``, ``hm``, ``wm`` (the window's first
    maximum and its input row and column; hm/wm start at the clamped window corner) set;
    yields the index names."""
    xs, fs = x.aval.shape, f.aval.shape
    a = window_attrs(attrs["strides"], attrs["rates"], attrs["padding"])
    pt, pl = _pads_before(xs, fs[:2], a)
    sh, sw = attrs["strides"][1:3]
    rh, rw = attrs["rates"][1:3]
    dt = x.aval.dtype
    xr, fr = em.ref(x), em.ref(f)
    out = node.outputs[0].aval.shape if node.op == "Dilation2D" else node.inputs[2].aval.shape
    low = lit(_lowest(dt), dt)
    loops = em.loops([str(out[0]), str(out[1]), str(out[2]), str(out[3])])
    b, i, j, c = loops.__enter__()
    hb, wb, best, hm, wm, km, lm = (em.fresh(p) for p in ("hb", "wb", "best", "hm", "wm",
                                                          "km", "lm"))
    em.line(f"{hb} = {i} * {sh} - ({pt})")
    em.line(f"{wb} = {j} * {sw} - ({pl})")
    em.line(f"{best} = {low}")
    em.line(f"{hm} = max({hb}, 0)")
    em.line(f"{wm} = max({wb}, 0)")
    em.line(f"{km} = 0")
    em.line(f"{lm} = 0")
    kh, kw, hi, wi, v = (em.fresh(p) for p in ("kh", "kw", "hi", "wi", "v"))
    with em.block(f"for {kh} in range({fs[0]}):"):
        em.line(f"{hi} = {hb} + {kh} * {rh}")
        with em.block(f"if {hi} >= 0 and {hi} < {xs[1]}:"):
            with em.block(f"for {kw} in range({fs[1]}):"):
                em.line(f"{wi} = {wb} + {kw} * {rw}")
                with em.block(f"if {wi} >= 0 and {wi} < {xs[2]}:"):
                    em.line(f"{v} = {cast(f'{xr}[{b}, {hi}, {wi}, {c}] + {fr}[{kh}, {kw}, {c}]', dt)}")
                    with em.block(f"if {v} > {best}:"):
                        for name, val in ((best, v), (hm, hi), (wm, wi), (km, kh), (lm, kw)):
                            em.line(f"{name} = {val}")
    return loops, (b, i, j, c), (best, hm, wm, km, lm)


@stmt_op("Dilation2D", "Dilation2DBackpropInput", "Dilation2DBackpropFilter")
def _dilation(em, node, **attrs):
    x, f = node.inputs[:2]
    (y,) = node.outputs
    if node.op == "Dilation2D":
        out = em.alloc(y)
    else:
        out = em.alloc(y, fill=lit(0, y.aval.dtype))
    loops, (b, i, j, c), (best, hm, wm, km, lm) = _argmax_loops(em, node, x, f, attrs)
    try:
        if node.op == "Dilation2D":
            em.line(f"{out}[{b}, {i}, {j}, {c}] = {best}")
        else:
            g = f"{em.ref(node.inputs[2])}[{b}, {i}, {j}, {c}]"
            at = f"{hm}, {wm}" if node.op == "Dilation2DBackpropInput" else f"{km}, {lm}"
            lead = f"{b}, " if node.op == "Dilation2DBackpropInput" else ""
            em.line(f"{out}[{lead}{at}, {c}] += {g}")
    finally:
        loops.__exit__(None, None, None)
