"""The IR: a Graph of Nodes over typed Values, a verifier and a text printer (JSON: ``codec``).

A Graph is a straight-line program: ``inputs`` (Values), ``nodes`` in
topological order (each applies one registered op; a constant is a ``Const`` op, whose
array ``constant_of`` reads), ``outputs``.
Values carry an AVal (shape, dtype). The printer is linear and compact, with
names assigned in order of appearance so dumps are stable and testable as text:

    { lambda a:f32[3] b:f32[] ; let
        c:f32[3] = Mul a b
        d:f32[] = Sum[axis=None keepdims=False] c
      in (d) }
"""
import itertools
import os

import numpy as np

from . import dtypes as D
from .opdef import OPS, AVal

_value_ids = itertools.count(1).__next__

_SHORT = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16",
          "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
          "uint64": "u64", "bool": "bool"}
_LONG = {v: k for k, v in _SHORT.items()}


class Value:
    """An SSA value: produced by one node (or a graph input), typed by an AVal."""

    __slots__ = ("id", "aval", "node")

    def __init__(self, aval, node=None):
        self.id = _value_ids()
        self.aval = aval
        self.node = node

    def __repr__(self):
        return f"Value({self.id}:{aval_str(self.aval)})"

    # what a TensorFlow user reads of ``ConcreteFunction.graph.inputs`` / ``.outputs``
    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)


class Node:
    """One op application: ``outputs = op(*inputs, **attrs)``; ``Const`` holds ``attrs['value']``.

    ``line``: (file, line number) of the user's code that traced it, or None; errors the op
    raises when the program runs name it (not part of the program: not printed or saved)."""

    __slots__ = ("op", "inputs", "attrs", "outputs", "line")

    def __init__(self, op, inputs, attrs, out_avals, line=None):
        self.op = op
        self.inputs = list(inputs)
        self.attrs = dict(attrs)
        self.outputs = [Value(a, self) for a in out_avals]
        self.line = line


class Graph:
    """A straight-line typed program."""

    def __init__(self, inputs=(), nodes=(), outputs=()):
        self.inputs = list(inputs)
        self.nodes = list(nodes)
        self.outputs = list(outputs)

    def add(self, op, inputs, attrs, out_avals):
        node = Node(op, inputs, attrs, out_avals)
        self.nodes.append(node)
        return node

    def const(self, array):
        """A new ``Const`` node of ``array``, appended; its output."""
        node = const_node(array)
        self.nodes.append(node)
        return node.outputs[0]

    def __str__(self):
        return print_graph(self)

    def __repr__(self):
        """A summary (the whole program is ``str(graph)``): inputs, node count, outputs."""
        ins = " ".join(aval_str(v.aval) for v in self.inputs)
        outs = " ".join(aval_str(v.aval) for v in self.outputs)
        return f"<Graph ({ins}) -> ({outs}), {len(self.nodes)} nodes>"


def private_copy(graph):
    """A copy of ``graph`` and of every graph nested in it that a caller may edit freely
    (values keep their ids, so tables keyed by value id still apply; a nested graph used by
    several nodes stays one graph), and {id(copied node): the original node}."""
    values, graphs, originals = {}, {}, {}

    def value(v):
        new = values.get(id(v))
        if new is None:
            new = values[id(v)] = Value.__new__(Value)
            new.id, new.aval, new.node = v.id, v.aval, None
        return new

    def copy(g):
        new = graphs.get(id(g))
        if new is not None:
            return new
        new = graphs[id(g)] = Graph([value(v) for v in g.inputs])
        for node in g.nodes:
            c = Node.__new__(Node)
            c.op, c.line = node.op, node.line
            c.inputs = [value(v) for v in node.inputs]
            c.attrs = {k: copy(a) if isinstance(a, Graph) else a for k, a in node.attrs.items()}
            c.outputs = [value(v) for v in node.outputs]
            for v in c.outputs:
                v.node = c
            originals[id(c)] = node
            new.nodes.append(c)
        new.outputs = [value(v) for v in g.outputs]
        return new

    return copy(graph), originals


