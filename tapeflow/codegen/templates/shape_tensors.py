"""The ops that take a shape as a tensor (DynamicReshape, DynamicBroadcastTo, SumToShape,
SplitV, DynamicStridedSliceGrad, DynamicUnsortedSegmentSum: ir/defs/array.py, reduce.py).

A graph with unknown dims is specialised per input shape first, where these ops become their
static forms, so mostly the output's shape is the size the shape input holds: the op is
emitted as its static form, the shape input unread. Where the shape input holds a size only
the run knows (a TensorArray grown in a loop, codegen/shape_free.py ``RunDim``), the output's
aval reads that size from the output itself, so the template reads it from the shape input
(``data_sizes``, ``sizes_from_data``), and checks the sizes the graph knows against it (a
failed check runs the call on the interpreter, which raises the op's error).
"""
from types import SimpleNamespace

from ..emitter import index, lit
from ..shape_free import RunDim, read_at_run_time, reads, same_shape
from .array import copy_loops
from .registry import CODEGEN, stmt_op


def data_sizes(em, y, shape):
    """``y``'s sizes as code: each one the graph leaves to the run read from the shape tensor
    ``shape`` (element j for dim j), the others as known, checked equal to what it holds."""
    dims = []
    for j, d in enumerate(y.aval.shape):
        given = em.read(shape, [str(j)]) if shape.aval.shape else em.ref(shape)
        if reads(d, y):
            n = em.fresh("n")
            em.line(f"{n} = np.int64({given})")
            dims.append(n)
        else:
            em.size_check(f"{given} == {d}")
            dims.append(d)
    em.checks_from_here()
    return dims


def _run_time(y):
    return any(reads(d, y) for d in y.aval.shape)


def _as(node, op, n_inputs):
    """``node`` seen as its static form ``op``: the first ``n_inputs`` inputs only."""
    return SimpleNamespace(op=op, inputs=node.inputs[:n_inputs], outputs=node.outputs,
                           attrs=node.attrs, line=getattr(node, "line", None))


@stmt_op("DynamicReshape")
def _dynamic_reshape(em, node, shape):
    (y,) = node.outputs
    CODEGEN["Reshape"].emit(em, _as(node, "Reshape", 1), shape=tuple(y.aval.shape))


@stmt_op("DynamicStridedSliceGrad", sizes_from_data=True)
def _dynamic_strided_slice_grad(em, node, spec, shape):
    (y,) = node.outputs
    dims = data_sizes(em, y, node.inputs[1]) if _run_time(y) else y.aval.shape
    CODEGEN["StridedSliceGrad"].emit(em, _as(node, "StridedSliceGrad", 1), spec=spec,
                                     shape=tuple(read_at_run_time(d) for d in dims))


@stmt_op("SplitV", sizes_from_data=True)
def _split_v(em, node, sizes, axis):
    x = node.inputs[0]
    ax = axis % len(x.aval.shape)
    if not any(_run_time(y) for y in node.outputs):
        CODEGEN["Split"].emit(em, _as(node, "Split", 1), axis=axis,
                              sizes=tuple(y.aval.shape[ax] for y in node.outputs))
        return
    # the sizes tensor at run time (-1 filled in, checked as the kernel does: rt.split_sizes)
    sz, off = em.fresh("sz"), em.fresh("off")
    em.line(f"{sz} = rt.split_sizes({em.as_array(node.inputs[1])}, {x.aval.shape[ax]})")
    em.line(f"{off} = 0")
    for k, y in enumerate(node.outputs):
        dims = list(y.aval.shape)
        if reads(dims[ax], y):
            dims[ax] = f"{sz}[{k}]"
        else:
            em.size_check(f"{sz}[{k}] == {dims[ax]}")
        if k == 0 and ax == 0:
            # the leading rows: a C-contiguous view, not a copy (the gradient of a list that
            # grew by one row per iteration, shrinking by one per iteration of the backward)
            name = em.define(y, f"{em.ref(x)}[:{sz}[0]]")
            em.view_base[name] = em.root(em.ref(x))
            em.line(f"{off} += {sz}[0]")
            continue
        out = em.alloc(y, shape=dims)
        copy_loops(em, dims, out, lambda i: i,
                   lambda i: em.read(x, i[:ax] + [f"{i[ax]} + {off}"] + i[ax + 1:]))
        em.line(f"{off} += {sz}[{k}]")


