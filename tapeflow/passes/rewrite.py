"""What every pass shares: rebuilding a graph without touching the original, and small queries.

Passes never mutate the graph they are given. Instead they walk it once, in order,
and build a new node list; a node whose inputs are unchanged is *reused* (the same
Node object, so its output Values keep their identity), a node whose inputs were
replaced is copied. This treats Nodes and Values as immutable once they are in a
graph (as JAX treats jaxpr equations): nobody may edit ``node.inputs``/``attrs`` of a
node that a pass returned, since the node may also belong to the caller's graph.
Graph inputs are always the same Value objects, so callers can map arguments by
identity across passes; outputs are mapped by position.
"""
from ..ir.graph import Graph, Node, constant_of
from ..ir.opdef import OPS
from ..ir.shapes import num_elements

KEEP = None  # a rule's answer meaning: keep this node (with its inputs remapped)


def rebuild(graph, rule=None):
    """A new Graph from ``graph``, asking ``rule(node, inputs, new)`` what to do with each node.

    ``inputs`` are the node's inputs already remapped into the new graph; ``new`` is the
    ``NewGraph`` being built. The rule returns ``KEEP`` (keep the node, copied only if its
    inputs changed), or a list of Values of the new graph standing for ``node.outputs``,
    possibly made with ``new.add`` (added nodes are appended in order, before their use).
    """
    new = NewGraph(graph.inputs)
    env = {}
    for node in graph.nodes:
        inputs = [env.get(v.id, v) for v in node.inputs]
        replaced = KEEP if rule is None else rule(node, inputs, new)
        if replaced is KEEP:
            replaced = new.append(keep(node, inputs)).outputs
        if len(replaced) != len(node.outputs):
            raise AssertionError(f"rewrite of {node.op} gave {len(replaced)} values for "
                                 f"{len(node.outputs)} outputs")
        for old, value in zip(node.outputs, replaced, strict=True):
            if value is not old:
                env[old.id] = value
    new.graph.outputs = [env.get(v.id, v) for v in graph.outputs]
    return new.graph


class NewGraph:
    """The graph a pass is building, and which of its nodes defines each value.

    Rules ask ``producer(value)`` rather than ``value.node``: a graph input may be a value
    that some *other* graph computes (a backward program's residual inputs are the
    forward's outputs), and its ``.node`` is then no node of this graph.
    """

    def __init__(self, inputs):
        self.graph = Graph(inputs=inputs)
        self._producers = {}

    def append(self, node):
        self.graph.nodes.append(node)
        for o in node.outputs:
            self._producers[o.id] = node
        return node

    def add(self, op, inputs, attrs, out_avals):
        """Append a fresh node ``op(*inputs, **attrs)`` with outputs of ``out_avals``."""
        return self.append(Node(op, inputs, attrs, out_avals))

    def producer(self, value):
        """The node of this graph that computes ``value``, or None for a graph input."""
        return self._producers.get(value.id)

    def const_array(self, value):
        """The array of ``value`` if a ``Const`` node of this graph produces it, else None."""
        return constant_of(self.producer(value))


def keep(node, inputs):
    """``node`` itself if ``inputs`` are its own, else a copy of it reading ``inputs``."""
    if all(a is b for a, b in zip(inputs, node.inputs, strict=True)):
        return node
    return copy_node(node, inputs)


def copy_node(node, inputs):
    """A fresh node like ``node`` reading ``inputs`` (new output Values)."""
    return Node(node.op, inputs, node.attrs, [v.aval for v in node.outputs], node.line)


# -- small queries -----------------------------------------------------------------------------

def known_shape(aval):
    """True if every dimension of ``aval`` is known."""
    return all(d is not None for d in aval.shape)


def same_aval(a, b):
    """Exactly the same type: equal shape tuples (None only equal to None) and dtype."""
    return tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype


def nbytes(aval):
    """Bytes of a value of this type, or None if a dimension is unknown."""
    n = num_elements(aval.shape)
    return None if n is None else n * aval.dtype.size


def is_pure(node):
    """A node with no effects: safe to merge, drop or evaluate at compile time.

    ``OpDef.pure`` says it of an op (``PrintV2`` is not); an If or While is pure only if the
    graphs it runs are (a print inside a branch must run when the branch does). Ops of
    no OpDef count as pure. Impure nodes are left alone by DCE, CSE and constant
    folding, and never recomputed by the partitioner.
    """
    opdef = OPS.get(node.op)
    if opdef is not None and not opdef.pure:
        return False
    return all(is_pure(inner) for value in node.attrs.values() if isinstance(value, Graph)
               for inner in value.nodes)
