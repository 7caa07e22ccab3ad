"""Reverse-mode sweep over a tape's record, with TensorFlow's exact rules.

Mirrors TensorFlow's ``ComputeGradient``: only ops reachable backwards from
the targets run; an op runs when any of its outputs has a gradient, with zeros
for the others; a target gets ones (or its output gradient) if a recorded op
produced it or if it is also a source; a source no gradient reached is None.
Every gradient is computed with tapeflow ops, so an outer tape records it.
"""
import collections
import threading
from contextlib import contextmanager

import numpy as np

from ..errors import user_position
from ..ops import array, creation, reduce
from ..ops.indexed_slices import IndexedSlices, aggregate, dense
from ..runtime.recorder import current_trace
from ..runtime.registry import SLICES_GRADS
from ..runtime.tensor import Tensor, Variable, convert_to_tensor, wrap

# tensor id -> the user line of the op that made it, while a rebuilt graph is differentiated
# (``forward_lines``): TensorFlow names gradient ops after the op they differentiate.
_FORWARD = threading.local()


@contextmanager
def forward_lines(lines):
    """Inside, the ops the sweep traces for a recorded op whose output id is in ``lines``
    (``interpret.replay`` fills it) get that op's user line as ``Node.line``, in place of the
    line of whoever asked for the gradient (library code rebuilding a graph)."""
    saved = getattr(_FORWARD, "lines", None)
    _FORWARD.lines = lines
    try:
        yield
    finally:
        _FORWARD.lines = saved


def _carry_line(trace, start, line, ambient):
    """Nodes traced since ``start`` that got the ambient line take ``line`` (a gradient
    function replayed from a graph keeps its own lines)."""
    if trace is not None and line is not None:
        for node in trace.graph.nodes[start:]:
            if node.line == ambient:
                node.line = line


class _NotSaved:
    """Stands in for a tensor the rule did not declare; any use is a rule bug."""

    __slots__ = ("_what",)

    def __init__(self, what):
        self._what = what

    def __getattr__(self, name):
        raise AssertionError(f"gradient rule reads {self._what}, which it did not declare")


class OpView:
    """What a gradient rule sees (TensorFlow's ``op``): saved inputs/outputs, attrs, avals."""

    __slots__ = ("type", "attrs", "inputs", "outputs", "in_avals", "out_avals", "wants")

    def __init__(self, entry, wants):
        self.type = entry.op
        self.attrs = entry.attrs
        self.inputs = tuple(t if t is not None else _NotSaved(f"input {i} of {entry.op}")
                            for i, t in enumerate(entry.inputs))
        self.outputs = tuple(t if t is not None else _NotSaved(f"output {i} of {entry.op}")
                             for i, t in enumerate(entry.outputs))
        self.in_avals, self.out_avals, self.wants = entry.in_avals, entry.out_avals, wants

    @property
    def name(self):
        return self.type

    def get_attr(self, name):
        return self.attrs[name]


def ones(aval):
    if None in aval.shape:   # inside a trace with unknown dims: a DynamicShape's sizes
        return creation.ones(aval.shape, aval.dtype)
    return wrap(np.ones(aval.shape, aval.dtype.np))


def zeros(aval):
    if None in aval.shape:
        return creation.zeros(aval.shape, aval.dtype)
    return wrap(np.zeros(aval.shape, aval.dtype.np))


def add_n(grads):
    """Several gradients of one tensor as one: TensorFlow's aggregation (``aggregate``)."""
    return aggregate(grads)


def _call_rule(e, view, out_grads):
    if any(isinstance(g, IndexedSlices) for g in out_grads):
        sliced = SLICES_GRADS.get(e.op)     # the few rules that pass one on (registry.py)
        if sliced is not None and len(out_grads) == 1:
            return sliced(view, out_grads[0])
        out_grads = [dense(g) for g in out_grads]
    return e.rule.fn(view, *out_grads)