# -- constants: the one place that knows a literal is a ``Const`` node keeping its array in
# ``attrs["value"]`` (tests/test_constants_in_one_place.py keeps it so) -------------------------

def const_node(array):
    """A new (unattached) ``Const`` node holding ``array``: a literal of the graph."""
    array = np.asarray(array)
    return Node("Const", [], {"value": array}, [AVal(array.shape, D.as_dtype(array.dtype))])


def is_constant(x):
    """Whether ``x`` (a Node, a Value, or None) is a literal: a ``Const`` node or its output."""
    node = x.node if isinstance(x, Value) else x
    return node is not None and node.op == "Const"


def constant_of(x):
    """The array of ``x`` (a Node, a Value, or None) if it is a literal (``is_constant``), else
    None: how passes, rules, codegen, the runtime and the tracer read a constant."""
    if not is_constant(x):
        return None
    node = x.node if isinstance(x, Value) else x
    return np.asarray(node.attrs["value"])


def use_counts(graph):
    """{value id: how many times nodes read it, plus once per graph output it is}."""
    uses = {}
    for node in graph.nodes:
        for v in node.inputs:
            uses[v.id] = uses.get(v.id, 0) + 1
    for v in graph.outputs:
        uses[v.id] = uses.get(v.id, 0) + 1
    return uses


class VerifyError(Exception):
    pass


def verify(graph):
    """Check SSA form, topological order, known ops, and that inferred avals match."""
    defined = set()
    for v in graph.inputs:
        if v.id in defined:
            raise VerifyError(f"input {v} listed twice")
        defined.add(v.id)
    for k, node in enumerate(graph.nodes):
        for v in node.inputs:
            if v.id not in defined:
                raise VerifyError(f"node {k} ({node.op}) uses {v} before it is defined")
        opdef = OPS.get(node.op)
        if opdef is None:
            raise VerifyError(f"node {k} has unknown op {node.op!r}")
        if opdef.arity is not None and len(node.inputs) != opdef.arity:
            raise VerifyError(f"node {k} ({node.op}) has {len(node.inputs)} inputs, "
                              f"expected {opdef.arity}")
        out = opdef.infer([v.aval for v in node.inputs], **node.attrs)
        out = list(out) if opdef.multi_output else [out]
        got = [v.aval for v in node.outputs]
        if [(tuple(a.shape), a.dtype) for a in out] != [(tuple(a.shape), a.dtype) for a in got]:
            raise VerifyError(f"node {k} ({node.op}) outputs {got} but inference gives {out}")
        for v in node.outputs:
            if v.id in defined:
                raise VerifyError(f"node {k} redefines {v}")
            defined.add(v.id)
    for v in graph.outputs:
        if v.id not in defined:
            raise VerifyError(f"output {v} is not defined")
    return graph


# -- text -----------------------------------------------------------------------------

def aval_str(aval):
    dims = ",".join("?" if d is None else str(d) for d in aval.shape)
    return f"{_SHORT[aval.dtype.name]}[{dims}]"


def _names():
    for n in itertools.count(1):
        for letters in itertools.product("abcdefghijklmnopqrstuvwxyz", repeat=n):
            yield "".join(letters)


def line_str(node):
    """The user's ``file:line`` that traced ``node`` (relative to the current directory when
    inside it), or '' when unknown."""
    if not node.line:
        return ""
    filename, lineno = node.line
    rel = os.path.relpath(filename) if os.path.isabs(filename) else filename
    return f"{filename if rel.startswith('..') else rel}:{lineno}"


