"""Fractional pooling (runtime/kernels/fractional_pool.py) compiled: the program draws the
row and column sequences with the kernels' own jitted ``pooling_sequence`` (as
``rt.fractional_sequence``, so compiled and eager cells are the same), then loops over the
cells. Seeds (0, 0) draw a fresh pair per call in TensorFlow: such a program runs on the
interpreter."""
import numpy as np

from ...runtime.kernels.fractional_pool import seeds
from ..emitter import Unsupported, cast, lit, np_type
from .registry import stmt_op


def _lowest(dtype):
    d = np.dtype(dtype.np)
    return np.finfo(d).min if d.kind == "f" else np.iinfo(d).min


def _cell_loops(em, row, col, n_out, in_shape, overlapping):
    """Open loops over the cells (i, j) with their inclusive input bounds; returns the names
    and how many blocks to close."""
    i, j, r0, r1, c0, c1 = (em.fresh(p) for p in ("i", "j", "r0", "r1", "c0", "c1"))
    end = "" if overlapping else " - 1"
    em.line(f"for {i} in range({n_out[0]}):")
    em.depth += 1
    em.line(f"{r0} = {row}[{i}]")
    em.line(f"{r1} = min({row}[{i} + 1]{end}, {in_shape[1]} - 1)")
    em.line(f"for {j} in range({n_out[1]}):")
    em.depth += 1
    em.line(f"{c0} = {col}[{j}]")
    em.line(f"{c1} = min({col}[{j} + 1]{end}, {in_shape[2]} - 1)")
    return i, j, r0, r1, c0, c1


@stmt_op("FractionalMaxPool", "FractionalAvgPool")
def _pool(em, node, pooling_ratio, pseudo_random=False, overlapping=False,
          deterministic=False, seed=0, seed2=0):
    if seed == 0 and seed2 == 0:
        raise Unsupported(f"{node.op} with seeds (0, 0) draws new cells on every call")
    (x,) = node.inputs
    y, row, col = node.outputs
    xs, ys = x.aval.shape, y.aval.shape
    dt = y.aval.dtype
    out, ro, co = em.alloc(y), em.alloc(row), em.alloc(col)
    s, s2 = seeds(seed, seed2)
    used = em.fresh("used")
    em.line(f"{used} = rt.fractional_sequence({xs[1]}, {ys[1]}, {bool(pseudo_random)}, "
            f"np.uint64({s}), np.uint64({s2}), 0, {ro})")
    em.line(f"rt.fractional_sequence({xs[2]}, {ys[2]}, {bool(pseudo_random)}, np.uint64({s}), "
            f"np.uint64({s2}), {used}, {co})")
    depth = em.depth
    i, j, r0, r1, c0, c1 = _cell_loops(em, ro, co, ys[1:3], xs, overlapping)
    xr = em.ref(x)
    avg = node.op == "FractionalAvgPool"
    with em.loops([str(xs[0]), str(xs[3])]) as (b, c):
        acc, h, w, v = (em.fresh(p) for p in ("acc", "h", "w", "v"))
        em.line(f"{acc} = {lit(0 if avg else _lowest(dt), dt)}")
        with em.block(f"for {h} in range({r0}, {r1} + 1):"):
            with em.block(f"for {w} in range({c0}, {c1} + 1):"):
                em.line(f"{v} = {xr}[{b}, {h}, {w}, {c}]")
                if avg:
                    em.line(f"{acc} = {cast(f'{acc} + {v}', dt)}")
                else:
                    with em.block(f"if {v} > {acc}:"):
                        em.line(f"{acc} = {v}")
        if avg:
            n = f"(({r1}) - ({r0}) + 1) * (({c1}) - ({c0}) + 1)"
            if dt.is_floating:
                em.line(f"{acc} = {cast(f'{acc} / {np_type(dt)}({n})', dt)}")
            else:
                q = em.fresh("q")
                em.line(f"{q} = abs({acc}) // {n}")
                em.line(f"{acc} = {cast(f'-{q} if {acc} < 0 else {q}', dt)}")
        em.line(f"{out}[{b}, {i}, {j}, {c}] = {acc}")
    em.depth = depth


@stmt_op("FractionalMaxPoolGrad")
def _max_pool_grad(em, node, overlapping=False):
    x, _, dy, row, col = node.inputs
    (dx,) = node.outputs
    xs = x.aval.shape
    out = em.alloc(dx, fill=lit(0, dx.aval.dtype))
    ro, co, xr, gr = em.ref(row), em.ref(col), em.ref(x), em.ref(dy)
    ds = dy.aval.shape
    depth = em.depth
    i, j, r0, r1, c0, c1 = _cell_loops(em, ro, co, ds[1:3], xs, overlapping)
    with em.loops([str(xs[0]), str(xs[3])]) as (b, c):
        best, bh, bw, h, w = (em.fresh(p) for p in ("best", "bh", "bw", "h", "w"))
        em.line(f"{best} = {xr}[{b}, {r0}, {c0}, {c}]")
        em.line(f"{bh} = {r0}")
        em.line(f"{bw} = {c0}")
        with em.block(f"for {h} in range({r0}, {r1} + 1):"):
            with em.block(f"for {w} in range({c0}, {c1} + 1):"):
                with em.block(f"if {best} < {xr}[{b}, {h}, {w}, {c}]:"):
                    em.line(f"{best} = {xr}[{b}, {h}, {w}, {c}]")
                    em.line(f"{bh} = {h}")
                    em.line(f"{bw} = {w}")
        em.line(f"{out}[{b}, {bh}, {bw}, {c}] += {gr}[{b}, {i}, {j}, {c}]")
    em.depth = depth


@stmt_op("FractionalAvgPoolGrad")
def _avg_pool_grad(em, node, overlapping=False):
    x, dy, row, col = node.inputs
    (dx,) = node.outputs
    xs, ds = x.aval.shape, dy.aval.shape
    acc = em.fresh("acc")
    em.line(f"{acc} = np.zeros(({xs[0]}, {xs[1]}, {xs[2]}, {xs[3]}), dtype=np.float64)")
    ro, co, gr = em.ref(row), em.ref(col), em.ref(dy)
    depth = em.depth
    i, j, r0, r1, c0, c1 = _cell_loops(em, ro, co, ds[1:3], xs, overlapping)
    n = em.fresh("n")
    em.line(f"{n} = (({r1}) - ({r0}) + 1) * (({c1}) - ({c0}) + 1)")
    with em.loops([str(xs[0]), str(xs[3])]) as (b, c):
        share, h, w = (em.fresh(p) for p in ("share", "h", "w"))
        em.line(f"{share} = np.float64({gr}[{b}, {i}, {j}, {c}]) / {n}")
        with em.block(f"for {h} in range({r0}, {r1} + 1):"):
            with em.block(f"for {w} in range({c0}, {c1} + 1):"):
                em.line(f"{acc}[{b}, {h}, {w}, {c}] += {share}")
    em.depth = depth
    dt = dx.aval.dtype
    conv = f"{acc}.astype({np_type(dt)})" if dt.is_floating else \
        f"np.trunc({acc}).astype({np_type(dt)})"
    em.define(dx, conv)
