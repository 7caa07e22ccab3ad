"""Dead code elimination: drop nodes none of whose outputs reach a graph output.

An unused result of a pure node can always go; an impure one (``tf.print``, or an If/While
running one, ``rewrite.is_pure``) is kept. One backward sweep marks live values, one forward sweep keeps
the live nodes in their order. Nodes are reused as they are (their inputs do not change).
"""
from ..ir.graph import Graph
from .rewrite import is_pure


def dce(graph):
    live = {v.id for v in graph.outputs}
    kept = []
    for node in reversed(graph.nodes):
        if not is_pure(node) or any(v.id in live for v in node.outputs):
            kept.append(node)
            live.update(v.id for v in node.inputs)
    kept.reverse()
    return Graph(inputs=graph.inputs, nodes=kept, outputs=graph.outputs)


def without_effects(graph):
    """``graph`` without its effects (its ``tf.print`` nodes) and what only they read: for a
    gradient that recomputes forward values, whose prints already ran in the forward.
    (An If or While that prints inside keeps its print.)"""
    kept = [n for n in graph.nodes if n.outputs or is_pure(n)]
    return dce(Graph(inputs=graph.inputs, nodes=kept, outputs=graph.outputs))
