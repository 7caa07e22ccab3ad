"""The tape is a trace: a tape's record, turned into the IR graph of its reverse sweep.

``reverse_graph`` runs the ordinary ``backprop.Plan`` inside a fresh trace, with symbolic
seeds and with every tensor the gradient rules saved replaced by a symbolic input. The
result is a graph ``(seeds..., saved..., captured...) -> gradients`` built by exactly the
rules eager code uses (values and None pattern agree by construction). It can then be
vectorized over a stack of seeds (jacobians), compiled, or replayed through dispatch.

Its ``key`` depends only on the structure of the record (ops, attributes, wiring, shapes
and dtypes), not on tensor values or ids: two tapes that recorded the same computation
share a key, so a graph (and a compiled program) built for one serves the other with
its own saved tensors.
"""
import numpy as np

from ..ir.graph import Graph
from ..autodiff.backprop import Plan
from ..ops.indexed_slices import IndexedSlices
from ..runtime.recorder import Entry
from ..runtime.tensor import convert_to_tensor
from .context import TraceContext


class _View:
    """What ``Plan`` reads of a Recorder: ``tensor_op`` and ``entries``."""

    __slots__ = ("tensor_op", "entries")

    def __init__(self, tensor_op, entries):
        self.tensor_op, self.entries = tensor_op, entries


class ReverseGraph:
    """``graph``: inputs = seeds, then ``saved``, then ``captured``; outputs = the non-None
    gradients, ``grad_index[k]`` is the output of source k (None: unconnected)."""

    def __init__(self, graph, n_seeds, saved, captured, grad_index, key):
        self.graph, self.n_seeds = graph, n_seeds
        self.saved, self.captured = saved, captured
        self.grad_index, self.key = grad_index, key

    def args(self):
        """The tensors to feed after the seeds (this record's saved tensors, then captures)."""
        return list(self.saved) + list(self.captured)


def saved_tensors(plan):
    """Tensors the plan's rules read, each once, in a deterministic order."""
    out, seen = [], set()
    for e in plan.order:
        for t in (*e.inputs, *e.outputs):
            if t is not None and t._id not in seen:
                seen.add(t._id)
                out.append(t)
    return out


_GRAPHS = {}     # structure key -> ReverseGraph (graphs without captures only)
_MAX_GRAPHS = 256


def reverse_graph(rec, target_ids, source_ids, seed_avals, source_targets, plan=None,
                  keep_slices=False):
    """The ReverseGraph of ``rec`` for seeds (one aval per target) and sources. With
    ``keep_slices`` a gradient that is an IndexedSlices is three outputs (values, indices,
    dense_shape) and its ``grad_index`` the tuple of their indices, as ``tape.gradient``
    returns it; else every gradient is dense (jacobians)."""
    plan = plan or Plan(rec, target_ids)
    saved = saved_tensors(plan)
    key = structure_key(plan, target_ids, source_ids, seed_avals, source_targets)
    if key is not None:
        key = (key, keep_slices)
    hit = _GRAPHS.get(key) if key is not None else None
    if hit is not None:
        return ReverseGraph(hit.graph, hit.n_seeds, saved, [], hit.grad_index, key)
    ctx = TraceContext()
    with ctx:
        seeds = [ctx.input(a) for a in seed_avals]
        sym = {t._id: ctx.input(t.aval) for t in saved}
        entries = list(rec.entries)
        index = {id(e): i for i, e in enumerate(entries)}
        for e in plan.order:
            entries[index[id(e)]] = Entry(
                e.op, e.attrs, e.rule, e.input_ids, e.output_ids,
                tuple(None if t is None else sym[t._id] for t in e.inputs),
                tuple(None if t is None else sym[t._id] for t in e.outputs), e.in_avals, e.out_avals)
        grads = Plan(_View(rec.tensor_op, entries), target_ids).run(
            source_ids, seeds, source_targets, keep_slices=keep_slices)
        outputs, grad_index = [], []
        for s in source_ids:
            g = grads[s]
            if g is None:
                grad_index.append(None)
            elif isinstance(g, IndexedSlices):
                grad_index.append(tuple(range(len(outputs), len(outputs) + 3)))
                outputs += [ctx.value_of(convert_to_tensor(t))
                            for t in (g.values, g.indices, g.dense_shape)]
            else:
                grad_index.append(len(outputs))
                outputs.append(ctx.value_of(g))
    graph = ctx.graph
    graph.outputs = outputs
    n_own = len(seed_avals) + len(saved)
    captured = [ctx.captures[v.id] for v in graph.inputs[n_own:]]
    if captured:
        key = None
    elif key is not None:
        if len(_GRAPHS) >= _MAX_GRAPHS:
            _GRAPHS.pop(next(iter(_GRAPHS)))
        _GRAPHS[key] = ReverseGraph(graph, len(seed_avals), (), [], grad_index, key)
    return ReverseGraph(graph, len(seed_avals), saved, captured, grad_index, key)


def structure_key(plan, target_ids, source_ids, seed_avals, source_targets):
    """A hashable key of the record's structure, or None if an attribute cannot be keyed."""
    names = {}

    def n(tid):
        return names.setdefault(tid, len(names))

    parts = []
    try:
        for e in plan.order:
            parts.append((e.op, _freeze(e.attrs), tuple(n(i) for i in e.input_ids),
                          tuple(n(o) for o in e.output_ids), tuple(e.in_avals), tuple(e.out_avals),
                          tuple(t is not None for t in e.inputs), tuple(t is not None for t in e.outputs),
                          e.rule))
    except TypeError:
        return None
    return (tuple(parts), tuple(n(t) for t in target_ids), tuple(n(s) for s in source_ids),
            tuple(seed_avals), tuple(sorted((n(i), a) for i, a in source_targets.items())),
            frozenset(n(i) for i in plan.consumed_untracked))


def _freeze(v):
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, np.ndarray):
        return (v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, Graph):
        raise TypeError("graph-valued attribute")
    hash(v)
    return v


__all__ = ["ReverseGraph", "reverse_graph", "saved_tensors", "structure_key"]
