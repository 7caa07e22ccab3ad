"""Graphviz text for graphs (``tapeflow dump --format dot``; ``svg`` and ``html`` lay it out
with Graphviz's ``dot``).

``statements`` draws one graph as Graphviz statements under an id prefix, so several graphs
(the stages of a dump, a forward and its backward) share one drawing, each in a ``cluster``,
with ``link``s between them (residuals); ``document`` makes the digraph. Every drawn node gets an
``id`` (``<prefix>n<k>`` for node k, ``<prefix>in<i>``, ``<prefix>out<i>``, ``<prefix>g<j>``
for a fused group drawn as one node), which Graphviz's SVG keeps, so a page can find them.
"""
from dataclasses import dataclass, field

from .graph import aval_str, constant_of, line_str, node_line, value_names


def quote(text):
    """``text`` as a Graphviz quoted string: quotes and backslashes escaped, newlines as \\n."""
    text = str(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\r", "").replace("\n", "\\n") + '"'


def _attrs(**kw):
    """A node's or edge's attribute list: ``[label="...", id="..."]`` (None values left out)."""
    return "[" + ", ".join(f"{k}={_value(k, v)}" for k, v in kw.items() if v is not None) + "]"


def _graph_attrs(**kw):
    """A cluster's attributes as statements: ``label="..."; style="...";``."""
    return " ".join(f"{k}={_value(k, v)};" for k, v in kw.items() if v is not None)


def _value(key, value):
    return str(value) if key in _RAW else quote(value)


_RAW = {"penwidth", "constraint", "fontsize"}

INPUT = {"shape": "ellipse", "style": "filled", "fillcolor": "#e8f0fe"}
OUTPUT = {"shape": "ellipse", "style": "filled", "fillcolor": "#e6f4ea"}
RESIDUAL = {"shape": "ellipse", "style": "filled", "fillcolor": "#fde7e7", "color": "#c5221f"}
GROUP = {"style": "rounded,filled", "fillcolor": "#fff8e1", "color": "#f9a825"}


@dataclass
class Drawn:
    """What ``statements`` drew: Graphviz statements and the ids a caller links or looks up."""
    stmts: list
    inputs: list                       # dot id per graph input
    outputs: list                      # dot id per drawn output (None where not drawn)
    producers: list                    # dot id of what produces each graph output
    nodes: dict = field(default_factory=dict)   # node index -> dot id (its group's if collapsed)


def node_label(node, names, lines=False):
    """What a box shows: the op (a Const its value), each output's name and type, the user's line."""
    val = constant_of(node)
    if val is not None:
        head = f"Const {val.item()!r}" if val.size == 1 else f"Const <{val.size} values>"
    else:
        head = node.op
    outs = [f"{names[v.id]}: {aval_str(v.aval)}" for v in node.outputs]
    where = [line_str(node)] if lines and node.line else []
    return "\n".join([head] + outs + where)


def statements(graph, prefix, arg_names=None, out_names=None, lines=False, groups=(),
               collapse=False, input_style=None, skip_outputs=()):
    """Draw ``graph``; ids start with ``prefix``.

    ``arg_names``/``out_names``: labels of the inputs and outputs (default ``input i``,
    ``output i``). ``groups``: [(label, [node index])] drawn as clusters (fused loops), or
    each as one node if ``collapse``. ``input_style``: {input index: (label, attrs)} for
    inputs drawn differently (a backward's residuals). ``skip_outputs``: output indices not
    drawn (a caller links their producers elsewhere).
    """
    names = value_names(graph)
    name = lambda v: names[v.id]  # noqa: E731
    input_style = input_style or {}
    stmts, producer, ins = [], {}, []
    for i, v in enumerate(graph.inputs):
        label, style = input_style.get(i, (arg_names[i] if arg_names else f"input {i}", INPUT))
        ins.append(f"{prefix}in{i}")
        label = f"{label}\n{names[v.id]}: {aval_str(v.aval)}"
        stmts.append(f"{ins[-1]} {_attrs(label=label, id=ins[-1], **style)};")
        producer[v.id] = ins[-1]
    group_of = {k: j for j, (_, members) in enumerate(groups) for k in members}
    ids = {k: (f"{prefix}g{group_of[k]}" if collapse and k in group_of else f"{prefix}n{k}")
           for k in range(len(graph.nodes))}
    boxes = {j: [] for j in range(len(groups))}
    edges = []
    for k, node in enumerate(graph.nodes):
        edges += [(producer[v.id], ids[k]) for v in node.inputs]
        for v in node.outputs:
            producer[v.id] = ids[k]
        if collapse and k in group_of:
            continue
        box = _attrs(label=node_label(node, names, lines), id=ids[k],
                     tooltip=node_line(node, name, elide_graphs=True))
        (boxes[group_of[k]] if k in group_of else stmts).append(f"{ids[k]} {box};")
    for j, (label, members) in enumerate(groups):
        gid = f"{prefix}g{j}"
        if collapse:
            text = label + "\n" + " ".join(graph.nodes[k].op for k in members)
            stmts.append(f"{gid} {_attrs(label=text, id=gid, shape='box', **GROUP)};")
        else:
            stmts += cluster(gid, label, boxes[j], id=gid, fontsize=10, **GROUP)
    seen = set()
    for tail, head in edges:   # a collapsed group: one edge per pair, none inside the group
        if tail == head or collapse and (tail, head) in seen:
            continue
        stmts.append(f"{tail} -> {head};")
        seen.add((tail, head))
    outs, producers = [], []
    for i, v in enumerate(graph.outputs):
        producers.append(producer[v.id])
        if i in skip_outputs:
            outs.append(None)
            continue
        outs.append(f"{prefix}out{i}")
        label = out_names[i] if out_names else f"output {i}"
        stmts.append(f"{outs[-1]} {_attrs(label=label, id=outs[-1], **OUTPUT)};")
        stmts.append(f"{producer[v.id]} -> {outs[-1]};")
    return Drawn(stmts, ins, outs, producers, ids)


def cluster(cid, label, stmts, **style):
    """``stmts`` in a box of their own (a Graphviz cluster) labelled ``label``."""
    style = {"fontname": "sans-serif", "fontsize": 14, "style": "rounded", "color": "#9aa0a6",
             **style}
    return ([f"subgraph cluster_{cid} {{", "  " + _graph_attrs(label=label, **style)]
            + [f"  {s}" for s in stmts] + ["}"])


def link(tail, head, label):
    """An edge between two drawn graphs (a forward's residual into its backward): dashed red,
    and left out of the ranking so the two graphs sit side by side. Put it at the top level
    of the document: an edge inside a cluster would pull both ends into that cluster."""
    style = _attrs(label=label, style="dashed", color="#c5221f", fontcolor="#c5221f",
                   constraint="false", fontsize=9)
    return f"{tail} -> {head} {style};"


def document(name, stmts, rankdir="TB"):
    """One digraph of ``stmts``."""
    head = [f"digraph {quote(name)} {{", f"  rankdir={rankdir};",
            '  node [shape=box, fontname="monospace", fontsize=11];',
            '  edge [color="#5f6368", fontname="sans-serif"];']
    return "\n".join(head + [f"  {s}" for s in stmts] + ["}"])


def to_dot(graph, name="graph", arg_names=None, out_names=None, lines=False):
    """One graph as a Graphviz digraph."""
    return document(name, statements(graph, "", arg_names, out_names, lines).stmts)
