"""Emitting a fused group (``fusion.Group``) as one loop nest.

Broadcasting is index arithmetic: dimensions of size 1 in the group's shape are dropped, and
adjacent dimensions are merged when every operand agrees on them (all read it fully or all
broadcast it) and the reduction treats them alike, so ``x[64,256] + b[256]`` is a 2-deep
nest reading ``b[0, j]`` and a same-shape chain is one flat loop. Each operand is reshaped
(a free view: every array is C-contiguous) to the merged rank, with 1 where it broadcasts.

A folded reduction decides the nest's order: kept dimensions outside, reduced inside, with a
scalar accumulator per output element when the reduced dimensions trail (row sums, full
sums); otherwise an accumulator array indexed by the kept dimensions (column sums).

Large loops use ``prange`` on their outermost dimension: a loop runs in parallel when its
estimated work, elements x (sum of per-element costs + 1 + arrays read; an add costs 1, a
transcendental 8), reaches ``emitter.PARALLEL_WORK``, about a millisecond of serial work,
enough to pay for waiting on a busy core (see there). A full reduction then becomes a Numba
prange reduction. Loops that can raise (integer division by zero) stay serial: a prange body
cannot raise.
"""
import re

from ..ir.shapes import normalize_axes, num_elements
from .emitter import cast, index, np_type, parallel_condition, shape_lit
from .sizeclass import choose
from .shape_free import Dim, same_shape
from .templates import CODEGEN
from ..ir.opdef import OPS


class _Dim:
    """One dimension of the merged loop nest."""

    def __init__(self, size, red, full):
        self.size, self.red, self.full = size, red, full


def _reads_all(op_dim, d):
    """Whether an operand of dimension ``op_dim`` is read along a loop dimension ``d`` (else it
    broadcasts: index 0). A literal 1 broadcasts whatever ``d`` is at run time, so a size read
    from the inputs needs no guard that it is not 1."""
    if isinstance(d, Dim) and not isinstance(op_dim, Dim) and op_dim == 1:
        return False
    return op_dim == d


def _merge_dims(shape, red_axes, operands):
    """Merged loop dims; ``operands`` are shapes left-padded to len(shape). A literal 1 is
    dropped; a size read from the inputs is kept even when it is 1 (the same source for all)."""
    dims = []
    for k, d in enumerate(shape):
        if not isinstance(d, Dim) and d == 1:
            continue
        full = tuple(_reads_all(op[k], d) for op in operands)
        red = k in red_axes
        if dims and dims[-1].red == red and dims[-1].full == full:
            dims[-1].size *= d
        else:
            dims.append(_Dim(d, red, full))
    if not dims:
        dims.append(_Dim(1, bool(red_axes), tuple(False for _ in operands)))
    return dims


def _group_note(g):
    ops = [n.op for n in g.members + g.reductions]
    return f"fused loop over {list(g.shape)}: " + " ".join(ops)


def emit_group(em, g):
    node0 = (g.members + g.reductions)[0]
    if not g.shape:
        _emit_scalar_group(em, g)
        return
    with em.note(_group_note(g), node0):
        em.pending_checks(g.members + g.reductions)
        _emit_loop_group(em, g)


def _member_expr(em, node, arg):
    """The member's one-element expression, cast to its dtype where Numba would widen it.

    float32 arithmetic on float32 operands stays float32 in Numba, so most float32 results
    need no cast (each cast is one more call for Numba to type, a large share of compile time).
    """
    tpl = CODEGEN[node.op]
    out = node.outputs[0]
    expr = tpl.scalar([arg(v) for v in node.inputs], [v.aval for v in node.inputs], out.aval,
                      **node.attrs)
    if (out.aval.dtype.name == "float32" and not OPS[node.op].widens_float32
            and all(v.aval.dtype.name == "float32" for v in node.inputs)):
        return expr
    return cast(expr, out.aval.dtype)


def _emit_scalar_group(em, g):
    """Rank-0 values: straight-line scalar code, no arrays (where a small program's per-call
    cost lives)."""
    for n in g.members:
        with em.node(n):
            em.define(n.outputs[0], _member_expr(em, n, em.ref))
    for r in g.reductions:   # reducing a scalar over no axes is the scalar itself
        em.bind(r.outputs[0], em.ref(r.inputs[0]))


def _donors(em, g, arrays, dims, member_ids):
    """Arrays this loop may write its outputs into: buffers the program allocated (not inputs,
    constants, outputs or views), read at every element of the loop, by nothing after it."""
    out = []
    viewed = set(em.view_base.values())
    for j, v in enumerate(arrays):
        name = em.ref(v)
        aliased = any(vid != v.id and re.search(rf"\b{name}\b", e) for vid, e in em.expr.items())
        if (name in em.owned and name not in viewed and not aliased and v.id not in em.output_ids
                and all(d.full[j] for d in dims)
                and all(id(n) in member_ids for n in em.uses.get(v.id, ()))
                and not any(v in r.inputs for r in g.reductions)):
            out.append(v)
    return out