def _tf_order(entries, needed, tensor_op, target_ids):
    """The needed entries in the order TensorFlow's tape runs their gradients (``ComputeGradient``):
    a queue from the targets' ops, an op joining it once every use of its outputs has run, so
    gradients arriving at one tensor keep TensorFlow's order (IndexedSlices concatenate in it)."""
    usage = {}
    for i in needed:
        for t in entries[i].input_ids:
            usage[t] = usage.get(t, 0) + 1
    missing = {}
    for t in usage:
        idx = tensor_op.get(t, -1)
        if idx in needed:
            missing[idx] = missing.get(idx, 0) + 1
    first = []    # TensorFlow starts from the op of the last target
    for t in reversed(target_ids):
        idx = tensor_op.get(t, -1)
        if idx in needed and idx not in missing and idx not in first:
            first.append(idx)
    first += [i for i in sorted(needed, reverse=True) if i not in missing and i not in first]
    queue, order = collections.deque(reversed(first)), []
    while queue:
        idx = queue.pop()
        order.append(entries[idx])
        for t in entries[idx].input_ids:
            if t not in usage:
                continue
            usage[t] -= 1
            if usage[t]:
                continue
            op = tensor_op.get(t, -1)
            if op in missing:
                missing[op] -= 1
                if not missing[op]:
                    queue.appendleft(op)
    return order


def unbroadcast(g, shape):
    """Sum ``g`` down to ``shape``: the one place broadcasting is undone for every rule."""
    gshape = tuple(g.shape)
    if None in gshape or None in tuple(shape):   # unknown dims (a trace): a DynamicShape
        return reduce.sum_to_shape(g, shape)
    shape = tuple(shape)
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    axes = list(range(lead)) + [i + lead for i, d in enumerate(shape) if d == 1 and gshape[i + lead] != 1]
    if axes:
        g = reduce.reduce_sum(g, axis=axes, keepdims=False)
    if tuple(g.shape) != shape:
        g = array.reshape(g, shape)
    return g


