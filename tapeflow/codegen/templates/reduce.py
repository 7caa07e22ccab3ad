"""Reductions (runtime/kernels/reduce.py) as accumulator recipes, plus ArgMax/ArgMin and segment sums.

A ``Reduction`` says how to start an accumulator, fold one element in and finish; the loop
emitter (``codegen/loop_nest.py``) places those pieces in the loop of the elementwise chain that
feeds the reduction, so ``sum(exp(x) * y)`` reads x and y once and writes nothing but the sum.

float32 sums accumulate in float64: NumPy's pairwise float32 sum is accurate to a few ulp,
and a running float32 sum over millions of elements would not be.
"""
from dataclasses import dataclass

from ...ir import dtypes as D
from ..emitter import cast, lit, shape_lit, size_lit
from .registry import reduce_op, stmt_op


@dataclass(frozen=True)
class Reduction:
    op: str

    def acc_dtype(self, dt):
        if self.op in ("Sum", "Mean"):
            return D.float64 if dt.is_floating else D.int64
        if self.op == "Prod" and dt.is_integer:
            return D.int64      # wraps like the dtype once cast back
        return dt

    def init(self, dt):
        acc = self.acc_dtype(dt)
        if self.op in ("Max", "Min"):
            sign = -1 if self.op == "Max" else 1
            value = sign * float("inf") if dt.is_floating else (dt.min if sign < 0 else dt.max)
        else:
            value = {"Sum": 0, "Mean": 0, "Prod": 1, "Any": False, "All": True}[self.op]
        return lit(value, acc)

    @property
    def parallel_ok(self):
        """Whether a full reduction can be a prange reduction (Numba knows these update forms)."""
        return self.op in ("Sum", "Mean", "Prod", "Max", "Min")

    def needs_nan_count(self, dt, parallel):
        return parallel and self.op in ("Max", "Min") and dt.is_floating

    def combine(self, acc, v, dt, parallel=False, nan=None):
        """Statements folding element ``v`` into ``acc`` (an lvalue)."""
        op = self.op
        if op in ("Sum", "Mean"):
            return [f"{acc} += {v}"]
        if op == "Prod":
            return [f"{acc} *= {v}"]
        if op == "Any":
            return [f"{acc} = {acc} | {v}"]
        if op == "All":
            return [f"{acc} = {acc} & {v}"]
        fn = "max" if op == "Max" else "min"
        if self.needs_nan_count(dt, parallel):
            # prange reductions need the builtin max/min; nan propagation is counted aside
            return [f"{acc} = {fn}({acc}, {v})", f"{nan} += ({v} != {v})"]
        return [f"{acc} = rt.{fn}imum({acc}, {v})"]

    def finalize(self, acc, dt, count, nan=None):
        """The result expression (in ``dt``) from the accumulator after ``count`` elements."""
        op = self.op
        if op == "Mean":
            if dt.is_floating:
                return cast(f"{cast(acc, dt)} / {size_lit(count, dt)}", dt)
            return cast(f"rt.mean_int({cast(acc, dt)}, {count})", dt)
        if nan is not None:
            return f"({lit(float('nan'), dt)} if {nan} > 0 else {acc})"
        return cast(acc, dt)


for _op in ("Sum", "Mean", "Prod", "Max", "Min", "Any", "All"):
    reduce_op(_op, Reduction(_op))


# -- arg-reductions ----------------------------------------------------------------------

def _split_axis(shape, ax):
    pre = 1
    for d in shape[:ax]:
        pre *= d
    post = 1
    for d in shape[ax + 1:]:
        post *= d
    return pre, shape[ax], post


@stmt_op("ArgMax", "ArgMin")
def _arg_reduce(em, node, axis, output_type):
    """First index of the max (min); a nan counts as the extreme, as in np.argmax."""
    (x,), (y,) = node.inputs, node.outputs
    ax = axis % len(x.aval.shape)
    pre, n, post = _split_axis(x.aval.shape, ax)
    better = ">" if node.op == "ArgMax" else "<"
    xv = em.fresh("xv")
    em.line(f"{xv} = {em.ref(x)}.reshape({shape_lit((pre, n, post))})")
    scalar_out = not y.aval.shape
    if not scalar_out:
        yv = em.fresh("yv")
        em.alloc(y)
        em.line(f"{yv} = {em.var(y)}.reshape({shape_lit((pre, post))})")
    best, pos, v = em.fresh("best"), em.fresh("pos"), em.fresh("x")
    with em.loops((pre, post)) as (p, q):
        em.line(f"{best} = {xv}[{p}, 0, {q}]")
        em.line(f"{pos} = 0")
        with em.block(f"if {best} == {best}:"):
            with em.loops((n,)) as (j,):
                em.line(f"{v} = {xv}[{p}, {j}, {q}]")
                with em.block(f"if {v} != {v}:"):
                    em.line(f"{best} = {v}")
                    em.line(f"{pos} = {j}")
                    em.line("break")
                with em.block(f"if {v} {better} {best}:"):
                    em.line(f"{best} = {v}")
                    em.line(f"{pos} = {j}")
        if scalar_out:
            em.define(y, cast(pos, output_type))
        else:
            em.line(f"{yv}[{p}, {q}] = {pos}")


# -- segment sums --------------------------------------------------------------------------

@stmt_op("UnsortedSegmentSum")
def _unsorted_segment_sum(em, node, num_segments):
    """In index order, like np.add.at; negative ids are dropped, ids past the end raise.
    ``num_segments``: an int, or code reading it at run time (DynamicUnsortedSegmentSum)."""
    data, ids = node.inputs
    (y,) = node.outputs
    k = len(ids.aval.shape)
    m = 1
    for d in ids.aval.shape:
        m *= d
    q = 1
    for d in data.aval.shape[k:]:
        q *= d
    out = em.alloc(y, fill=lit(0, y.aval.dtype), shape=(num_segments,) + tuple(y.aval.shape[1:]))
    ov, dv = em.fresh("ov"), em.fresh("dv")
    em.line(f"{ov} = {out}.reshape({shape_lit((num_segments, q))})")
    em.line(f"{dv} = {em.as_array(data)}.reshape({shape_lit((m, q))})")
    iv = em.fresh("iv")
    em.line(f"{iv} = {em.as_array(ids)}.reshape({shape_lit((m,))})")
    with em.loops((m,)) as (i,):
        s = em.fresh("s")
        em.line(f"{s} = {iv}[{i}]")
        with em.block(f"if {s} >= {num_segments}:"):
            em.line(f'raise IndexError("UnsortedSegmentSum: a segment id is out of range '
                    f'[0, {num_segments})")')
        with em.block(f"if {s} >= 0:"):
            with em.loops((q,)) as (j,):
                em.line(f"{ov}[{s}, {j}] += {dv}[{i}, {j}]")

