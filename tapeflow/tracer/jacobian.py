"""Jacobians as one vectorized program instead of a Python loop of reverse sweeps.

``GradientTape.jacobian``/``batch_jacobian`` come here (unless ``experimental_use_pfor``
is False). The tape's reverse sweep becomes a graph (``tape_graph.reverse_graph``), the
graph is batched over a stack of one-hot seeds (``passes.vectorize``) and run once.

Mode: reverse mode seeds the target (one seed per target element), forward mode seeds
the source (one per source element) through the transposed reverse graph
(``transpose.forward_graph``). ``TAPEFLOW_JACOBIAN_MODE`` = auto (default: whichever
needs fewer seeds; reverse on a tie, so Hessians stay reverse-over-reverse), forward or
reverse. The program runs:

- eagerly with no tape recording: on NumPy (``run_graph``), and, once the same recorded
  structure has been seen ``TAPEFLOW_COMPILE_TAPE_AFTER`` times (default 3; 0 turns it
  off), as a program compiled by the selected backend and cached by structure: eager
  code gets compiled Jacobians ("compile a tape"). The compile is tiered (tiers.py): the
  interpreter keeps answering until the program is ready, so eager code never pauses;
  ``TAPEFLOW_TIERED=0`` waits instead;
- inside ``tapeflow.function``, or while an outer tape records: through dispatch
  (``replay``), so the ops land in the traced graph or on the outer tape (Hessians).

Structure: when the record proves target row b depends on source row b only
(``passes.rows``), the full Jacobian is the batch Jacobian scattered onto the diagonal,
computed with one seed per target column instead of one per target element.

Memory: seeds are processed in chunks so that the batched program's values stay within
``TAPEFLOW_JACOBIAN_BUDGET_MB`` (default 256 MiB, estimated from the reverse graph's
value sizes per seed).
"""
import weakref

import numpy as np

from .. import env
from ..autodiff import tape as _tape
from ..autodiff.backprop import Plan
from ..ir.graph import Graph, Value, constant_of
from ..ir.opdef import OPS, AVal
from ..ir.shapes import num_elements
from ..ops import array, math, reduce
from ..ops.indexed_slices import IndexedSlices
from ..passes.rows import entry_ops, rows_independent
from ..passes.sink_layout import fold_matmul_transposes, sink_layout
from ..passes.vectorize import Builder, Identity, vectorize
from ..runtime.interpret import replay, run_graph
from ..runtime.recorder import STATE
from ..runtime.registry import KERNELS
from ..runtime.tensor import wrap
from . import context, dynamic_jacobian
from .engine import compile as compile_graph, mode_for
from .tape_graph import reverse_graph, saved_tensors, structure_key
from .transpose import forward_graph

_PROGRAMS = {}       # (structure key, chunk) -> _Cached
_MAX_PROGRAMS = 128
LAST = []            # the Vectorized programs of the latest jacobian call (for dump/debugging)
REPORTS = weakref.WeakKeyDictionary()   # traced Graph -> [(mode, Vectorized)] inlined into it (dump)


class _Cached:
    __slots__ = ("vec", "hits", "program")

    def __init__(self, vec):
        self.vec, self.hits, self.program = vec, 0, None


def budget_bytes():
    return int(env.get("TAPEFLOW_JACOBIAN_BUDGET_MB") * 2 ** 20)


def _compile_after():
    return env.get("TAPEFLOW_COMPILE_TAPE_AFTER")


def _per_seed_bytes(rg):
    """Bytes one seed row costs in the batched program (every value of the reverse graph)."""
    total = 0
    for v in [rg.graph.inputs[0]] + [o for n in rg.graph.nodes for o in n.outputs]:
        total += (num_elements(v.aval.shape) or 1) * v.aval.dtype.np.itemsize
    return max(total, 1)


def _symbolic_or_taped(args):
    if context.current() is not None:
        return True
    if not STATE.tapes:
        return False
    ids = [a._id for a in args]
    return any(rec.tracks(i) for rec in STATE.tapes for i in ids)


