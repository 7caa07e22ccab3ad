"""Vectorization (vmap/pfor): a Graph -> Graph adding a leading batch dimension to chosen inputs.

``vectorize(graph, batched, size)`` returns a graph computing, in one program, what
``graph`` computes for each of ``size`` stacked values of the ``batched`` inputs (the
other inputs are shared). Every value of the new graph is either *unbatched* (the same
for every batch row) or *batched* with the batch dimension at axis 0; each op is
rewritten by its batching rule (``passes.batching.BATCHERS``, declared per op family
like the kernels and gradient rules), which sees the new inputs and which of them are
batched. Ops whose inputs are all unbatched are copied as they are.

An op without a rule is executed by a loop over the batch inside the graph (unstack
the batched inputs, apply the op once per row, stack the results): correct but slow,
so it is *reported*: ``Vectorized.fallbacks`` names the ops, ``tapeflow dump`` shows
them, and a one-time ``VectorizeFallbackWarning`` says which op lacks a rule.

Identity seeds. A jacobian batches a reverse program over one-hot seeds: row j of the
seed stack is 1 at flat position j and 0 elsewhere. Such an input is given as an
``Identity`` flag; it is not an input of the new graph. It becomes a *diagonal* value
(``Diag``): ``V[j, *i] = D[*i]`` where the row-major index of ``i`` over the Diag's axes
is ``j + offset``, else 0, stored as D alone (the unbatched shape). Linear ops keep it
diagonal and cheap (``passes.batching.diag``: multiply by a value, reshape, transpose,
sum over other axes); a matmul contracting the diagonal axis gives a dense value with
no product at all (``D[.., j] * B[j, ..]``); any other op gets the dense one-hot stack.
"""
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..ir.graph import Graph, Value
from ..ir.opdef import OPS, AVal
from .batching import BATCHERS
from .batching.diag import DIAG_RULES
from .batching.flags import Diag, Identity, Scaled, structured
from .batching.scaled import SCALED_RULES, SCALED_STARTS


class VectorizeFallbackWarning(UserWarning):
    """An op without a batching rule ran as a loop over the batch."""


_warned = set()


@dataclass
class Vectorized:
    """The batched graph, its batch size and the ops that fell back to a loop (op names, in order)."""
    graph: Graph
    size: int
    fallbacks: list = field(default_factory=list)
    out_flags: list = field(default_factory=list)   # per output: batched ([size, *shape]) or not

    def report(self):
        if not self.fallbacks:
            return f"vectorized over a batch of {self.size}: every op has a batching rule"
        return (f"vectorized over a batch of {self.size}; looped over the batch (no batching rule): "
                + ", ".join(sorted(set(self.fallbacks))))


class Builder:
    """The graph being built, with the helpers batching rules share."""

    def __init__(self, inputs, size):
        self.graph = Graph(inputs=inputs)
        self.size = size
        self._dense = {}

    def emit(self, op, inputs, attrs=None):
        """Append ``op`` (outputs inferred from its OpDef); returns the list of output Values."""
        attrs = dict(attrs or {})
        opdef = OPS[op]
        out = opdef.infer([v.aval for v in inputs], **attrs)
        out = list(out) if opdef.multi_output else [out]
        return self.graph.add(op, inputs, attrs, out).outputs

    def emit1(self, op, inputs, attrs=None):
        return self.emit(op, inputs, attrs)[0]

    def reshape(self, v, shape):
        shape = tuple(shape)
        if tuple(v.aval.shape) == shape:
            return v
        return self.emit1("Reshape", [v], {"shape": shape})

    def align(self, v, rank):
        """A batched ``v`` ([B, *s]) as [B, 1.., *s] with ``rank`` dims after the batch dim."""
        s = tuple(v.aval.shape[1:])
        if len(s) >= rank:
            return v
        return self.reshape(v, (self.size,) + (1,) * (rank - len(s)) + s)

    def diag(self, d, axes, offset):
        """A Diag flag for value ``d``, or ``(d, False)``-like scalars: drops unit axes."""
        axes = tuple(a for a in axes if d.aval.shape[a] != 1)
        return Diag(axes, offset)

    def dense(self, v, flag):
        """The dense [B, *shape] form of a Diag value (the one-hot stack times D) or of a
        Scaled one (base times coefficient)."""
        key = (v.id, flag)
        hit = self._dense.get(key)
        if hit is not None:
            return hit
        if isinstance(flag, Scaled):
            out = self._dense[key] = self.emit1("Mul", [v, flag.coef])
            return out
        shape = tuple(v.aval.shape)
        total = 1
        for a in flag.axes:
            total *= shape[a]
        eye = np.eye(total, dtype=v.aval.dtype.np)[flag.offset:flag.offset + self.size]
        sel = eye.reshape((self.size,) + tuple(shape[a] if a in flag.axes else 1
                                                for a in range(len(shape))))
        out = self.emit1("Mul", [self.reshape(v, (1,) + shape), self.graph.const(sel)])
        self._dense[key] = out
        return out

    def vectorize(self, graph, batched, broadcast=None):
        """A nested graph (an If branch, a loop body) vectorized over this builder's batch,
        for a rule to emit (``batching.control``; the rules cannot import this module);
        ``broadcast``: as ``vectorize``'s, then the ``Vectorized`` is returned."""
        out = vectorize(graph, batched, self.size, warn=False, broadcast=broadcast)
        return out.graph if broadcast is None else out

    def broadcast(self, v, batched, shape):
        """``v`` as a batched value of exactly [B, *shape]."""
        if batched:
            v = self.align(v, len(shape))
        full = (self.size,) + tuple(shape)
        if tuple(v.aval.shape) == full:
            return v
        return self.emit1("BroadcastTo", [v], {"shape": full})