def _attr_str(k, v, lines=False, arguments=frozenset(), namer=None):
    if isinstance(v, Graph):
        v = "\n      ".join(_print(v, lines, False, arguments, namer).split("\n"))
    elif isinstance(v, D.DType):
        v = v.name
    elif isinstance(v, tuple):
        v = "(" + ",".join(str(x) for x in v) + ")"
    elif isinstance(v, str) and not v.isidentifier():
        v = repr(v)   # one line, and a space or bracket in it cannot be read as syntax
    return f"{k}={v}"


def node_line(node, name, elide_graphs=False, lines=False, arguments=frozenset(), namer=None):
    """One node as the printer shows it (``c:f32[3] = Mul a b``); ``name(value)`` names values.

    ``elide_graphs`` prints graph-valued attributes as ``<Graph>`` so the line stays one line;
    ``lines`` annotates the nodes of graph-valued attributes with their user lines;
    ``arguments``: ids of constants printed as ``Const <argument>`` (a program's parameters,
    whose values are not part of its source); ``namer``: names the values of nested graphs
    (``print_graph``'s ``names``; else each nested graph names its own from ``a``).
    """
    outs = " ".join(f"{name(v)}:{aval_str(v.aval)}" for v in node.outputs)
    val = constant_of(node)
    if val is not None:
        if node.outputs[0].id in arguments:
            return f"{outs} = Const <argument>"
        return f"{outs} = " + (f"Const {val.item()!r}" if val.size == 1 else f"Const <{val.size} values>")
    attrs = " ".join(f"{k}=<Graph>" if elide_graphs and isinstance(v, Graph) else
                     _attr_str(k, v, lines, arguments, namer)
                     for k, v in sorted(node.attrs.items()))
    args = " ".join(name(v) for v in node.inputs)
    return f"{outs} = " + f"{node.op}{'[' + attrs + ']' if attrs else ''} {args}".rstrip()


def value_names(graph):
    """{value id: name} exactly as ``print_graph`` names them (inputs, then node outputs)."""
    gen = _names()
    names = {}
    for v in itertools.chain(graph.inputs, (o for n in graph.nodes for o in n.outputs)):
        if v.id not in names:
            names[v.id] = next(gen)
    return names


def print_graph(graph, lines=False, elide_graphs=False, arguments=frozenset(), names=None):
    """The compact, deterministic text form (names in order of first appearance).

    ``lines``: end each node with ``# file:line``, the user's line that traced it (when known).
    ``elide_graphs``: graph-valued attributes are named, not printed (bounded output).
    ``arguments``: ids of constants printed as ``Const <argument>`` (``node_line``).
    ``names``: {value id: name} to print values by, nested graphs' included (generated source
    names a program's values in one sequence: its header must use the body's names); values
    it lacks take the next names not in it. Without it each graph, nested ones too, names
    its values from ``a``."""
    return _print(graph, lines, elide_graphs, arguments, None if names is None else _Namer(names))


class _Namer:
    """Names values from a given table, the others in one sequence skipping its names."""

    def __init__(self, names):
        self.names, self.taken, self.gen = dict(names), set(names.values()), _names()

    def __call__(self, v):
        n = self.names.get(v.id)
        if n is None:
            n = self.names[v.id] = next(x for x in self.gen if x not in self.taken)
            self.taken.add(n)
        return n


def _print(graph, lines, elide_graphs, arguments, namer):
    if namer is None:
        gen, names = _names(), {}

        def name(v):
            if v.id not in names:
                names[v.id] = next(gen)
            return names[v.id]
    else:
        name = namer
    head = " ".join(f"{name(v)}:{aval_str(v.aval)}" for v in graph.inputs)
    out = [f"{{ lambda {head} ; let"]
    for node in graph.nodes:
        text = f"    {node_line(node, name, elide_graphs, lines, arguments, namer)}"
        out.append(f"{text}  # {line_str(node)}" if lines and node.line else text)
    out.append(f"  in ({' '.join(name(v) for v in graph.outputs)}) }}")
    return "\n".join(out)