def run_seeds(rg, seed_axes, args, finish, mode="reverse", dense=False):
    """The reverse (or forward) graph on the identity seeds (row j one-hot at flat position
    j over ``seed_axes`` of its seed input; None: all axes), each output then shaped by its
    ``finish`` spec (see ``_emit_finish``). Returns one tensor per graph output.

    ``dense``: the seeds as dense one-hot rows rather than kept diagonal, and a scattered
    batch jacobian's off-diagonal blocks as the reverse sweep of a zero seed gives them:
    TensorFlow's per-row values even where they are inf or NaN (``exact_where_not_finite``).
    """
    if dense:
        return _run_dense(rg, seed_axes, args, finish, mode)
    seed_shape = tuple(rg.graph.inputs[0].aval.shape)
    axes = tuple(range(len(seed_shape))) if seed_axes is None else tuple(seed_axes)
    n = int(np.prod([seed_shape[a] for a in axes]))
    chunk = max(1, min(n, budget_bytes() // _per_seed_bytes(rg)))
    via_dispatch = _symbolic_or_taped(args)
    whole = chunk >= n
    pieces = []
    LAST.clear()
    for start in range(0, n, chunk):
        size = min(chunk, n - start)
        cached = _vectorized(rg, size, Identity(axes, start), finish if whole else None)
        LAST.append(cached.vec)
        ctx = context.current()
        if ctx is not None:
            REPORTS.setdefault(ctx.graph, []).append((mode, cached.vec))
        if via_dispatch:
            pieces.append(replay(cached.vec.graph, list(args)))
        else:
            pieces.append([wrap(a) for a in _program(cached, rg)(*[a._value for a in args])])
    if whole:
        return pieces[0]
    outs = [array.concat([p[k] for p in pieces], 0) for k in range(len(pieces[0]))]
    return [replay(_finish_graph(o.aval, spec), [o])[0] for o, spec in zip(outs, finish)]


def _run_dense(rg, seed_axes, args, finish, mode):
    seed_aval = rg.graph.inputs[0].aval
    shape = tuple(seed_aval.shape)
    axes = tuple(range(len(shape))) if seed_axes is None else tuple(seed_axes)
    n = int(np.prod([shape[a] for a in axes]))
    offs = [None] * len(finish)
    if any(spec is not None and spec[0] == "scatter" for spec in finish):
        # off the batch diagonal, row b' of the source sees a zero seed (rows are independent)
        zero = replay(rg.graph, [wrap(np.zeros(shape, seed_aval.dtype.np))] + list(args))
        offs = [z if spec is not None and spec[0] == "scatter" else None
                for z, spec in zip(zero, finish)]
    key = None if rg.key is None else (rg.key, n, axes, finish, "dense")
    cached = _PROGRAMS.get(key) if key is not None else None
    if cached is None:
        vec = vectorize(rg.graph, [True] + [False] * (len(rg.graph.inputs) - 1), n)
        vec.graph = _with_finish(vec.graph, n, finish, [o is not None for o in offs])
        cached = _Cached(vec)
        if key is not None:
            _PROGRAMS[key] = cached
    eye = np.eye(n, dtype=seed_aval.dtype.np)
    sel = eye.reshape((n,) + tuple(shape[a] if a in axes else 1 for a in range(len(shape))))
    seeds = wrap(np.ascontiguousarray(np.broadcast_to(sel, (n,) + shape)))
    return replay(cached.vec.graph, [seeds] + list(args) + [o for o in offs if o is not None])


def _may_not_be_finite(graph, known=None):
    """``graph`` or a graph nested in it has an op that can make an inf or NaN from finite
    values (``OpDef.non_finite``: a division by zero, the root or log of zero): only where
    one occurs can the diagonal seeds differ from TensorFlow. ``known``: {input value id:
    array} of small inputs whose values are known (a saved exponent)."""
    for node in graph.nodes:
        op = OPS.get(node.op)
        if op is not None and op.non_finite and not _whole_power(node, known or {}):
            return True
        for value in node.attrs.values():
            if isinstance(value, Graph) and _may_not_be_finite(value):
                return True
    return False


def _known_inputs(rg):
    """{input value id: array} of the reverse graph's small inputs known now: a concrete
    tensor's value, or a symbolic one's constant (inside a function)."""
    known = {}
    for v, arg in zip(rg.graph.inputs[1:], rg.args()):
        if num_elements(v.aval.shape) > 16:
            continue
        value = getattr(arg, "value", None)
        if isinstance(value, Value) and constant_of(value) is not None:
            known[v.id] = constant_of(value)
        elif hasattr(arg, "_value"):
            known[v.id] = np.asarray(arg._value)
    return known


def _whole_power(node, known):
    """A ``Pow`` by a constant of whole numbers >= 0 (``x ** 2`` and its gradient's
    ``x ** (2 - 1)``): finite for finite x."""
    if node.op != "Pow":
        return False
    e = _constant(node.inputs[1], known)
    return e is not None and bool(np.all((e >= 0) & (e == np.floor(e))))


def _constant(value, known, depth=4):
    """The array of a value computed from constants and ``known`` inputs by elementwise ops
    that cannot make an inf or NaN (the gradient of ``x ** 2`` raises to ``2 - 1``), else None."""
    if value.id in known:
        return known[value.id]
    node = value.node
    if node is None or depth == 0:
        return None
    if constant_of(value) is not None:
        return constant_of(value)
    op = OPS.get(node.op)
    if op is not None and op.kind == "elementwise" and op.pure and not op.non_finite \
            and not op.multi_output and node.op in KERNELS:
        args = [_constant(v, known, depth - 1) for v in node.inputs]
        if any(a is None for a in args):
            return None
        return np.asarray(KERNELS[node.op](*args, **node.attrs))
    return None


def exact_where_not_finite(rg, fast, exact):
    """``fast`` (tensors from one-hot seeds kept diagonal, ``passes.vectorize``), or where one
    holds an inf or NaN, ``exact()`` (the reverse program on dense one-hot seeds).

    The diagonal form multiplies a row's values by the one-hot pattern, assuming the reverse
    sweep is linear and maps a zero seed to zero. TensorFlow's per-row gradient is not, at
    inf: 0 * inf is NaN, and its SqrtGrad gives 0 for a zero seed. So the jacobian of
    ``sqrt(clip_by_value(x, 0, 10))`` at x = [-1, 0, 0.25, 4] has the row [0, inf, 0, 0] in
    TensorFlow 2.21 where the diagonal form gives [nan, inf, nan, nan]. While every value is
    finite the two agree, so the dense program runs only when the fast one meets a
    non-finite value: checked here eagerly, by a ``cond`` in the graph inside a function.
    """
    if not _may_not_be_finite(rg.graph, _known_inputs(rg)):
        return fast
    if context.current() is None:
        if all(t is None or np.isfinite(np.asarray(t._value)).all() for t in fast):
            return fast
        return exact()
    from .control import cond   # control.py imports the tracer's context, as this module does
    kept = [t for t in fast if t is not None]
    finite = reduce.reduce_all(array.stack([reduce.reduce_all(math.is_finite(t)) for t in kept]))
    chosen = iter(cond(finite, lambda: [math.identity(t) for t in kept],
                       lambda: [t for t in exact() if t is not None]))
    return [None if t is None else next(chosen) for t in fast]


def _vectorized(rg, size, seeds, finish):
    key = None if rg.key is None else (rg.key, size, seeds, finish)
    cached = _PROGRAMS.get(key) if key is not None else None
    if cached is None:
        flags = [seeds] + [False] * (len(rg.graph.inputs) - 1)
        vec = vectorize(rg.graph, flags, size)
        if finish is not None:
            vec.graph = _with_finish(vec.graph, size, finish)
        cached = _Cached(vec)
        if key is not None:
            if len(_PROGRAMS) >= _MAX_PROGRAMS:
                _PROGRAMS.pop(next(iter(_PROGRAMS)))
            _PROGRAMS[key] = cached
    return cached


def _source_avals(graph, finish):
    """Per output, the aval of its source (for a zero seed's off-diagonal blocks), or None."""
    out = []
    for v, spec in zip(graph.outputs, finish):
        if spec is None or spec[0] != "scatter":
            out.append(None)
            continue
        out.append(AVal(tuple(spec[2]), v.aval.dtype))
    return out


def _emit_finish(b, v, spec, off=None):
    """Shape a stacked result as the caller wants it.

    Reverse mode stacks one row per target seed, forward mode (``spec[3]``) one per source
    seed. ("full", tshape, sshape, fwd): target.shape + source.shape, from [n_t, *source]
    or [n_s, *target]. ("batch", ...): per-example blocks [batch, *t1, *s1], from
    [t_width, batch, *s1] or [s_width, batch, *t1]. ("scatter", ...): that batch jacobian
    put on the batch diagonal of target.shape + source.shape (zeros elsewhere).
    """
    kind, tshape, sshape, forward = spec
    if kind == "full":
        if forward:
            v = b.reshape(v, (num_elements(sshape), num_elements(tshape)))
            v = b.emit1("Transpose", [v], {"perm": (1, 0)})
        return b.reshape(v, tshape + sshape)
    batch, width, s1 = tshape[0], num_elements(tshape[1:]), num_elements(sshape[1:])
    if forward:
        v = b.reshape(v, (s1, batch, width))
        v = b.emit1("Transpose", [v], {"perm": (1, 2, 0)})
    else:
        v = b.reshape(v, (width, batch, s1))
        v = b.emit1("Transpose", [v], {"perm": (1, 0, 2)})
    if kind == "batch":
        return b.reshape(v, tshape + sshape[1:])
    v = b.reshape(v, (batch, width, 1, s1))
    if off is not None:     # exact: the zero seed's gradient off the diagonal (run_seeds)
        on = b.graph.const(np.eye(batch, dtype=bool).reshape(batch, 1, batch, 1))
        off = b.reshape(off, (1, 1, batch, s1))
        full = b.emit1("BroadcastTo", [v], {"shape": (batch, width, batch, s1)})
        return b.reshape(b.emit1("SelectV2", [on, full, off]), tshape + sshape)
    eye = b.graph.const(np.eye(batch, dtype=v.aval.dtype.np).reshape(batch, 1, batch, 1))
    return b.reshape(b.emit1("Mul", [v, eye]), tshape + sshape)


def _with_finish(graph, size, finish, offs=None):
    """``graph``'s outputs finished; ``offs[k]``: output k's off-diagonal blocks are a new
    last input (the source-shaped gradient of a zero seed), not zeros."""
    offs = offs or [False] * len(finish)
    extra = [Value(aval) if off else None
             for aval, off in zip(_source_avals(graph, finish), offs)]
    b = Builder(graph.inputs, size)
    b.graph = Graph(list(graph.inputs) + [e for e in extra if e is not None], list(graph.nodes), [])
    b.graph.outputs = [v if spec is None else _emit_finish(b, v, spec, off)
                       for v, spec, off in zip(graph.outputs, finish, extra)]
    return fold_matmul_transposes(sink_layout(b.graph))


def _finish_graph(aval, spec):
    v = Value(aval)
    b = Builder([v], aval.shape[0])
    b.graph.outputs = [v if spec is None else _emit_finish(b, v, spec)]
    return b.graph


def _program(cached, rg):
    """run_graph until the structure has been seen often enough, then a compiled program."""
    if cached.program is not None:
        return cached.program
    after = _compile_after()
    if rg.key is not None and after > 0:
        cached.hits += 1
        if cached.hits >= after:
            # tiered by default: the interpreter answers until the program is compiled
            cached.program = compile_graph(cached.vec.graph, "jacobian", mode_for(None))
            return cached.program
    graph = cached.vec.graph
    return lambda *a: run_graph(graph, *a)


# -- the tape's entry points -----------------------------------------------------------------

def mode():
    """``TAPEFLOW_JACOBIAN_MODE``: "auto" (the default: forward mode when it needs fewer
    seeds), "forward" or "reverse"."""
    return env.get("TAPEFLOW_JACOBIAN_MODE")


def _forward(n_forward, n_reverse):
    m = mode()
    return m == "forward" or (m == "auto" and n_forward < n_reverse)


class _UnknownSizes(Exception):
    """The reverse graph has sizes only the run time knows (the tape recorded ops of a
    function traced with None dims): no static seed stack can batch it."""


def _unknown_sizes(graph):
    return any(None in v.aval.shape for v in graph.inputs) or any(
        None in v.aval.shape for n in graph.nodes for v in n.outputs)


def jacobian(rec, target, flat_sources, source_ids, zeros_if_unconnected):
    """Per source: a tensor of shape target.shape + source.shape, or None if unconnected.
    Where the reverse sweep has sizes only the run time knows, the loop over seeds of
    ``dynamic_jacobian`` (the same values: each row is the gradient of its own seed)."""
    try:
        return _jacobian(rec, target, flat_sources, source_ids, zeros_if_unconnected)
    except _UnknownSizes:
        return dynamic_jacobian.jacobian(rec, target, flat_sources, source_ids,
                                         zeros_if_unconnected)


def _jacobian(rec, target, flat_sources, source_ids, zeros_if_unconnected):
    tshape = tuple(target.shape)
    if not target.dtype.is_floating:    # TensorFlow gathers rows of the target, an op no
        return [wrap(np.zeros(tshape + tuple(s.shape), s.dtype.np))  # tape records
                if zeros_if_unconnected else None for s in flat_sources]
    n = num_elements(tshape)
    source_targets = {s._id: s.aval for s in flat_sources if s._id == target._id}
    plan = Plan(rec, [target._id])
    out = [None] * len(flat_sources)
    full = []
    ops = None
    for k, src in enumerate(flat_sources):
        sshape = tuple(src.shape)
        if n and len(tshape) >= 1 and len(sshape) >= 1 and tshape[0] == sshape[0] and tshape[0] > 1 \
                and src._id != target._id:
            ops = ops if ops is not None else entry_ops(reversed(plan.order))
            if rows_independent(ops, src._id, target._id, tshape[0]):
                out[k] = _batch(rec, plan, target, src, zeros_if_unconnected, "scatter")
                continue
        full.append(k)
    if not full:
        return out
    ids = [source_ids[k] for k in full]
    rg = reverse_graph(rec, [target._id], ids, [target.aval], source_targets, plan)
    if _unknown_sizes(rg.graph):
        raise _UnknownSizes
    connected = [(k, gi) for k, gi in zip(full, rg.grad_index) if gi is not None]
    grads = {}
    if n and connected:
        sizes = [num_elements(flat_sources[k].shape) for k, _ in connected]
        if _forward(sum(sizes), n):
            for (k, gi), size in zip(connected, sizes):
                spec = ("full", tshape, tuple(flat_sources[k].shape), True)
                if size:
                    frg = forward_graph(rg, gi)
                    reverse = tuple(spec[:3] + (False,) if i == gi else None
                                    for i in range(len(rg.graph.outputs)))
                    (grads[k],) = exact_where_not_finite(
                        rg, run_seeds(frg, None, frg.args(), (spec,), "forward"),
                        lambda gi=gi, reverse=reverse: [run_seeds(rg, None, rg.args(), reverse,
                                                                  dense=True)[gi]])
        else:
            finish = [None] * len(rg.graph.outputs)
            for k, gi in connected:
                finish[gi] = ("full", tshape, tuple(flat_sources[k].shape), False)
            stacked = exact_where_not_finite(
                rg, run_seeds(rg, None, rg.args(), tuple(finish)),
                lambda: run_seeds(rg, None, rg.args(), tuple(finish), dense=True))
            grads = {k: stacked[gi] for k, gi in connected}
    for k, gi in zip(full, rg.grad_index):
        shape = tshape + tuple(flat_sources[k].shape)
        if gi is None:
            out[k] = wrap(np.zeros(shape, target.dtype.np)) if zeros_if_unconnected else None
        else:
            out[k] = grads[k] if k in grads else wrap(np.zeros(shape, target.dtype.np))
    return out


def batch_jacobian(rec, target, source):
    """target.shape + source.shape[1:]; zeros for an unconnected source (as TensorFlow)."""
    try:
        return _batch(rec, Plan(rec, [target._id]), target, source, True, "batch")
    except _UnknownSizes:
        return dynamic_jacobian.batch_jacobian(rec, target, source)


def _batch(rec, plan, target, source, zeros_if_unconnected, kind):
    """The batch jacobian (kind "batch"), or it scattered on the diagonal ("scatter")."""
    tshape, sshape = tuple(target.shape), tuple(source.shape)
    batch = tshape[0]
    width, s_width = num_elements(tshape[1:]), num_elements(sshape[1:])
    shape = tshape + (sshape[1:] if kind == "batch" else sshape)
    source_targets = {source._id: source.aval} if source._id == target._id else {}
    if not target.dtype.is_floating:    # as in jacobian: TensorFlow's zeros of its dtype
        return wrap(np.zeros(shape, target.dtype.np))
    rg = reverse_graph(rec, [target._id], [source._id], [target.aval], source_targets, plan)
    if _unknown_sizes(rg.graph):
        raise _UnknownSizes
    if rg.grad_index[0] is None:
        return wrap(np.zeros(shape, target.dtype.np)) if zeros_if_unconnected else None
    if not width or not batch or not s_width:
        return wrap(np.zeros(shape, target.dtype.np))
    if _forward(s_width, width) and (kind == "scatter" or rows_independent(
            entry_ops(reversed(plan.order)), source._id, target._id, batch)):
        # Forward mode seeds a source column across the batch, so it sums over the source's
        # rows where TensorFlow's batch jacobian sums over the target's: the two agree only
        # when target row b depends on source row b alone.
        frg = forward_graph(rg, 0)
        (g,) = run_seeds(frg, range(1, len(sshape)), frg.args(), ((kind, tshape, sshape, True),),
                         "forward")
    else:
        (g,) = run_seeds(rg, range(1, len(tshape)), rg.args(), ((kind, tshape, sshape, False),))
    spec = ((kind, tshape, sshape, False),)
    (g,) = exact_where_not_finite(
        rg, [g], lambda: run_seeds(rg, range(1, len(tshape)), rg.args(), spec, dense=True))
    return g


__all__ = ["jacobian", "batch_jacobian", "run_seeds", "budget_bytes", "mode", "LAST"]


# -- compiled gradients of persistent tapes ----------------------------------------------------

_GRAD_HITS = {}      # structure key -> calls seen
_GRADS = {}          # structure key -> (ReverseGraph, program)


def compiled_gradient(rec, target_ids, flat_targets, source_ids, flat_sources, seeds):
    """{source id: Tensor or None} from a compiled reverse program, or None to use the sweep.

    For a persistent tape asked for the same structure's gradient repeatedly (eagerly, with
    nothing recording): from the ``TAPEFLOW_COMPILE_TAPE_AFTER``-th call the tape's reverse
    sweep runs as one compiled program fed with this record's saved tensors.
    """
    after = _compile_after()
    if after <= 0 or context.current() is not None or STATE.tapes:
        return None
    plan = Plan(rec, target_ids)
    source_targets = {s._id: s.aval for s in flat_sources if s._id in set(target_ids)}
    avals = [t.aval for t in flat_targets]
    key = structure_key(plan, target_ids, source_ids, avals, source_targets)
    if key is None:
        return None
    hit = _GRADS.get(key)
    if hit is None:
        n = _GRAD_HITS[key] = _GRAD_HITS.get(key, 0) + 1
        if n < after:
            return None
        rg = reverse_graph(rec, target_ids, source_ids, avals, source_targets, plan,
                           keep_slices=True)
        if rg.key is None:
            return None
        if len(_GRADS) >= _MAX_PROGRAMS:
            _GRADS.pop(next(iter(_GRADS)))
        program = compile_graph(rg.graph, "tape_gradient", mode_for(None)) if rg.graph.outputs else None
        hit = _GRADS[key] = (rg, program)
        _GRAD_HITS.pop(key, None)
    rg, program = hit
    arrays = [np.ones(a.shape, a.dtype.np) if s is None else np.asarray(s._value, a.dtype.np)
              for s, a in zip(seeds, avals)]
    arrays += [t._value for t in saved_tensors(plan)]
    outs = program(*arrays) if program is not None else ()
    return {s: None if gi is None else
            IndexedSlices(*(wrap(np.asarray(outs[i])) for i in gi)) if isinstance(gi, tuple) else
            wrap(np.asarray(outs[gi])) for s, gi in zip(source_ids, rg.grad_index)}


_tape.VECTORIZED.jacobian = jacobian
_tape.VECTORIZED.batch_jacobian = batch_jacobian
_tape.VECTORIZED.compiled_gradient = compiled_gradient
