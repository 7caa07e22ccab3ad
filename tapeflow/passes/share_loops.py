"""One loop instead of two: a While and the WhileGrad of it in the same program become one
WhileWithGrad, whose forward loop both gives the While's result and keeps the rows the
backward reads.

Without this pass a program that takes a loop's gradient runs the loop's body 3n times: n in
the While, n again in WhileGrad (to fill its stacks: a gradient rule sees the forward op
after the fact, and the stacks never leave WhileGrad), n body gradients. WhileGrad cannot
simply take over, because what starts its backward (the cotangents of the loop's result,
e.g. ``2 h_T`` for ``sum(h_T^2)``) is computed *from* the While's outputs. So the pass moves
that computation into the fused op as a ``seed_graph``: the nodes that lie between the
While's outputs and WhileGrad's starting carry, copied (the originals stay for their other
users, else DCE drops them). Then 2n: as hand-written backpropagation through time.

It applies where both ops are in one graph: the program of a function whose body takes
``tape.gradient``. Under a tape across a function boundary the two ops land in two programs:
there ``keep_stacks`` (on the joint graph, before it is split) makes the forward program
return the stacks and the backward read them, for the same n + n. It runs in ``FINAL`` only (the
fused op is never differentiated), and only when nothing it moves has an effect: the While
prints nothing, and the nodes moved above it (the starting carry's other inputs, e.g.
constant zeros) and the seed nodes are pure, so every print runs in its order.

Then, in every loop gradient of the program (``read_only_list_cotangents``): a TensorArray's
cotangent carried by the backward body, which reads the row iteration ``k`` wrote and zeroes
it (``TensorListSetItem``'s gradient: an overwritten element gets no gradient), is left
unwritten when nothing reads the carry's result and the forward wrote a different row in
every iteration (``counter_index`` with a constant slope other than 0): no later iteration
reads a zeroed row, so the zeroes are never seen. The backward then reads the cotangent in
place, where writing it made the program copy the whole ``[n, ...]`` array first (it is
often a constant argument, the gradient of ``ta.stack()``'s mean).
"""
from ..ir.graph import Graph, Node, Value, constant_of, use_counts
from ..ir.opdef import OPS
from ..runtime.kernels.loops import counter_index
from .dce import dce
from .rewrite import copy_node, is_pure, keep


def share_loops(graph):
    """``graph`` with each (While, WhileGrad of it) pair fused into one WhileWithGrad, and
    the list cotangents nothing reads after a loop gradient left unwritten."""
    return read_only_list_cotangents(_fused(graph))


def _fused(graph):
    producer = {v.id: node for node in graph.nodes for v in node.outputs}
    for g in graph.nodes:
        if g.op != "WhileGrad":
            continue
        w = producer.get(g.inputs[0].id)
        if w is None or w.op != "While" or not is_pure(w):
            continue
        nv, loop = w.attrs["n_vars"], len(w.inputs)
        if g.inputs[0] is not w.outputs[nv] or g.attrs["n_vars"] != nv or \
                loop != nv + g.attrs["n_extra"] or \
                [v.id for v in g.inputs[1:1 + loop]] != [v.id for v in w.inputs]:
            continue
        fused = _fuse(graph, w, g, producer)
        if fused is not None:
            return _fused(fused)
    return graph


def _fuse(graph, w, g, producer):
    nodes = graph.nodes
    at = nodes.index(w)
    carry = g.inputs[1 + len(w.inputs):]
    # values computed from the While's result
    downstream = {v.id for v in w.outputs}
    for node in nodes[at + 1:]:
        if any(v.id in downstream for v in node.inputs):
            downstream.update(v.id for v in node.outputs)
    # the starting carry's ancestors, split into seed nodes (downstream of the While) and the
    # others after it, which move above the fused op
    ancestors, stack = set(), [v for v in carry]
    while stack:
        v = stack.pop()
        node = producer.get(v.id)
        if node is None or id(node) in ancestors or node is w:
            continue
        ancestors.add(id(node))
        stack.extend(node.inputs)
    seed_nodes = [n for n in nodes[at + 1:] if id(n) in ancestors
                  and any(o.id in downstream for o in n.outputs)]
    moved = [n for n in nodes[at + 1:] if id(n) in ancestors and n not in seed_nodes]
    if not all(is_pure(n) for n in seed_nodes + moved):
        return None
    seed_graph, externals = _seed_graph(w, seed_nodes, carry)
    attrs = {"cond_graph": w.attrs["cond_graph"], "fwd_graph": g.attrs["fwd_graph"],
             "bwd_graph": g.attrs["bwd_graph"], "seed_graph": seed_graph,
             "n_vars": w.attrs["n_vars"], "n_extra": g.attrs["n_extra"],
             "memory_budget": g.attrs["memory_budget"]}
    f = Node("WhileWithGrad", list(w.inputs) + externals, attrs,
             [v.aval for v in w.outputs + g.outputs], w.line)
    env = {old.id: new for old, new in zip(w.outputs + g.outputs, f.outputs, strict=True)}
    out = []
    for node in nodes:
        if node is w:
            out += moved + [f]
        elif node is not g and node not in moved:
            out.append(keep(node, [env.get(v.id, v) for v in node.inputs]))
            env.update((a.id, b) for a, b in zip(node.outputs, out[-1].outputs, strict=True))
    return dce(Graph(graph.inputs, out, [env.get(v.id, v) for v in graph.outputs]))


