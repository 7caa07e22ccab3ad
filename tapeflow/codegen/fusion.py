"""Fusion planning: which elementwise nodes share one loop, and where each loop goes.

Walking the nodes in order, an elementwise node joins the open group that produced one of
its inputs if the group has its output shape (merging several such groups); failing that,
an open group of that shape which already reads one of its inputs (so x is read once for
all the branches that start from it); else it opens a group.

A reduction whose input comes from an open group is folded into that group's loop (several,
if they reduce the same axes), and the group stays open: later elementwise nodes that do not
read a reduction's result still join (a forward sum and the gradient computed from the same
x share one pass over x). Any other consumer of a group's value, or of a reduction's result,
closes the group first, so a group is emitted where it closes: after every input of its
members exists and before any outside use. Open groups never depend on each other (a
consumer either joins or closes), so the order in which the remaining ones are closed at the
end does not matter.

A member's value is kept in an array ("materialized") only if something outside the group
reads it or it is a graph output; otherwise it lives in a register inside the loop.
"""
from dataclasses import dataclass, field

from ..ir.defs.reduce import reduction_axes
from ..ir.graph import is_constant
from .shape_free import same_shape
from .templates import CODEGEN


@dataclass(eq=False)
class Group:
    """Elementwise ``members`` over ``shape`` and the ``reductions`` folded into their loop."""
    shape: tuple
    members: list = field(default_factory=list)
    reductions: list = field(default_factory=list)

    @property
    def axes(self):
        return _axes(self.reductions[0])

    def node_ids(self):
        return {id(n) for n in self.members + self.reductions}


def is_fusable(node):
    return not is_constant(node) and CODEGEN[node.op].scalar is not None


def is_reduction(node):
    return not is_constant(node) and CODEGEN[node.op].reduce is not None


def _axes(red):
    return reduction_axes(red.attrs.get("axis"), len(red.inputs[0].aval.shape))


def _compatible(a, b):
    """Groups whose reductions (if any) reduce the same axes can share one loop nest."""
    return not a.reductions or not b.reductions or _axes(a.reductions[0]) == _axes(b.reductions[0])


def plan(graph):
    """The program as a list of steps: Nodes (emitted by their template) and Groups (loops)."""
    steps, open_groups = [], []
    made_by = {}          # value id -> open group producing it (members and reductions)
    order = {id(n): k for k, n in enumerate(graph.nodes)}

    def close(g):
        open_groups.remove(g)
        for n in g.members + g.reductions:
            made_by.pop(n.outputs[0].id, None)
        steps.append(g)

    def reads_result_of(node, g):
        outs = {r.outputs[0].id for r in g.reductions}
        return any(v.id in outs for v in node.inputs)

    def siblings(node, shape):
        """Open groups of ``shape`` whose loop already reads one of ``node``'s inputs."""
        ids = {v.id for v in node.inputs}
        return [g for g in open_groups if same_shape(g.shape, shape) and not reads_result_of(node, g)
                and any(v.id in ids for n in g.members + g.reductions for v in n.inputs)]

    def join(groups, shape):
        """One open group for ``shape`` made of ``groups`` (incompatible extras are closed)."""
        target = groups[0] if groups else None
        if target is None:
            target = Group(shape)
            open_groups.append(target)
        for g in groups[1:]:
            if not _compatible(target, g):
                close(g)
                continue
            target.members.extend(g.members)
            target.reductions.extend(g.reductions)
            open_groups.remove(g)
            for n in g.members + g.reductions:
                made_by[n.outputs[0].id] = target
        target.members.sort(key=lambda n: order[id(n)])
        target.reductions.sort(key=lambda n: order[id(n)])
        return target

    for node in graph.nodes:
        if is_constant(node):
            steps.append(node)
            continue
        feeding = []
        for v in node.inputs:
            g = made_by.get(v.id)
            if g is not None and g not in feeding:
                feeding.append(g)
        if is_fusable(node):
            shape = tuple(node.outputs[0].aval.shape)
            joinable = [g for g in feeding if same_shape(g.shape, shape) and not reads_result_of(node, g)]
            for g in feeding:
                if g not in joinable:
                    close(g)
            if not joinable:
                joinable = siblings(node, shape)[:1]
            target = join(joinable, shape)
            target.members.append(node)
            made_by[node.outputs[0].id] = target
        elif is_reduction(node):
            src = node.inputs[0]
            g = made_by.get(src.id)
            if g is not None and (reads_result_of(node, g) or
                                  (g.reductions and _axes(g.reductions[0]) != _axes(node))):
                g = None
            for other in feeding:
                if other is not g:
                    close(other)
            if g is None:
                near = [h for h in siblings(node, tuple(src.aval.shape))
                        if not h.reductions or _axes(h.reductions[0]) == _axes(node)]
                g = join(near[:1], tuple(src.aval.shape))
            g.reductions.append(node)
            made_by[node.outputs[0].id] = g
        else:
            for g in feeding:
                close(g)
            steps.append(node)
    for g in list(open_groups):
        close(g)
    return steps
