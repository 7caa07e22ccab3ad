"""Kernel of WhileGrad (ir/defs/loops.py): the forward loop keeps each iteration's values,
then the backward body runs over them in reverse: O(n) body evaluations.

The trip count ``n`` is the forward While's, so the plan is fixed before the loop runs:
``segment_length`` gives ``k = n`` (one segment: every iteration's values stacked, as
TensorFlow's while_v2) when ``n`` rows fit the memory budget, else checkpoints: the loop
state at every k-th iteration is kept, and each segment's values are recomputed from its
checkpoint just before the backward walks it (n more body evaluations, about
``n/k`` states plus ``k`` rows of memory: O(sqrt(n)))."""
import math
import os
from dataclasses import dataclass

import numpy as np

from ..interpret import run_graph
from ..registry import kernel


def segment_length(n, row_bytes, state_bytes, budget):
    """Iterations per segment: ``n`` if the stacks fit ``budget`` bytes, else the ``k``
    minimizing ``(n / k) * state_bytes + k * row_bytes``."""
    if n * row_bytes <= budget or n <= 1:
        return max(n, 1)
    return min(n, max(1, math.ceil(math.sqrt(n * state_bytes / row_bytes))))


@dataclass(frozen=True)
class LoopPlan:
    """How a loop gradient keeps its values for a run of ``n`` iterations: ``k`` iterations
    per segment (``segment_length``; ``k >= n``: plain stacks)."""
    n: int
    row_bytes: int
    state_bytes: int
    k: int

    @property
    def checkpoints(self):
        """Loop states kept (0 for plain stacks: the first is the loop's input)."""
        return 0 if self.k >= self.n else -(-self.n // self.k)

    @property
    def nbytes(self):
        """Bytes its stacks (at most ``k`` rows) and checkpoints hold at once."""
        return min(self.k, self.n) * self.row_bytes + self.checkpoints * self.state_bytes

    def __str__(self):
        rows = f"{min(self.k, self.n)} rows x {self.row_bytes} bytes"
        if not self.checkpoints:
            return f"stacks: {rows}"
        return (f"checkpoints every {self.k} iterations: {self.checkpoints} states x "
                f"{self.state_bytes} bytes + {rows}")


def plan(node, n):
    """The ``LoopPlan`` of WhileGrad ``node`` running ``n`` iterations (its kernel's choice)."""
    fwd, nv = node.attrs["fwd_graph"], node.attrs["n_vars"]
    rb, sb = row_bytes(fwd, nv), state_bytes(fwd, nv)
    return LoopPlan(n, rb, sb, segment_length(n, rb, sb, node.attrs["memory_budget"]))


def backward_loops(graph, inputs, name):
    """(what, bytes) of each WhileGrad of program ``graph`` (``name``) whose trip count is one
    of its first inputs, given as tensors ``inputs`` (a call's residuals): what its loop
    gradients will hold when the program runs (``GradientTape.saved_bytes``)."""
    position = {v.id: i for i, v in enumerate(graph.inputs[:len(inputs)])}
    out = []
    for node in graph.nodes:
        i = position.get(node.inputs[0].id) if node.op == "WhileGrad" else None
        if i is not None and inputs[i] is not None:
            p = plan(node, int(inputs[i]._value))
            where = "" if node.line is None else \
                f" at {os.path.basename(node.line[0])}:{node.line[1]}"
            out.append((f"loop{where} in {name}, {p.n} iterations: {p}", p.nbytes))
    return out


def row_bytes(graph, n_vars):
    """Bytes one iteration stacks: the forward body's outputs after the loop variables."""
    return sum(int(np.prod(v.aval.shape, dtype=np.int64)) * v.aval.dtype.size
               for v in graph.outputs[n_vars:])


def state_bytes(graph, n_vars):
    """Bytes of one checkpoint: the loop variables."""
    return sum(int(np.prod(v.aval.shape, dtype=np.int64)) * v.aval.dtype.size
               for v in graph.inputs[:n_vars])


@kernel("WhileGrad")
def _while_grad(count, *operands, fwd_graph, bwd_graph, n_vars, n_extra,
                memory_budget):
    n = int(count)
    state = operands[:n_vars]
    extra = operands[n_vars:n_vars + n_extra]
    carry = operands[n_vars + n_extra:]
    k = segment_length(n, row_bytes(fwd_graph, n_vars), state_bytes(fwd_graph, n_vars),
                       memory_budget)
    checkpoints = []
    for i in range(n):
        if i % k == 0:
            checkpoints.append(state)
        if i + k >= n and i % k == 0:
            break                       # the last segment is recomputed by the backward
        state = run_graph(fwd_graph, *state, *extra)[:n_vars]
    for start in reversed(range(0, n, k)):
        state, stack = checkpoints.pop(), []
        for _ in range(min(k, n - start)):
            out = run_graph(fwd_graph, *state, *extra)
            state = out[:n_vars]
            stack.append(out[n_vars:])
        while stack:
            carry = run_graph(bwd_graph, *stack.pop(), *extra, *carry)
    return tuple(carry)



@kernel("WhileWithGrad")
def _while_with_grad(*operands, cond_graph, fwd_graph, bwd_graph, seed_graph, n_vars, n_extra,
                     memory_budget):
    """One forward loop that both gives the While's result and keeps WhileGrad's rows, while
    they fit ``memory_budget``; past it the rows are dropped, the loop runs on to its end, and
    the backward is WhileGrad's with the trip count now known (checkpoints: the same values)."""
    init = operands[:n_vars]
    extra = operands[n_vars:n_vars + n_extra]
    seeds = operands[n_vars + n_extra:]
    fit = memory_budget // max(row_bytes(fwd_graph, n_vars), 1)
    state, stack, n = init, [], 0
    while run_graph(cond_graph, *state, *extra)[0]:
        out = run_graph(fwd_graph, *state, *extra)
        if stack is not None and (n < fit or n < 1):
            stack.append(out[n_vars:])
        else:
            stack = None
        state = out[:n_vars]
        n += 1
    result = (*state, np.int32(n))
    carry = run_graph(seed_graph, *result, *seeds)
    if stack is None:
        carry = _while_grad(np.int32(n), *init, *extra, *carry, fwd_graph=fwd_graph,
                            bwd_graph=bwd_graph, n_vars=n_vars, n_extra=n_extra,
                            memory_budget=memory_budget)
    else:
        while stack:
            carry = run_graph(bwd_graph, *stack.pop(), *extra, *carry)
    return (*result, *carry)


def describe(node):
    """One line saying how WhileGrad ``node`` keeps its loop's values (``tapeflow dump``)."""
    nv, budget = node.attrs["n_vars"], node.attrs["memory_budget"]
    rb, sb = row_bytes(node.attrs["fwd_graph"], nv), state_bytes(node.attrs["fwd_graph"], nv)
    head = (f"{rb} bytes stacked per iteration, {sb} bytes of loop state; "
            f"budget {budget} bytes: ")
    if rb == 0:
        return head + "nothing to stack"
    fit = budget // rb
    if fit <= 1:
        return head + (f"checkpoints: the state every ceil(sqrt(n * {sb} / {rb})) iterations, "
                       f"each segment recomputed in the backward (O(sqrt n) memory)")
    return head + (f"stacks while n <= {fit} iterations ({fit * rb} bytes), else checkpoints "
                   f"every ceil(sqrt(n * {sb} / {rb})) iterations (O(sqrt n) memory)")


@kernel("WhileGradGrad")
def _while_grad_grad(count, *operands, fwd_graph, bwd_graph, fwd_vjp, bwd_vjp, n_vars, n_extra):
    """WhileGrad's VJP in four linear passes (states s_i, rows r_i = fwd's extra outputs,
    carries c_i = bwd(r_i, e, c_{i+1}) from c_n = carry): the forward keeps s_i and r_i; the
    carry pass keeps each c_{i+1}; ascending, ``bwd_vjp`` turns the output's cotangent into
    each r_i's and the carry's; descending, ``fwd_vjp`` turns those into the states' and the
    initial values'. Each operand's cotangent is summed over both."""
    n = int(count)
    nc = (len(operands) - n_vars - n_extra) // 2
    state = operands[:n_vars]
    extra = operands[n_vars:n_vars + n_extra]
    carry = operands[n_vars + n_extra:n_vars + n_extra + nc]
    carry_ct = operands[n_vars + n_extra + nc:]
    states, rows = [], []
    for _ in range(n):
        out = run_graph(fwd_graph, *state, *extra)
        states.append(state)
        rows.append(out[n_vars:])
        state = out[:n_vars]
    carries = [None] * n
    for i in reversed(range(n)):
        carries[i] = carry
        carry = run_graph(bwd_graph, *rows[i], *extra, *carry)
    nr = len(fwd_graph.outputs) - n_vars
    extra_ct = [np.zeros_like(e) for e in extra]
    rows_ct = [None] * n
    ct = tuple(carry_ct)
    for i in range(n):
        out = run_graph(bwd_vjp, *rows[i], *extra, *carries[i], *ct)
        rows_ct[i] = out[:nr]
        extra_ct = [a + b for a, b in zip(extra_ct, out[nr:nr + n_extra], strict=True)]
        ct = out[nr + n_extra:]
    state_ct = [np.zeros_like(s) for s in operands[:n_vars]]
    for i in reversed(range(n)):
        out = run_graph(fwd_vjp, *states[i], *extra, *state_ct, *rows_ct[i])
        state_ct = out[:n_vars]
        extra_ct = [a + b for a, b in zip(extra_ct, out[n_vars:], strict=True)]
    return (*state_ct, *extra_ct, *ct)