def _seed_graph(w, seed_nodes, carry):
    """(final loop vars, trip count, externals...) -> the starting carry, and the externals:
    the values the seed nodes read that do not come from the While."""
    made = {o.id for n in seed_nodes for o in n.outputs} | {v.id for v in w.outputs}
    externals, seen = [], set()
    for v in [x for n in seed_nodes for x in n.inputs] + list(carry):
        if v.id not in made and v.id not in seen:
            seen.add(v.id)
            externals.append(v)
    env = {v.id: Value(v.aval) for v in list(w.outputs) + externals}
    inputs = [env[v.id] for v in list(w.outputs) + externals]
    copied = []
    for n in seed_nodes:
        copied.append(copy_node(n, [env[v.id] for v in n.inputs]))
        env.update((a.id, b) for a, b in zip(n.outputs, copied[-1].outputs, strict=True))
    return dce(Graph(inputs, copied, [env[v.id] for v in carry])), externals


def read_only_list_cotangents(graph):
    """``graph`` with each loop gradient's list cotangents that need no zeroing passed through
    its backward body unwritten (module docstring)."""
    uses, producer = use_counts(graph), {v.id: n for n in graph.nodes for v in n.outputs}
    env, out = {}, []
    for node in graph.nodes:
        inputs = [env.get(v.id, v) for v in node.inputs]
        bwd = _read_only(node, uses, producer) if _loop_gradient(node.op) else None
        if bwd is None or bwd is node.attrs["bwd_graph"]:
            out.append(keep(node, inputs))
        else:
            out.append(Node(node.op, inputs, dict(node.attrs, bwd_graph=bwd),
                            [v.aval for v in node.outputs], node.line))
        env.update((a.id, b) for a, b in zip(node.outputs, out[-1].outputs, strict=True))
    if all(a is b for a, b in zip(graph.nodes, out, strict=True)):
        return graph
    return Graph(graph.inputs, out, [env.get(v.id, v) for v in graph.outputs])


def _loop_gradient(name):
    """A loop gradient running its backward body (``bwd_graph``) over rows it kept within a
    memory budget (WhileGrad, WhileGradStacks, WhileWithGrad; not WhileGradGrad)."""
    op = OPS.get(name)
    return op is not None and op.stores_rows and "bwd_graph" in op.attrs and "memory_budget" in op.attrs


def _read_only(node, uses, producer):
    """``node``'s backward body with the list cotangents that need no zeroing unwritten."""
    a = node.attrs
    fwd, bwd, nv, n_extra = a["fwd_graph"], a["bwd_graph"], a["n_vars"], a["n_extra"]
    # where the carry's results start among the outputs and the loop variables among the
    # inputs: WhileWithGrad gives the While's outputs first and takes the loop variables
    # first; the others give only the carry and take the trip count first
    first_out, first_in = (nv + 1, 0) if node.op == "WhileWithGrad" else (0, 1)
    n_rows = len(fwd.outputs) - nv
    carry = bwd.inputs[n_rows + n_extra:]
    inner = use_counts(bwd)
    readers = {}
    for n in bwd.nodes:
        for v in n.inputs:
            readers.setdefault(v.id, []).append(n)

    def constant(factors):
        """The product, where each factor is an int or an operand a Const feeds; else None."""
        value = 1
        for f in factors:
            if not isinstance(f, int):
                array = constant_of(producer.get(node.inputs[first_in + f[1]].id))
                if array is None:
                    return None
                f = int(array)
            value *= f
        return value

    outputs = list(bwd.outputs)
    for c, (m, out) in enumerate(zip(carry, bwd.outputs, strict=True)):
        write = out.node
        if uses.get(node.outputs[first_out + c].id) or write is None or \
                write.op != "TensorListSetItem" or write.inputs[0] is not m or inner[out.id] != 1:
            continue
        index = write.inputs[1]
        reads = [n for n in readers.get(m.id, []) if n is not write]
        if any(n.op not in ("GatherV2", "TensorListGetItem") or n.inputs[1] is not index or
               (n.op == "GatherV2" and (n.attrs["axis"] != 0 or n.attrs["batch_dims"] != 0))
               for n in reads):
            continue
        row = next((r for r, v in enumerate(bwd.inputs[:n_rows]) if v is index), None)
        at = None if row is None else counter_index(fwd, nv, fwd.outputs[nv + row])
        if at is not None and constant(at.slope) not in (None, 0):
            outputs[c] = m
    if outputs == list(bwd.outputs):
        return bwd
    return dce(Graph(bwd.inputs, bwd.nodes, outputs))