def vectorize(graph, batched, size, warn=True, rules=None, broadcast=None):
    """Batch ``graph`` over ``size`` rows of the inputs flagged in ``batched``.

    A flag is True (batched: the new graph takes the input as [size, *shape]), False
    (shared) or an ``Identity`` (one-hot seeds, built inside: not an input of the new
    graph). Every output is returned as [size, *shape], broadcasting outputs that do not
    depend on a batched input; ``broadcast`` (a flag per output) limits that to the flagged
    outputs (a loop body keeps an unbatched loop variable unbatched): ``out_flags`` says which
    outputs are batched.
    """
    if rules is None:
        rules = BATCHERS
    if len(batched) != len(graph.inputs):
        raise ValueError(f"vectorize: {len(batched)} batch flags for {len(graph.inputs)} inputs")
    new_inputs, env, seeds = [], {}, []
    for v, flag in zip(graph.inputs, batched, strict=True):
        if isinstance(flag, Identity):
            seeds.append((v, flag))
            continue
        nv = Value(AVal((size,) + tuple(v.aval.shape), v.aval.dtype)) if flag else v
        new_inputs.append(nv)
        env[v.id] = (nv, bool(flag))
    b = Builder(new_inputs, size)
    for v, flag in seeds:
        ones = b.graph.const(np.ones(v.aval.shape, v.aval.dtype.np))
        axes = tuple(range(len(v.aval.shape))) if flag.axes is None else tuple(flag.axes)
        env[v.id] = (ones, b.diag(ones, axes, flag.offset))
    fallbacks = []
    for node in graph.nodes:
        args = [env[v.id] for v in node.inputs]
        values = [a for a, _ in args]
        flags = [f for _, f in args]
        results = None
        if any(isinstance(f, Diag) for f in flags):
            values, flags = _densify(b, values, flags, Scaled)
            rule = DIAG_RULES.get(node.op)
            results = rule(b, node, values, flags) if rule is not None else None
            if results is None:
                values, flags = _densify(b, values, flags, Diag)
        if results is None and (any(isinstance(f, Scaled) for f in flags) or
                                (node.op in SCALED_STARTS and True in flags)):
            rule = SCALED_RULES.get(node.op)
            results = rule(b, node, values, flags) if rule is not None else None
            if results is None:
                values, flags = _densify(b, values, flags, Scaled)
        if results is not None:
            pass
        elif not any(flags):
            outs = b.emit(node.op, values, node.attrs)
            results = [(o, False) for o in outs]
        else:
            rule = rules.get(node.op)
            results = rule(b, node, values, flags) if rule is not None else None
            if results is None:
                fallbacks.append(node.op)
                results = _loop(b, node, values, flags)
                if warn and node.op not in _warned:
                    _warned.add(node.op)
                    warnings.warn(f"vectorize: op {node.op} has no batching rule; it runs as a loop "
                                  f"over the batch of {size} (see `tapeflow dump`)",
                                  VectorizeFallbackWarning, stacklevel=2)
        if len(results) != len(node.outputs):
            raise AssertionError(f"batching rule of {node.op} gave {len(results)} outputs")
        for old, (nv, flag) in zip(node.outputs, results, strict=True):
            want = ((size,) if flag is True or isinstance(flag, Scaled) else ()) + tuple(old.aval.shape)
            if tuple(nv.aval.shape) != want or nv.aval.dtype != old.aval.dtype:
                raise AssertionError(f"batching rule of {node.op} gave {nv.aval} for {old.aval} "
                                     f"(batched={flag})")
            env[old.id] = (nv, flag)
    outs, out_flags = [], []
    for k, v in enumerate(graph.outputs):
        nv, flag = env[v.id]
        if structured(flag):
            nv, flag = b.dense(nv, flag), True
        if broadcast is None or broadcast[k] or flag:
            nv, flag = b.broadcast(nv, flag, v.aval.shape), True
        outs.append(nv)
        out_flags.append(flag)
    b.graph.outputs = outs
    return Vectorized(b.graph, size, fallbacks, out_flags)


def _densify(b, values, flags, kind):
    """Inputs whose flag is of ``kind`` (Diag or Scaled) in their dense batched form."""
    if not any(isinstance(f, kind) for f in flags):
        return values, flags
    return ([b.dense(v, f) if isinstance(f, kind) else v for v, f in zip(values, flags)],
            [True if isinstance(f, kind) else f for f in flags])


def _loop(b, node, values, flags):
    """The fallback: unstack batched inputs, apply the op per row, stack each output."""
    rows = [b.emit("Unpack", [v], {"num": b.size, "axis": 0}) if f else None
            for v, f in zip(values, flags)]
    per_row = []
    for i in range(b.size):
        ins = [r[i] if r is not None else v for v, r in zip(values, rows)]
        per_row.append(b.emit(node.op, ins, node.attrs))
    return [(b.emit1("Pack", [row[k] for row in per_row], {"axis": 0}), True)
            for k in range(len(node.outputs))]


def loop_reference(graph, batched, size):
    """The same batched graph built by looping every op (what every batching rule must equal)."""
    return vectorize(graph, batched, size, warn=False, rules={})


__all__ = ["Diag", "Identity", "Scaled", "Vectorized", "VectorizeFallbackWarning", "Builder", "vectorize",
           "loop_reference"]
