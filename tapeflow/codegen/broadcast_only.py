"""Values generated smaller than traced: a uniform constant or a broadcast that only
elementwise ops read (``broadcast_only``), so the program does not tie input sizes to the
traced ones (shape_free.py's ``_shrink`` applies it)."""
from ..ir.graph import constant_of
from ..ir.opdef import OPS
from ..ir.shapes import broadcast_shapes


def _plain(d):
    """A size as a plain int (a ``symbolic.Dim``'s traced value), deciding nothing."""
    return int.__add__(d, 0)


def uniform(array):
    """Whether every element of ``array`` has the same bits (and there is one)."""
    if array.size == 0:
        return False
    bits = array.view(f"u{array.dtype.itemsize}") if array.dtype.itemsize in (1, 2, 4, 8) else array
    return bool((bits == bits.flat[0]).all())


def broadcast_only(graph):
    """{value id: (value, smaller shape)}: values whose size need not be their own, since
    only elementwise ops read them and the other operands give those ops their shapes. A
    constant of one repeated value (a folded ``-1/n`` seeding a mean's gradient, as big as the
    batch) is generated with all-1 dims; a ``BroadcastTo`` (a mean's gradient spread over
    its input, at the traced size) with its input's dims, and the elementwise ops after it
    that stay smaller with it. So they do not tie the input sizes to their traced ones:
    broadcasting commutes with elementwise ops, so the values are the same."""
    uses = {}
    for node in graph.nodes:
        for x in node.inputs:
            uses.setdefault(x.id, []).append(node)
    outputs = {v.id for v in graph.outputs}
    found = {}
    for node in graph.nodes:
        if len(node.outputs) != 1:
            continue
        (v,) = node.outputs
        rank = len(v.aval.shape)
        if not rank or v.id in outputs or v.id not in uses or None in v.aval.shape:
            continue
        value_ = constant_of(node)
        if value_ is not None:
            if value_.ndim != rank or not (value_.size == 0 or uniform(value_)):
                continue
            small = (1,) * rank
        elif node.op == "BroadcastTo" and None not in node.inputs[0].aval.shape:
            x = node.inputs[0]
            x = found[x.id][1] if x.id in found else x.aval.shape      # as it will be generated
            small = (1,) * (rank - len(x)) + tuple(_plain(d) for d in x)     # decides nothing
        else:
            continue
        if small != tuple(_plain(d) for d in v.aval.shape):
            found.update(_stays_small(graph, v, small, found, uses, outputs) or {})
    return found


def _stays_small(graph, v, small, found, uses, outputs):
    """{value id: (value, shape)}: ``v`` at shape ``small`` and the values after it that stay
    smaller than traced, if every reader is an elementwise op (or a BroadcastTo, which gives
    its own shape) and no graph output changes shape; else None."""
    shapes = {k: s for k, (_, s) in found.items()}
    shapes[v.id] = small
    out = {v.id: (v, small)}
    for node in graph.nodes[graph.nodes.index(v.node) + 1:]:
        if not any(x.id in out for x in node.inputs):
            continue
        if node.op == "BroadcastTo":
            continue
        if OPS[node.op].kind != "elementwise" or len(node.outputs) != 1:
            return None
        (y,) = node.outputs
        b = _broadcast([shapes.get(x.id, x.aval.shape) for x in node.inputs])
        if b is None:
            return None
        traced = tuple(_plain(d) for d in y.aval.shape)
        if b != traced:
            if y.id in outputs or _broadcast([b, traced]) != traced:
                return None
            shapes[y.id] = b
            out[y.id] = (y, b)
    return out


def _broadcast(shapes):
    try:
        return tuple(broadcast_shapes(*[tuple(_plain(d) for d in s) for s in shapes]))
    except Exception:  # noqa: BLE001 - not broadcastable: not a candidate
        return None
