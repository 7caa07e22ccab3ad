"""If and While (runtime/kernels/control.py): their graphs are emitted inline, in the same
jitted function, under a Python ``if``/``else`` or ``while`` that Numba compiles natively.

A nested graph's values take names that continue the enclosing program's sequence (so every
generated name is unique and reads like the others); its array constants become parameters
of the program (``Emitter.extra_consts``), never globals, so the on-disk cache still works.
"""
import itertools

from ...ir.graph import _names
from ..emitter import Emitter, node_texts
from . import stmt_op


def _root(em):
    return getattr(em, "parent", None) and _root(em.parent) or em


def _name_source(em):
    root = _root(em)
    if not hasattr(root, "name_source"):
        root.name_source = itertools.islice(_names(), len(root.names), None)
    return root.name_source


def inline(em, graph, inputs):
    """Emit ``graph`` at the current position of ``em`` with its inputs bound to the
    expressions ``inputs``; returns the expressions of its outputs."""
    from ..generate import bind_consts, check_supported, emit_steps
    check_supported(graph)
    root = _root(em)
    child = Emitter(graph)
    child.parent = em
    child.fresh = root.fresh                # temporaries unique across the whole function
    source = _name_source(em)
    child.names = {vid: next(source) for vid in child.names}
    child.node_text = node_texts(graph, child.names)
    root.node_text.update(child.node_text)
    child.lines, child.depth, child.owner = em.lines, em.depth, em.owner
    if not hasattr(root, "extra_consts"):
        root.extra_consts = []
    for v, expr in zip(graph.inputs, inputs, strict=True):
        child.bind(v, expr)
    bind_consts(child, graph, lambda *param: root.extra_consts.append(param))
    emit_steps(child, graph)
    return [child.ref(v) for v in graph.outputs]


def _assign(em, names, exprs, simultaneous=False):
    """``name = expr`` lines (one per line, so the program splitter sees each definition);
    ``simultaneous``: through temporaries, for a loop update whose values read the old state."""
    if simultaneous:
        temps = [em.fresh("u") for _ in exprs]
        for t, e in zip(temps, exprs, strict=True):
            em.line(f"{t} = {e}")
        exprs = temps
    for n, e in zip(names, exprs, strict=True):
        em.line(f"{n} = {e}")


@stmt_op("If")
def _if(em, node, then_graph, else_graph):
    outs = [em.var(v) for v in node.outputs]
    operands = [em.ref(v) for v in node.inputs[1:]]
    for graph, header in ((then_graph, f"if {em.ref(node.inputs[0])}:"), (else_graph, "else:")):
        with em.block(header):
            _assign(em, outs, inline(em, graph, operands))
            if not outs:
                em.line("pass")
    for v in node.outputs:
        em.bind(v)


@stmt_op("While")
def _while(em, node, cond_graph, body_graph, n_vars):
    state = [em.var(v) for v in node.outputs[:n_vars]]
    count = em.fresh("n")
    extra = [em.ref(v) for v in node.inputs[n_vars:]]
    _assign(em, state, [em.ref(v) for v in node.inputs[:n_vars]])
    em.line(f"{count} = 0")
    with em.block("while True:"):
        (pred,) = inline(em, cond_graph, state + extra)
        with em.block(f"if not {pred}:"):
            em.line("break")
        _assign(em, state, inline(em, body_graph, state + extra), simultaneous=True)
        em.line(f"{count} += 1")
    for v in node.outputs[:n_vars]:
        em.bind(v)
    em.define(node.outputs[n_vars], f"np.int32({count})")
