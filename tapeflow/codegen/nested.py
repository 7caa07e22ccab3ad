"""Nested graphs (If branches, While conditions and bodies) used from more than one place:
each becomes one jitted function of the module, emitted once and called at every use.

Why: the gradient of an If or While recomputes its branch or body inside the gradient's own
branches, so at second order one graph object is referenced from several nodes at every
nesting level (the recompute, and the nested gradient's recompute of it again). Inlining
each reference repeats the graph, and every graph nested in it, at each use: the source
grows with the product of the nesting, quadratic in the depth at second order (a
ten-op function with a six-times unrolled loop and a ``tf.cond`` gave 150 KB at second
order, 265 KB at eight iterations). Emitted once per structure, the source is linear in the
distinct graphs. A graph used once is still inlined (no call, and Numba optimises it with
its surroundings).

Graphs are compared by structure (``GraphKeys``), not identity: per-path tracing and the
recomputes build equal graphs as separate objects.
"""
import hashlib
import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..ir.graph import Graph, aval_str, print_graph

_TOKEN = re.compile(r"\$(\d+)\$")


class GraphKeys:
    """Structural keys of a program's nested graphs, and which are referenced more than once.

    A key covers the input avals, each node's op, wiring, attributes (arrays by their bytes,
    nested graphs by their keys) and output avals, and the outputs: graphs with equal keys
    compute the same thing and generate the same code. References are counted over distinct
    keys, from the program's graph and every distinct nested graph, so a graph that is
    referenced once from a function emitted once is inlined there, once.
    """

    def __init__(self, graph):
        self._keys = {}             # id(graph) -> key
        self._graphs = []           # keep the keyed graphs alive while ids are in use
        self.refs = Counter()
        seen = set()
        stack = [graph]
        while stack:
            g = stack.pop()
            for a in _graph_attrs(g):
                k = self.key(a)
                self.refs[k] += 1
                if k not in seen:
                    seen.add(k)
                    stack.append(a)

    def shared(self, graph):
        return self.refs[self.key(graph)] > 1

    def key(self, graph):
        k = self._keys.get(id(graph))
        if k is None:
            k = self._keys[id(graph)] = self._compute(graph)
            self._graphs.append(graph)
        return k

    def _compute(self, graph):
        pos = {v.id: k for k, v in enumerate(graph.inputs)}
        # a size only the run knows reads a value of this graph (``$id$``, symbolic.held):
        # keyed by that value's position, so equal graphs of other values get equal keys
        local = dict(pos)
        for node in graph.nodes:
            for v in node.outputs:
                local[v.id] = len(local)

        def aval(a):
            return _TOKEN.sub(lambda m: f"$@{local.get(int(m.group(1)), m.group(0))}$", aval_str(a))
        parts = [tuple(aval(v.aval) for v in graph.inputs)]
        for node in graph.nodes:
            attrs = tuple(sorted((name, self._attr(a)) for name, a in node.attrs.items()))
            ins = tuple(pos.get(v.id, ("free", v.id)) for v in node.inputs)
            parts.append((node.op, ins, attrs, tuple(aval(v.aval) for v in node.outputs)))
            for v in node.outputs:
                pos[v.id] = len(pos)
        parts.append(tuple(pos.get(v.id, ("free", v.id)) for v in graph.outputs))
        return hashlib.sha256(repr(parts).encode()).hexdigest()

    def _attr(self, a):
        if isinstance(a, Graph):
            return ("graph", self.key(a))
        if isinstance(a, (np.ndarray, np.generic)):
            arr = np.ascontiguousarray(a)
            return ("array", arr.dtype.str, arr.shape, hashlib.sha256(arr.tobytes()).hexdigest())
        if isinstance(a, (tuple, list)):
            return (type(a).__name__, tuple(self._attr(x) for x in a))
        if a is None or isinstance(a, (bool, int, float, str)):
            return (type(a).__name__, repr(a))
        return ("object", id(a))   # anything else equal only to itself (kept alive by its graph)


def _graph_attrs(graph):
    for node in graph.nodes:
        for a in node.attrs.values():
            if isinstance(a, Graph):
                yield a


@dataclass
class Function:
    """A nested graph emitted as one jitted function: ``outs = name(*params)``."""
    name: str
    params: list        # its inputs' variables, then the program constants it reads
    lines: list         # (indent, text, owner) of its body
    outs: list          # expressions returned


def emit_function(em, graph, name, emit_steps, free_names):
    """``graph`` as the body of a new function ``name`` (see the module docstring).

    Its values take the next names of the program's sequence, so every variable in the
    module stays unique (and a constant read inside is named as the program's parameter).
    ``free_names(lines, defined)``: the value variables the lines read and do not define:
    the program's array constants the function (and whatever it calls) reads, which become
    trailing parameters.
    """
    child = em.child(graph)
    child.lines, child.depth, child.owner = [], 1, None
    params = [child.bind(v) for v in graph.inputs]
    emit_steps(child, graph)
    outs = [child.ref(v) for v in graph.outputs]
    consts = free_names(child.lines + [(1, " ".join(outs), None)], set(params))
    return Function(name, params + consts, child.lines, outs)


def call(em, fn, inputs):
    """A call of ``fn`` at the current position; returns the temporaries holding its outputs."""
    args = list(inputs) + fn.params[len(inputs):]
    outs = [em.fresh("r") for _ in fn.outs]
    target = f"({''.join(o + ', ' for o in outs).rstrip(' ')}) = " if outs else ""
    em.line(f"{target}{fn.name}({', '.join(args)})")
    return outs


def render(em, fn, first_line, decorator):
    """(source lines, {line number: node}) of ``fn``, starting at line ``first_line``."""
    lines = [decorator, f"def {fn.name}({', '.join(fn.params)}):"]
    body, owners = em.render(first_line + len(lines), lines=fn.lines)
    lines.extend(body)
    lines.append(f"    return ({''.join(o + ', ' for o in fn.outs).rstrip(' ')})")
    lines.extend(["", ""])
    return lines, owners


# The printed graph heading the module is the whole program while that is at most this long
# (estimated); a deeper program's header shows its own nodes with nested graphs elided, since
# printing them in full repeats each at every use, further indented at each level, as
# inlining did (each nested graph's lines still carry their nodes' printed forms).
HEADER_BYTES = 16 * 1024


def header_text(graph, arguments=frozenset(), names=None):
    """The graph as the module's header comment (see ``HEADER_BYTES``); ``arguments``: ids
    of the constants passed as arguments, printed ``Const <argument>``; ``names``: {value
    id: name} as the body names them, nested graphs' values included (``print_graph``)."""
    n_lines, n_bytes = _printed_size(graph, {})
    if n_bytes <= HEADER_BYTES:
        return print_graph(graph, arguments=arguments, names=names)
    first, rest = print_graph(graph, elide_graphs=True, arguments=arguments,
                              names=names).split("\n", 1)
    return f"{first}    (nested graphs elided: {n_lines} lines in full)\n{rest}"


def _printed_size(graph, memo):
    """(lines, about how many bytes) ``print_graph`` would give: a nested graph is printed
    at each reference, indented six more columns."""
    size = memo.get(id(graph))
    if size is None:
        lines, size = len(graph.nodes) + 2, 60 * (len(graph.nodes) + 2)
        for a in _graph_attrs(graph):
            sub_lines, sub_bytes = _printed_size(a, memo)
            lines, size = lines + sub_lines, size + sub_bytes + 6 * sub_lines
        size = memo[id(graph)] = (lines, size)
    return size