def _take_donor(donors, g, node):
    """A donor for ``node``'s output: same shape and dtype, and every member reading it comes
    no later than ``node`` (an element is read before the loop body overwrites it)."""
    y = node.outputs[0]
    pos = g.members.index(node)
    for v in donors:
        if not same_shape(v.aval.shape, y.aval.shape) or v.aval.dtype != y.aval.dtype:
            continue
        if all(g.members.index(m) <= pos for m in g.members if v in m.inputs):
            donors.remove(v)
            return v
    return None


def _emit_loop_group(em, g):
    shape = tuple(g.shape)
    rank = len(shape)
    produced = {n.outputs[0].id for n in g.members}
    member_ids = g.node_ids()
    ext = []
    for n in g.members + g.reductions:
        for v in n.inputs:
            if v.id not in produced and all(v is not e for e in ext):
                ext.append(v)
    scalars = {}         # value id -> scalar expression (rank 0 or a single element)
    arrays = []
    for v in ext:
        if not v.aval.shape or v.id in em.uniform:
            scalars[v.id] = em.ref(v)
        elif not isinstance(num_elements(v.aval.shape), Dim) and num_elements(v.aval.shape) == 1:
            name = em.fresh("s")
            em.line(f"{name} = {em.scalar_of(v)}")
            scalars[v.id] = name
        else:
            arrays.append(v)
    padded = [(1,) * (rank - len(v.aval.shape)) + tuple(v.aval.shape) for v in arrays]
    reds = g.reductions
    red_axes = set(g.axes) if reds else set()
    dims = _merge_dims(shape, red_axes, padded)
    sizes = [d.size for d in dims]

    views = {}
    for j, v in enumerate(arrays):
        vshape = tuple(d.size if d.full[j] else 1 for d in dims)
        if same_shape(vshape, v.aval.shape):
            views[v.id] = (em.ref(v), j)
        else:
            name = em.fresh("x")
            em.line(f"{name} = {em.ref(v)}.reshape({shape_lit(vshape)})")
            views[v.id] = (name, j)

    materialized = [n for n in g.members if em.used_outside(n.outputs[0], member_ids)]
    out_views = {}
    donors = _donors(em, g, arrays, dims, member_ids)
    for n in materialized:
        y = n.outputs[0]
        with em.node(n):
            donor = _take_donor(donors, g, n)
            if donor is not None:    # written over an input that dies here (same element read first)
                name = em.bind(y, em.ref(donor))
                em.line(f"# {name} now holds {em.names[y.id]}: {em.names[donor.id]} is dead after this loop")
                # written through the very view it is read through: LLVM then sees a load and
                # a store of the same element, not two arrays that may overlap, and vectorizes
                # the loop (two views of one buffer fail its run-time overlap check: 3x slower)
                out_views[y.id] = views[donor.id][0]
                continue
            name = em.alloc(y)
            if not same_shape(sizes, y.aval.shape):
                view = em.fresh("o")
                em.line(f"{view} = {name}.reshape({shape_lit(sizes)})")
                name = view
        out_views[y.id] = name
    temps = {n.outputs[0].id: em.fresh("t") for n in g.members}

    def arg(idx):
        def read(v):
            if v.id in temps:
                return temps[v.id]
            if v.id in scalars:
                return scalars[v.id]
            name, j = views[v.id]
            return f"{name}[{index([i if d.full[j] else '0' for i, d in zip(idx, dims)])}]"
        return read

    def body(idx):
        """Emit the members for one element; returns each reduction's input expression."""
        read = arg(idx)
        for n in g.members:
            y = n.outputs[0]
            with em.node(n):
                em.line(f"{temps[y.id]} = {_member_expr(em, n, read)}")
                if y.id in out_views:
                    em.line(f"{out_views[y.id]}[{index(idx)}] = {temps[y.id]}")
        return [read(r.inputs[0]) for r in reds]

    kept = [d for d in dims if not d.red]
    trailing = all(not d.red for d in dims[:len(kept)])
    work = num_elements(shape) * (sum(CODEGEN[n.op].cost for n in g.members) + 1 + len(arrays))
    raises = any(CODEGEN[n.op].may_raise and n.inputs[0].aval.dtype.is_integer for n in g.members)
    if not reds:
        can = True
    elif trailing and not kept:
        can = all(CODEGEN[r.op].reduce.parallel_ok for r in reds)
    else:
        can = trailing or not dims[0].red
    # speed only: a size class, no guard (sizeclass.py)
    par = not raises and can and choose(
        lambda: _group_note(g), [parallel_condition(work),
                                 ("outer size", sizes[0], ">", 1, None)], "parallel", "serial")
    if not reds:
        with em.loops(sizes, parallel=par) as idx:
            body(idx)
        return
    if trailing and not kept:
        _full_reduction(em, reds, dims, body, par)
    elif trailing:
        _row_reduction(em, reds, dims, kept, body, par)
    else:
        _column_reduction(em, reds, dims, kept, body, par)


