"""Evaluate IR graphs: on NumPy arrays (the reference every compiled program is checked
against), or through dispatch on tensors (``replay``: recorded by tapes, traced in traces).

A kernel rejecting its data (a gather index out of range, a singular matrix) raises
``InvalidArgumentError`` naming the op, as the same op does eagerly."""
import numpy as np

from ..ir.graph import constant_of
from ..ir.opdef import OPS
from .dispatch import DATA_ERRORS, apply, op_error
from .recorder import current_trace
from .registry import KERNELS
from .tensor import wrap


def run_graph(graph, *args):
    """Evaluate ``graph`` on NumPy values; returns a tuple of NumPy values, one per output."""
    if len(args) != len(graph.inputs):
        raise TypeError(f"graph takes {len(graph.inputs)} inputs, got {len(args)}")
    env = {}
    for v, a in zip(graph.inputs, args, strict=True):
        env[v.id] = a
    for node in graph.nodes:
        ins = [env[v.id] for v in node.inputs]
        try:
            out = KERNELS[node.op](*ins, **node.attrs)
        except DATA_ERRORS as e:
            raise op_error(node.op, e, [v.aval for v in node.inputs], node.line) from None
        results = out if OPS[node.op].multi_output else (out,)
        for v, r in zip(node.outputs, results, strict=True):
            r = np.asarray(r)
            if r.shape != v.aval.shape:
                _check_shape(node, v, r)
            if r.dtype != v.aval.dtype.np:
                r = r.astype(v.aval.dtype.np)
            env[v.id] = r[()] if r.ndim == 0 else r
    return tuple(env[v.id] for v in graph.outputs)


def _check_shape(node, v, r):
    """A graph traced with unknown (None) dims relies on its known ones: a call whose sizes
    break that (a broadcast that no longer holds) is TensorFlow's InvalidArgumentError."""
    want = v.aval.shape
    if len(want) == r.ndim and all(d is None or d == e for d, e in zip(want, r.shape)):
        return
    shape = "[" + ", ".join("?" if d is None else str(d) for d in want) + "]"
    raise op_error(node.op, ValueError(f"the program was traced for an output of shape {shape}, "
                                       f"but these inputs give {list(r.shape)}"),
                   [i.aval for i in node.inputs], node.line)


def replay(graph, inputs, lines=None):
    """Apply ``graph``'s nodes to ``inputs`` (tensors, concrete or symbolic) through dispatch.

    ``lines``, a dict, gets {id of each tensor made: the user line of the node that made it}
    (what the reverse sweep names gradient ops after: ``backprop.forward_lines``)."""
    env = {v.id: t for v, t in zip(graph.inputs, inputs, strict=True)}
    for node in graph.nodes:
        outs = apply_node(node, [env[v.id] for v in node.inputs])
        for v, t in zip(node.outputs, outs, strict=True):
            env[v.id] = t
            if lines is not None and node.line is not None:
                lines[t._id] = node.line
    return [env[v.id] for v in graph.outputs]


def apply_node(node, inputs):
    """One node applied to tensors through dispatch; a tuple with one tensor per output.

    Traced again (symbolic inputs), the new node keeps ``node``'s user line: the line of the
    code that traced the op, not of whoever rebuilds the graph (library code)."""
    value = constant_of(node)
    if value is not None:
        return (wrap(np.array(value, copy=True)),)
    trace = current_trace() if node.line is not None else None
    start = len(trace.graph.nodes) if trace is not None else 0
    r = apply(node.op, inputs, node.attrs)
    outs = r if OPS[node.op].multi_output else (r,)
    if trace is not None:   # symbolic: the node just traced, and any a tape recording it made
        for made in trace.graph.nodes[start:]:     # (the Shape of an output of unknown size)
            made.line = node.line
    return outs
