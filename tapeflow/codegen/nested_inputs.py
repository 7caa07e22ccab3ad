"""What the graphs nested in If, While and the loop gradients take as inputs, per op
(``NESTED_INPUTS``): shape_free.py re-infers each graph from those avals."""
from ..ir.defs.loops import stacked_rows


def _avals(graph):
    return [v.aval for v in graph.outputs]


def _agree(xs, ys):
    """Record that avals ``xs`` and ``ys`` have equal shapes (raise if they do not); a size
    only the run knows decides nothing here: the template reads it from the arrays."""
    if len(xs) != len(ys) or not all(len(x.shape) == len(y.shape) and all(
            getattr(a, "run_time", False) or getattr(b, "run_time", False) or a == b
            for a, b in zip(x.shape, y.shape)) for x, y in zip(xs, ys)):
        raise ValueError("the graphs of this node do not fit each other")


def _while_inputs(ins, cond_graph, body_graph, n_vars):
    yield "cond_graph", ins
    yield "body_graph", ins


def _while_grad_inputs(ins, fwd_graph, bwd_graph, n_vars, n_extra, memory_budget):
    loop = ins[1:1 + n_vars + n_extra]
    yield "fwd_graph", loop
    yield "bwd_graph", _avals(fwd_graph)[n_vars:] + loop[n_vars:] + ins[1 + n_vars + n_extra:]


def _while_grad_grad_inputs(ins, fwd_graph, bwd_graph, fwd_vjp, bwd_vjp, n_vars, n_extra):
    body = ins[1:1 + n_vars + n_extra]
    n_carry = (len(ins) - 1 - n_vars - n_extra) // 2
    carry = ins[1 + n_vars + n_extra:1 + n_vars + n_extra + n_carry]
    yield "fwd_graph", body
    rows = _avals(fwd_graph)[n_vars:]
    yield "bwd_graph", rows + body[n_vars:] + carry
    yield "bwd_vjp", rows + body[n_vars:] + carry + carry
    yield "fwd_vjp", body + body[:n_vars] + rows
    # what the template writes where, and its infer rule does not check: equal sizes
    _agree(_avals(fwd_graph)[:n_vars], body[:n_vars])
    _agree(_avals(bwd_graph), carry)
    _agree(_avals(bwd_vjp), rows + body[n_vars:] + carry)
    _agree(_avals(fwd_vjp), body)


def _while_with_grad_inputs(ins, cond_graph, fwd_graph, bwd_graph, seed_graph, n_vars, n_extra,
                            memory_budget):
    loop = ins[:n_vars + n_extra]
    yield "cond_graph", loop
    yield "fwd_graph", loop
    yield "seed_graph", loop[:n_vars] + [seed_graph.inputs[n_vars].aval] + ins[n_vars + n_extra:]
    yield "bwd_graph", _avals(fwd_graph)[n_vars:] + loop[n_vars:] + _avals(seed_graph)


def _while_stacks_inputs(ins, cond_graph, body_graph, fwd_graph, n_vars, memory_budget):
    yield "cond_graph", ins
    yield "body_graph", ins
    yield "fwd_graph", ins


def _while_grad_stacks_inputs(ins, fwd_graph, bwd_graph, n_vars, n_extra, memory_budget):
    k = len(stacked_rows(fwd_graph, n_vars))      # the stacks come last; the graphs skip them
    yield from _while_grad_inputs(ins[:len(ins) - k], fwd_graph, bwd_graph, n_vars, n_extra,
                                  memory_budget)


# op -> fn(operand avals, **attrs) yielding (graph attribute, the avals its inputs take), in
# an order where each graph's inputs are known when it comes (a loop gradient's backward body
# reads the forward body's outputs): the ops' infer rules (ir/defs/control.py, loops.py) say
# what each graph is given. An op carrying graphs that is missing here is inferred like any
# other, its graphs keeping their traced shapes (its rule then records the sizes as guards).
NESTED_INPUTS = {
    "If": lambda ins, then_graph, else_graph: iter([("then_graph", ins[1:]), ("else_graph", ins[1:])]),
    "While": _while_inputs,
    "WhileGrad": _while_grad_inputs,
    "WhileGradGrad": _while_grad_grad_inputs,
    "WhileWithGrad": _while_with_grad_inputs,
    "WhileStacks": _while_stacks_inputs,
    "WhileGradStacks": _while_grad_stacks_inputs,
}
