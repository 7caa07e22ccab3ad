"""Sink transposes and unit-dim reshapes into broadcasting elementwise ops.

``Transpose(Mul(x[B,T,1], y[B,1,S]))`` copies the big product once more just to reorder
it; ``Mul(Transpose(x), Transpose(y))`` reorders the small operands instead and writes
the product in its final layout (what a vectorized jacobian's last steps look like:
the batch axis moved behind, a diagonal scattered with a broadcast multiply). The
rewrite applies when the elementwise node feeds only the layout op and every input is
smaller than the output (so it broadcasts: moving the layout op is cheaper) or is made
by such a node in turn (``Mul(Mul(x, y), z)``, as forward-mode jacobians end).
"""
from ..ir.graph import Graph, Node, use_counts
from ..ir.opdef import OPS
from ..ir.shapes import num_elements
from .dce import dce


def sink_layout(graph, rounds=4):
    """Repeat the rewrite (a sunk layout op may meet the next one) until nothing changes."""
    for _ in range(rounds):
        new = _sink_once(graph)
        if len(new.nodes) == len(graph.nodes) and all(a is b for a, b in zip(new.nodes, graph.nodes)):
            return new
        graph = new
    return graph


def _sink_once(graph):
    uses = use_counts(graph)
    producer = {o.id: n for n in graph.nodes for o in n.outputs}
    out_nodes, env = [], {}

    def get(v):
        return env.get(v.id, v)

    def emit(op, inputs, attrs):
        opdef = OPS[op]
        aval = opdef.infer([v.aval for v in inputs], **attrs)
        node = Node(op, inputs, attrs, [aval])
        out_nodes.append(node)
        return node.outputs[0]

    def layout(op, attrs, v):
        """Apply the layout op to ``v`` (sinking it further if ``v`` qualifies)."""
        if op == "Transpose" and tuple(attrs["perm"]) == tuple(range(len(attrs["perm"]))):
            return v
        if op == "Reshape" and tuple(attrs["shape"]) == tuple(v.aval.shape):
            return v
        src = producer.get(v.id)
        if src is not None and _sinkable(src, uses, producer):
            return sunk(src, op, attrs)
        return emit(op, [v], attrs)

    def sunk(node, op, attrs):
        out = node.outputs[0]
        rank = len(out.aval.shape)
        args = []
        for x in node.inputs:
            x = get(x)
            shape = tuple(x.aval.shape)
            if len(shape) < rank:
                x = emit("Reshape", [x], {"shape": (1,) * (rank - len(shape)) + shape})
            if op == "Transpose":
                args.append(layout("Transpose", {"perm": tuple(attrs["perm"])}, x))
            else:
                args.append(layout("Reshape", {"shape": _unit_reshape(out.aval.shape, attrs["shape"],
                                                                      x.aval.shape)}, x))
        return emit(node.op, args, node.attrs)

    for node in graph.nodes:
        inputs = [get(v) for v in node.inputs]
        if node.op in ("Transpose", "Reshape") and _applies(node, producer, uses):
            env[node.outputs[0].id] = sunk(producer[node.inputs[0].id], node.op, node.attrs)
            continue
        if all(a is b for a, b in zip(inputs, node.inputs)):
            out_nodes.append(node)
        else:
            copy = Node(node.op, inputs, node.attrs, [v.aval for v in node.outputs])
            out_nodes.append(copy)
            for o, c in zip(node.outputs, copy.outputs):
                env[o.id] = c
    return dce(Graph(graph.inputs, out_nodes, [get(v) for v in graph.outputs]))


def _sinkable(node, uses, producer):
    """An elementwise single-output node used once, every input smaller than its output or
    itself made by such a node (a chain of them ends in small operands only)."""
    if OPS.get(node.op) is None or OPS[node.op].kind != "elementwise" or len(node.outputs) != 1:
        return False
    out = node.outputs[0]
    if uses.get(out.id, 0) != 1 or node.op in ("AddN",) or node.op.endswith("Grad"):
        return False
    n = num_elements(out.aval.shape)
    if n is None:
        return False

    def small(x):
        if (num_elements(x.aval.shape) or n) < n:
            return True
        src = producer.get(x.id)
        return src is not None and _sinkable(src, uses, producer)
    return all(small(x) for x in node.inputs)


def _applies(node, producer, uses):
    src = producer.get(node.inputs[0].id)
    if src is None or not _sinkable(src, uses, producer):
        return False
    if node.op == "Reshape":
        return _is_unit_reshape(node.inputs[0].aval.shape, node.attrs["shape"])
    return True


def _is_unit_reshape(old, new):
    return [d for d in old if d != 1] == [d for d in new if d != 1] and -1 not in new


def _unit_reshape(old, new, x):
    """The shape ``x`` (aligned to ``old``'s rank, broadcasting to it) takes when ``old`` -> ``new``
    only inserts or drops unit dims: x's dims follow their non-unit partners."""
    old, new, x = tuple(old), tuple(new), tuple(x)
    out, i = [], 0
    for d in new:
        while i < len(old) and old[i] == 1 and d != 1:
            i += 1          # a unit dim of old that new drops (x has 1 there)
        if d == 1:
            if i < len(old) and old[i] == 1:
                out.append(x[i])
                i += 1
            else:
                out.append(1)
        else:
            out.append(x[i])
            i += 1
    return tuple(out)




def fold_matmul_transposes(graph):
    """``MatMul(T(x), y)`` -> ``MatMul(x, y, transpose_a=True)`` (either side) for a 2-D
    transpose seen through reshapes that only restore its shape: BLAS reads x transposed,
    so the copy the transpose makes goes away (dead code once nothing else reads it)."""
    producer = {o.id: n for n in graph.nodes for o in n.outputs}

    def transposed_source(v):
        shape = tuple(v.aval.shape)
        node = producer.get(v.id)
        while node is not None and node.op == "Reshape":
            node = producer.get(node.inputs[0].id)
        if node is None or node.op != "Transpose" or tuple(node.attrs["perm"]) != (1, 0):
            return None
        if tuple(node.outputs[0].aval.shape) != shape:
            return None
        return node.inputs[0]

    nodes, changed = [], False
    for node in graph.nodes:
        if OPS.get(node.op) is not None and OPS[node.op].gemm \
                and all(len(v.aval.shape) == 2 for v in node.inputs):
            a, c = node.inputs
            attrs = dict(node.attrs)
            sa, sc = transposed_source(a), transposed_source(c)
            if sa is not None:
                a, attrs["transpose_a"] = sa, not attrs.get("transpose_a", False)
            if sc is not None:
                c, attrs["transpose_b"] = sc, not attrs.get("transpose_b", False)
            if sa is not None or sc is not None:
                new = Node(node.op, [a, c], attrs, [node.outputs[0].aval])
                new.outputs = node.outputs          # same Value: consumers need no remapping
                for o in new.outputs:
                    o.node = new
                nodes.append(new)
                changed = True
                continue
        nodes.append(node)
    if not changed:
        return graph
    return dce(Graph(graph.inputs, nodes, graph.outputs))


__all__ = ["sink_layout", "fold_matmul_transposes"]
