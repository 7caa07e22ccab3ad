"""The forward program keeps the loop's stacks: a While and the WhileGrad of it in one joint
graph that will be split in two (a function called under a tape: ``ConcreteFunction.tape_pair``)
become a WhileStacks, which returns the rows its loop computed, and a WhileGradStacks reading
them, so the backward program does not run the loop again: n forward bodies and n body
gradients, as ``share_loops`` gives inside one program.

The stacks are the split's residuals like any value the backward reads (``graph_vjp.split``),
so the tape saves them and ``saved_bytes`` counts them. Each node is replaced in place, so the
joint graph's forward and backward parts keep their node counts. A While that prints is left
as it is (the stacks are filled by WhileGrad's forward body, which has no effects), and so is
a WhileGrad whose loop is not exactly the While's.
"""
from ..ir.graph import Graph, Node
from ..ir.opdef import OPS
from .rewrite import is_pure, keep


def keep_stacks(graph, n_forward):
    """``graph`` with each (While, WhileGrad of it) pair as (WhileStacks, WhileGradStacks),
    where the While is one of the first ``n_forward`` nodes (the forward part) and the
    WhileGrad one of the others. A While whose WhileGrad is in the forward part too (a tape
    inside the function as well as around it) is left for ``share_loops`` to fuse with it."""
    producer = {v.id: node for node in graph.nodes for v in node.outputs}
    pairs = {}                          # id(While) -> WhileGrad
    inside = {id(producer.get(g.inputs[0].id)) for g in graph.nodes[:n_forward]
              if g.op == "WhileGrad"}
    for g in graph.nodes[n_forward:]:
        if g.op != "WhileGrad":
            continue
        w = producer.get(g.inputs[0].id)
        if w is None or w.op != "While" or not is_pure(w) or id(w) in pairs or id(w) in inside:
            continue
        nv, loop = w.attrs["n_vars"], len(w.inputs)
        if g.inputs[0] is w.outputs[nv] and g.attrs["n_vars"] == nv and \
                loop == nv + g.attrs["n_extra"] and \
                [v.id for v in g.inputs[1:1 + loop]] == [v.id for v in w.inputs]:
            pairs[id(w)] = g
    if not pairs:
        return graph
    grads = {id(g): g for g in pairs.values()}
    env, stacks, out = {}, {}, []
    for node in graph.nodes:
        inputs = [env.get(v.id, v) for v in node.inputs]
        if id(node) in pairs:
            g = pairs[id(node)]
            s = _node("WhileStacks", inputs,
                      {"cond_graph": node.attrs["cond_graph"],
                       "body_graph": node.attrs["body_graph"], "fwd_graph": g.attrs["fwd_graph"],
                       "n_vars": node.attrs["n_vars"], "memory_budget": g.attrs["memory_budget"]},
                      node.line)
            stacks[id(g)] = s.outputs[len(node.outputs):]
            out.append(s)
        elif id(node) in grads:
            out.append(_node("WhileGradStacks", inputs + list(stacks[id(node)]), node.attrs,
                             node.line))
        else:
            out.append(keep(node, inputs))
        env.update((a.id, b) for a, b in zip(node.outputs, out[-1].outputs[:len(node.outputs)],
                                             strict=True))
    return Graph(graph.inputs, out, [env.get(v.id, v) for v in graph.outputs])


def _node(op, inputs, attrs, line):
    out = OPS[op].infer([v.aval for v in inputs], **attrs)
    return Node(op, inputs, attrs, out, line)