def _reduced_count(red):
    """Elements reduced into each output element: the product of the reduced dimensions (an
    expression of the input sizes; dividing the sizes instead would decide on an empty output,
    fixing the program to non-empty batches)."""
    shape = red.inputs[0].aval.shape
    count = 1
    for a in normalize_axes(red.attrs.get("axis"), len(shape)):
        count = count * shape[a]
    return count


class _Acc:
    """One folded reduction's accumulator and what finishing it needs."""

    def __init__(self, em, red, parallel=False):
        self.red, self.spec = red, CODEGEN[red.op].reduce
        x, self.y = red.inputs[0], red.outputs[0]
        self.dt = x.aval.dtype
        self.count = _reduced_count(red)
        self.name = em.fresh("acc")
        self.nan = em.fresh("nan") if self.spec.needs_nan_count(self.dt, parallel) else None
        self.parallel = parallel

    def init(self, em, target=None):
        with em.node(self.red):
            if self.red.op == "Mean" and not self.dt.is_floating and self.count == 0:
                em.line('raise ValueError("mean of an empty integer reduction is undefined")')
            em.line(f"{target or self.name} = {self.spec.init(self.dt)}")
            if self.nan:
                em.line(f"{self.nan} = 0")

    def combine(self, em, v, target=None):
        with em.node(self.red):
            for s in self.spec.combine(target or self.name, v, self.dt, parallel=self.parallel,
                                       nan=self.nan):
                em.line(s)

    def final(self, acc=None):
        return self.spec.finalize(acc or self.name, self.dt, self.count, nan=self.nan)


def _full_reduction(em, reds, dims, body, par):
    """Every axis reduced: scalar accumulators (a prange reduction when parallel)."""
    par = par and all(CODEGEN[r.op].reduce.parallel_ok for r in reds)
    accs = [_Acc(em, r, parallel=par) for r in reds]
    for a in accs:
        a.init(em)
    with em.loops([d.size for d in dims], parallel=par) as idx:
        for a, v in zip(accs, body(idx)):
            a.combine(em, v)
    for a in accs:
        y = a.y
        with em.node(a.red):
            if y.aval.shape:
                em.define(y, f"np.full({shape_lit(y.aval.shape)}, {a.final()}, "
                             f"dtype={np_type(y.aval.dtype)})")
            else:
                em.define(y, a.final())


def _out_view(em, y, kept):
    out = em.alloc(y)
    ksizes = tuple(d.size for d in kept)
    if same_shape(ksizes, y.aval.shape):
        return out
    view = em.fresh("r")
    em.line(f"{view} = {out}.reshape({shape_lit(ksizes)})")
    return view


def _row_reduction(em, reds, dims, kept, body, par):
    """Reduced axes trail the kept ones: one scalar accumulator per output element."""
    accs = [_Acc(em, r) for r in reds]
    views = []
    for a in accs:
        with em.node(a.red):
            views.append(_out_view(em, a.y, kept))
    rdims = dims[len(kept):]
    with em.loops([d.size for d in kept], parallel=par) as kidx:
        for a in accs:
            a.init(em)
        with em.loops([d.size for d in rdims]) as ridx:
            for a, v in zip(accs, body(kidx + ridx)):
                a.combine(em, v)
        for a, view in zip(accs, views):
            with em.node(a.red):
                em.line(f"{view}[{index(kidx)}] = {a.final()}")


def _column_reduction(em, reds, dims, kept, body, par):
    """A reduced axis before a kept one: accumulator arrays over the kept dimensions."""
    ksizes = [d.size for d in kept]
    accs = [_Acc(em, r) for r in reds]
    for a in accs:
        with em.node(a.red):
            if a.red.op == "Mean" and not a.dt.is_floating and a.count == 0:
                em.line('raise ValueError("mean of an empty integer reduction is undefined")')
            em.line(f"{a.name} = np.full({shape_lit(ksizes)}, {a.spec.init(a.dt)}, "
                    f"dtype={np_type(a.spec.acc_dtype(a.dt))})")
    with em.loops([d.size for d in dims], parallel=par) as idx:
        kidx = index([i for i, d in zip(idx, dims) if not d.red])
        for a, v in zip(accs, body(idx)):
            a.combine(em, v, target=f"{a.name}[{kidx}]")
    for a in accs:
        with em.node(a.red):
            view = _out_view(em, a.y, kept)
            with em.loops(ksizes) as k:
                em.line(f"{view}[{index(k)}] = {a.final(f'{a.name}[{index(k)}]')}")