class Plan:
    """The entries reachable backwards from some targets, prepared once, run for many seeds."""

    def __init__(self, rec, target_ids):
        tensor_op, entries = rec.tensor_op, rec.entries
        needed, seen, stack = set(), set(), list(target_ids)
        while stack:
            tid = stack.pop()
            if tid in seen:
                continue
            seen.add(tid)
            idx = tensor_op.get(tid, -1)
            if idx == -1 or idx in needed:
                continue
            needed.add(idx)
            stack.extend(i for i in entries[idx].input_ids if i in tensor_op)
        self.order = [entries[i] for i in sorted(needed, reverse=True)]
        self._needed, self._tf_rank = needed, None
        # Untracked tensors that reachable ops consume: TensorFlow deletes gradients that
        # reach them, so an unwatched source gets None even when it is an op input.
        self.consumed_untracked = {i for e in self.order for i in e.input_ids if i not in tensor_op}
        self.tensor_op = dict(tensor_op)
        self.entries = entries
        self.target_ids = list(target_ids)

    def tf_rank(self):
        """{id(entry): its place in TensorFlow's order}: the order several IndexedSlices of one
        tensor are concatenated in (the dense sums keep the sweep's order)."""
        if self._tf_rank is None:
            order = _tf_order(self.entries, self._needed, self.tensor_op, self.target_ids)
            self._tf_rank = {id(e): k for k, e in enumerate(order)}
        return self._tf_rank

    def _combine(self, gl, ranks):
        if len(gl) == 1:
            return gl[0]
        if all(isinstance(g, IndexedSlices) for g in gl):    # concatenated: TF's order
            gl = [g for _, g in sorted(zip(ranks, gl), key=lambda p: p[0])]
        return add_n(gl)

    def target_aval(self, tid):
        idx = self.tensor_op.get(tid, -1)
        if idx == -1:
            return None
        e = self.entries[idx]
        return e.out_avals[e.output_ids.index(tid)]

    def run(self, sources, seeds, source_targets, keep_slices=False):
        """Gradients {source id: Tensor or None}.

        ``seeds``: per target, an output gradient or None (ones); ``source_targets``:
        {id: aval} of sources that are also targets. ``keep_slices``: a source's gradient may
        be an IndexedSlices (what ``tape.gradient`` returns); else it is densified.
        """
        grads, ranks = {}, {}   # tensor id -> its gradients; where each came from (tf_rank)
        for tid, seed in zip(self.target_ids, seeds, strict=True):
            if seed is not None:
                grads.setdefault(tid, []).append(seed)
                ranks.setdefault(tid, []).append(-1)
                continue
            aval = self.target_aval(tid)
            if aval is None:
                aval = source_targets.get(tid)
            if aval is not None:
                grads.setdefault(tid, []).append(ones(aval))
                ranks.setdefault(tid, []).append(-1)
        source_ids = {s for s in sources}
        tensor_op = self.tensor_op
        lines = getattr(_FORWARD, "lines", None)
        trace = current_trace() if lines else None
        ambient = user_position() if trace is not None else None   # what add_op gives them
        source_lines = {}   # source id -> line of the last op that sent it a gradient
        for e in self.order:
            start = len(trace.graph.nodes) if trace is not None else 0
            out_grads, any_grad = [], False
            for o, av in zip(e.output_ids, e.out_avals):
                gl = grads.get(o)
                if gl:
                    any_grad = True
                    g = self._combine(gl, ranks[o])
                    if o in source_ids:
                        grads[o], ranks[o] = [g], [-1]
                    else:
                        del grads[o], ranks[o]
                    out_grads.append(g)
                else:
                    out_grads.append(None)
            if not any_grad or e.rule.fn is None:
                continue
            if not e.rule.accepts_none:
                out_grads = [zeros(av) if g is None else g for g, av in zip(out_grads, e.out_avals)]
            wants = tuple(i in tensor_op for i in e.input_ids)
            in_grads = _call_rule(e, OpView(e, wants), out_grads)
            if in_grads is None or isinstance(in_grads, (Tensor, IndexedSlices)):
                in_grads = [in_grads]
            if len(in_grads) != len(e.input_ids):
                raise ValueError(f"gradient of {e.op} returned {len(in_grads)} gradients for "
                                 f"{len(e.input_ids)} inputs")
            for iid, g, av, want in zip(e.input_ids, in_grads, e.in_avals, wants):
                if g is None or not want:
                    continue
                if isinstance(g, IndexedSlices):
                    grads.setdefault(iid, []).append(g)
                    ranks.setdefault(iid, []).append(self.tf_rank()[id(e)])
                else:
                    if not isinstance(g, Tensor) and not hasattr(g, "aval"):
                        g = convert_to_tensor(g, dtype_hint=av.dtype)
                    grads.setdefault(iid, []).append(unbroadcast(g, av.shape))
                    ranks.setdefault(iid, []).append(0)     # dense: summed in this order
                if trace is not None and iid in source_ids:
                    source_lines[iid] = lines.get(e.output_ids[0])
            if trace is not None:
                _carry_line(trace, start, lines.get(e.output_ids[0]), ambient)
        out = {}
        for s in sources:
            gl = None if s in self.consumed_untracked else grads.get(s)
            start = len(trace.graph.nodes) if trace is not None else 0
            out[s] = None if not gl else self._combine(gl, ranks[s])
            if not keep_slices:
                out[s] = dense(out[s])
            if trace is not None:
                _carry_line(trace, start, source_lines.get(s), ambient)
        return out


def flat_ids(values, what):
    """(ids, tensors) for tensors/variables in a flat list; TypeError naming anything else."""
    ids = []
    for i, v in enumerate(values):
        if isinstance(v, (Tensor, Variable)) or hasattr(v, "aval"):
            ids.append(v._id)
        else:
            raise TypeError(f"{what}[{i}] must be a Tensor or Variable, got {type(v).__name__}: {v!r}")
    return ids


__all__ = ["Plan", "OpView", "unbroadcast", "flat_ids", "ones", "zeros"]