@stmt_op("DynamicUnsortedSegmentSum", sizes_from_data=True)
def _dynamic_unsorted_segment_sum(em, node, num_segments):
    (y,) = node.outputs
    n = y.aval.shape[0]
    if reads(n, y):     # the count the run gives (its third input)
        n = em.fresh("n")
        em.line(f"{n} = np.int64({em.ref(node.inputs[2])})")
    CODEGEN["UnsortedSegmentSum"].emit(em, _as(node, "UnsortedSegmentSum", 2), num_segments=n)


@stmt_op("DynamicBroadcastTo", sizes_from_data=True)
def _dynamic_broadcast_to(em, node, shape):
    """A size of ``x`` broadcasts if it is a literal 1; any other is checked equal to the
    target's when either is only known at run time."""
    x, (y,) = node.inputs[0], node.outputs
    if not y.aval.shape:
        em.bind(y, em.ref(x))
        return
    lead = len(y.aval.shape) - len(x.aval.shape)
    dims = data_sizes(em, y, node.inputs[1]) if _run_time(y) else list(y.aval.shape)
    ones = [_one(d) for d in x.aval.shape]
    for d, full, one in zip(x.aval.shape, dims[lead:], ones):
        if not one and (isinstance(d, RunDim) or isinstance(full, str)):
            em.size_check(f"{d} == {full}")
    out = em.alloc(y, shape=dims)
    copy_loops(em, dims, out, lambda i: i,
               lambda i: em.read(x, ["0" if one else v for v, one in zip(i[lead:], ones)]))


def _one(d):
    """Whether size ``d`` broadcasts: a 1 (a guard if read from the inputs), never a size only
    the run knows (checked equal to the target instead)."""
    return not isinstance(d, RunDim) and d == 1


@stmt_op("SumToShape", sizes_from_data=True)
def _sum_to_shape(em, node, shape):
    """Every element of ``g`` added into the target element it was broadcast from. A target
    size the run gives (``data_sizes``) is summed over where it is 1, checked equal to
    ``g``'s elsewhere, at run time."""
    g, (y,) = node.inputs[0], node.outputs
    target = data_sizes(em, y, node.inputs[1]) if _run_time(y) else list(y.aval.shape)
    if not any(isinstance(t, str) for t in target) and _same_shape(g.aval.shape, target):
        em.bind(y, em.ref(g))
        return
    lead = len(g.aval.shape) - len(target)
    if not target:
        acc = em.fresh("acc")
        em.line(f"{acc} = {lit(0, y.aval.dtype)}")
        with em.loops(g.aval.shape) as idx:
            em.line(f"{acc} += {em.read(g, idx)}")
        em.define(y, acc)
        return
    steps = []                  # per target dim: "0" (summed), None (kept) or a 0/1 variable
    for t, d in zip(target, g.aval.shape[lead:]):
        if isinstance(t, str):
            step = em.fresh("b")
            em.size_check(f"{t} == 1 or {t} == {d}")
            em.line(f"{step} = 0 if {t} == 1 else 1")
            steps.append(step)
        else:
            steps.append("0" if _one(t) else None)
    out = em.alloc(y, fill=lit(0, y.aval.dtype), shape=target)
    with em.loops(g.aval.shape) as idx:
        at = [v if b is None else b if b == "0" else f"{v} * {b}" for v, b in zip(idx[lead:], steps)]
        em.line(f"{out}[{index(at)}] += {em.read(g, idx)}")


def _same_shape(a, b):
    """Equal shapes: a decision (guards) on sizes read from the inputs, none on sizes only the
    run knows (the loop then sums, which is right either way)."""
    if any(isinstance(d, RunDim) for d in list(a) + list(b)):
        return same_shape(a, b)
    return tuple(a) == tuple(b)
