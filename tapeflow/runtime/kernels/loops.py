"""Kernel of WhileGrad (ir/defs/loops.py): the forward loop keeps each iteration's values in
a list, then the backward body runs over them in reverse: O(n) body evaluations."""
from ..interpret import run_graph
from ..registry import kernel


@kernel("WhileGrad")
def _while_grad(*operands, cond_graph, fwd_graph, bwd_graph, n_vars, n_extra):
    state = operands[:n_vars]
    extra = operands[n_vars:n_vars + n_extra]
    carry = operands[n_vars + n_extra:]
    stack = []
    while run_graph(cond_graph, *state, *extra)[0]:
        out = run_graph(fwd_graph, *state, *extra)
        state = out[:n_vars]
        stack.append(out[n_vars:])
    while stack:
        carry = run_graph(bwd_graph, *stack.pop(), *extra, *carry)
    return tuple(carry)
