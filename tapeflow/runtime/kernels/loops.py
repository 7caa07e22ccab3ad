"""Kernel of WhileGrad (ir/defs/loops.py): the forward loop keeps each iteration's values,
then the backward body runs over them in reverse: O(n) body evaluations.

The trip count ``n`` is the forward While's, so the plan is fixed before the loop runs:
``segment_length`` gives ``k = n`` (one segment: every iteration's values stacked, as
TensorFlow's while_v2) when ``n`` rows fit the memory budget, else checkpoints: the loop
state at every k-th iteration is kept, and each segment's values are recomputed from its
checkpoint just before the backward walks it (n more body evaluations, about
``n/k`` states plus ``k`` rows of memory: O(sqrt(n))).

WhileStacks and WhileGradStacks (passes/keep_stacks.py) are WhileWithGrad cut in two: the
forward program's loop returns its stacks (empty past the budget), the backward program's
gradient reads them (or, given empty ones, checkpoints as WhileGrad).

What a loop gradient will hold (``plan``: a ``LoopPlan`` from the trip count) and how it keeps
its values (``describe``) are worked out here too, next to the kernels that decide them, for
``GradientTape.saved_bytes`` and ``tapeflow dump``."""
import math
from dataclasses import dataclass

import numpy as np

from ...ir.defs.loops import history_spans, row_states, stacked_rows  # noqa: F401 (re-exported)
from ...ir.graph import constant_of, line_str
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
    """The ``LoopPlan`` of loop-gradient ``node`` running ``n`` iterations (its kernel's
    choice): WhileGrad's by its budget; WhileGradGrad always stacks a row of state, rows, their
    cotangents and carry per iteration."""
    fwd, nv = node.attrs["fwd_graph"], node.attrs["n_vars"]
    rb, sb = row_bytes(fwd, nv), state_bytes(fwd, nv)
    if rb is None or sb is None:
        return None                     # sizes known only at run time
    if node.op == "WhileGradGrad":
        cb = _sum_bytes(v.aval for v in node.attrs["bwd_graph"].outputs)
        return None if cb is None else LoopPlan(n, sb + 2 * rb + cb, 0, max(n, 1))
    return LoopPlan(n, rb, sb, segment_length(n, rb, sb, node.attrs["memory_budget"]))


def backward_loops(graph, inputs, name):
    """(what, bytes) of each loop gradient (WhileGrad, WhileGradGrad) of program ``graph``
    (``name``) whose trip count is one of its first inputs, given as tensors ``inputs`` (a
    call's residuals): what it will hold when the program runs (``GradientTape.saved_bytes``)."""
    position = {v.id: i for i, v in enumerate(graph.inputs[:len(inputs)])}
    out = []
    for node in graph.nodes:
        i = position.get(node.inputs[0].id) if node.op in LOOP_GRADS else None
        if i is not None and inputs[i] is not None:
            n = int(inputs[i]._value)
            p = plan(node, n)
            where = f" at {line_str(node)}" if node.line else ""
            order = " (second order)" if node.op == "WhileGradGrad" else ""
            given = _given_stacks(node, position, inputs)
            if given is not None and (n == 0 or given and len(given[0]) > 0 or p is None):
                # the forward program returned the stacks: saved with the call's tensors
                rows = f"{n} rows x {p.row_bytes} bytes" if p is not None else f"{n} rows"
                out.append((f"loop{where} in {name}, {n} iterations: stacks: {rows}, returned "
                            f"by the forward program (among the tensors saved)", 0))
            elif p is None:
                out.append((f"loop{where} in {name}{order}, {n} iterations: sizes known only "
                            f"when it runs (not counted)", 0))
            else:
                out.append((f"loop{where} in {name}{order}, {p.n} iterations: {p}", p.nbytes))
    return out


LOOP_GRADS = ("WhileGrad", "WhileGradStacks", "WhileGradGrad")


def _given_stacks(node, position, inputs):
    """The stacks a WhileGradStacks ``node`` reads, as the call's saved tensors (arrays), or
    None for the other loop gradients: empty ones mean the forward was past its budget."""
    if node.op != "WhileGradStacks":
        return None
    k = len(stacked_rows(node.attrs["fwd_graph"], node.attrs["n_vars"]))
    tensors = [inputs[position[v.id]] for v in node.inputs[len(node.inputs) - k:]]
    return [t._value for t in tensors]


def row_bytes(graph, n_vars, rows=None):
    """Bytes one iteration stacks (``stacked_rows``). ``rows``: one iteration's rows as
    arrays, for sizes known only at run time (a function traced with ``None`` dims); without
    them such sizes give None."""
    picked = stacked_rows(graph, n_vars)
    if rows is not None:
        return sum(np.asarray(rows[r]).nbytes for r in picked)
    return _sum_bytes(graph.outputs[n_vars + r].aval for r in picked)


def state_bytes(graph, n_vars, state=None):
    """Bytes of one checkpoint: the loop variables (``state``: their arrays; see row_bytes)."""
    if state is not None:
        return sum(np.asarray(s).nbytes for s in state)
    return _sum_bytes(v.aval for v in graph.inputs[:n_vars])


@kernel("WhileGrad")
def _while_grad(count, *operands, fwd_graph, bwd_graph, n_vars, n_extra,
                memory_budget):
    n = int(count)
    state = operands[:n_vars]
    extra = operands[n_vars:n_vars + n_extra]
    carry = operands[n_vars + n_extra:]
    rb = row_bytes(fwd_graph, n_vars)
    if rb is None and n:                # sizes known at run time: one iteration's rows
        rb = row_bytes(fwd_graph, n_vars, run_graph(fwd_graph, *state, *extra)[n_vars:])
    k = segment_length(n, rb or 0, state_bytes(fwd_graph, n_vars, state), memory_budget)
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
    rb = row_bytes(fwd_graph, n_vars)
    fit = None if rb is None else memory_budget // max(rb, 1)
    state, stack, n = init, [], 0
    while run_graph(cond_graph, *state, *extra)[0]:
        out = run_graph(fwd_graph, *state, *extra)
        if fit is None:                 # sizes known at run time: the first rows'
            fit = memory_budget // max(row_bytes(fwd_graph, n_vars, out[n_vars:]), 1)
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


@kernel("WhileStacks")
def _while_stacks(*operands, cond_graph, body_graph, fwd_graph, n_vars, memory_budget):
    """The While's loop keeping its rows as stacks (``stack_avals``: a loop variable's rows are
    its history of n + 1 states), returned as outputs; past ``memory_budget`` the rows are
    dropped and the stacks returned empty (the backward then checkpoints)."""
    state, extra = operands[:n_vars], operands[n_vars:]
    picked, states = stacked_rows(fwd_graph, n_vars), row_states(fwd_graph, n_vars)
    spans = history_spans(fwd_graph, n_vars)
    rb = row_bytes(fwd_graph, n_vars)
    fit = None if rb is None else memory_budget // max(rb, 1)
    rows, n = [], 0
    while run_graph(cond_graph, *state, *extra)[0]:
        out = run_graph(fwd_graph, *state, *extra)
        if fit is None:                 # sizes known at run time: the first rows'
            fit = memory_budget // max(row_bytes(fwd_graph, n_vars, out[n_vars:]), 1)
        if rows is not None and (n < fit or n < 1):
            rows.append([state, out[n_vars:], out[:n_vars]])
        else:
            rows = None
        state = out[:n_vars]
        n += 1
    if rows and not _one_shape(rows, picked, states):
        rows = None     # sizes that change across iterations: no stack; the backward recomputes
    stacks = []
    for r in picked:
        row = fwd_graph.outputs[n_vars + r].aval
        if rows is None or not rows:
            stacks.append(np.zeros((0,) + _empty_row(row), row.dtype.np))
        elif states[r] is None:
            stacks.append(np.stack([np.asarray(x[1][r]) for x in rows]))
        else:
            j = states[r][0]
            lo, hi = spans[j]
            history = [np.asarray(x[0][j]) for x in rows] + [np.asarray(rows[-1][2][j])]
            stacks.append(np.stack(history[lo:n + hi]))
    return (*state, np.int32(n), *stacks)


def _one_shape(rows, picked, states):
    """Whether each stacked row (or loop variable history) keeps one shape across the
    iterations: a size that depends on the iteration (``tf.ones([i + 1])``, a TensorArray
    whose elements grow) cannot be one stack, so WhileStacks returns none and
    WhileGradStacks runs WhileGrad's plan instead, which keeps such rows as lists."""
    for r in picked:
        at, k = (1, r) if states[r] is None else (0, states[r][0])
        shapes = {np.shape(x[at][k]) for x in rows}
        if at == 0:
            shapes.add(np.shape(rows[-1][2][k]))
        if len(shapes) > 1:
            return False
    return True


def _empty_row(aval):
    """A row's shape for an empty stack (its aval's, unless a size is known only at run time:
    then zeros, since an empty stack is read for nothing but its emptiness)."""
    return tuple(0 if d is None else d for d in aval.shape)


@kernel("WhileGradStacks")
def _while_grad_stacks(count, *operands, fwd_graph, bwd_graph, n_vars, n_extra, memory_budget):
    """WhileGrad over the rows the forward program stacked (``WhileStacks``); over no rows
    (the forward was past its budget) WhileGrad itself: checkpoints."""
    n = int(count)
    picked, states = stacked_rows(fwd_graph, n_vars), row_states(fwd_graph, n_vars)
    stacks = operands[len(operands) - len(picked):]
    operands = operands[:len(operands) - len(picked)]
    if n and stacks and len(stacks[0]) == 0:
        return _while_grad(count, *operands, fwd_graph=fwd_graph, bwd_graph=bwd_graph,
                           n_vars=n_vars, n_extra=n_extra, memory_budget=memory_budget)
    extra = operands[n_vars:n_vars + n_extra]
    carry = operands[n_vars + n_extra:]
    history = {states[r][0]: s for s, r in enumerate(picked) if states[r] is not None}
    spans = history_spans(fwd_graph, n_vars)
    where = [(picked.index(r), 0) if state is None else
             (history[state[0]], state[1] - spans[state[0]][0])
             for r, state in enumerate(states)]           # row -> (its stack, offset)
    for i in reversed(range(n)):
        rows = [stacks[s][i + off] for s, off in where]
        carry = run_graph(bwd_graph, *rows, *extra, *carry)
    return tuple(carry)


def trip_bounds(cond_graph, fwd_graph, n_vars):
    """What bounds the trip count before the loop starts: (i, j) for each conjunct of its
    condition (the condition itself, or an operand of its ``LogicalAnd``s) that reads
    ``loop variable i < operand j`` where the body adds 1 to ``i``: the loop runs at most
    ``j - i`` times from the start (at least 0). ``for i in tf.range`` makes such a loop;
    ``maximum_iterations`` adds such a conjunct to any loop (``control.loop``)."""
    if not cond_graph.outputs or cond_graph.outputs[0].node is None:
        return []
    nodes = set(map(id, cond_graph.nodes))
    names = {v.id: k for k, v in enumerate(cond_graph.inputs)}
    out, todo = [], [cond_graph.outputs[0].node]
    while todo:
        node = todo.pop()
        if node.op == "LogicalAnd":
            todo += [v.node for v in node.inputs if v.node is not None and id(v.node) in nodes]
        elif node.op == "Less":
            i, j = (names.get(v.id) for v in node.inputs)
            if i is not None and j is not None and i < n_vars <= j and \
                    _adds_one(fwd_graph, i) and (i, j) not in out:
                out.append((i, j))
    return out


def _adds_one(fwd_graph, i):
    """Whether the body's next value of loop variable ``i`` is ``i + 1``."""
    step = fwd_graph.outputs[i].node
    if step is None or step.op != "Add" or step.inputs[0] is not fwd_graph.inputs[i]:
        return False
    one = constant_of(step.inputs[1])
    return one is not None and one.shape == () and one == 1 and step.inputs[1].node in fwd_graph.nodes


@dataclass(frozen=True)
class CounterIndex:
    """A value of a loop body that is ``slope * c + offset``, ``c`` the integer loop variable
    ``counter`` that the body adds 1 to: iteration ``k`` computes ``slope * (c0 + k) + offset``
    from the counter's initial value ``c0``. ``slope`` is a product of factors, ``offset`` a
    sum of ``(sign, product)`` terms; each factor is loop-invariant: an int (a constant of the
    body) or ``("operand", j)`` (the body's input ``j >= n_vars``). ``ta.write(t, ...)`` in
    ``for t in tf.range(a, b, d)`` writes at such an index (``a + c * d``), and so does a
    write at ``tf.while_loop``'s counter or ``2 * t + 1``."""
    counter: int
    slope: tuple
    offset: tuple


def counter_index(graph, n_vars, v):
    """``v``, a value of loop body ``graph``, as a ``CounterIndex``, or None."""
    inputs = {x.id: k for k, x in enumerate(graph.inputs)}
    nodes = set(map(id, graph.nodes))

    def invariant(x):
        k = inputs.get(x.id)
        if k is not None:
            return ("operand", k) if k >= n_vars else None
        array = constant_of(x)
        if array is not None and id(x.node) in nodes and array.shape == () and x.aval.dtype.is_integer:
            return int(array)
        return None

    def affine(x):
        k = inputs.get(x.id)
        if k is not None:
            ok = k < n_vars and x.aval.dtype.is_integer and _adds_one(graph, k)
            return CounterIndex(k, (), ()) if ok else None
        node = x.node
        if node is None or id(node) not in nodes or node.op not in ("Add", "Sub", "Mul"):
            return None
        a, b = node.inputs
        pairs = ((a, b), (b, a)) if node.op != "Sub" else ((a, b),)
        for p, q in pairs:
            f, c = affine(p), invariant(q)
            if f is None or c is None:
                continue
            if node.op == "Mul":
                return CounterIndex(f.counter, f.slope + (c,),
                                    tuple((sign, t + (c,)) for sign, t in f.offset))
            return CounterIndex(f.counter, f.slope,
                                f.offset + ((1 if node.op == "Add" else -1, (c,)),))
        return None

    return affine(v)


def counted(cond_graph, fwd_graph, n_vars):
    """(i, j) if the loop runs exactly while loop variable ``i < operand j`` and the body adds
    1 to ``i`` (``for i in tf.range`` makes such loops): it runs ``j - i`` times from the start
    (at least 0), known before it starts; else None (``trip_bounds`` may still bound it)."""
    bounds = trip_bounds(cond_graph, fwd_graph, n_vars)
    return bounds[0] if len(cond_graph.nodes) == 1 and bounds else None


def describe(node):
    """How loop-gradient ``node`` (WhileGrad, WhileWithGrad, WhileStacks, WhileGradStacks or
    WhileGradGrad) keeps its loop's values (``tapeflow dump``): [what it is, its bytes per iteration, its mode]."""
    a = node.attrs
    nv, fwd = a["n_vars"], a["fwd_graph"]
    rb, sb = row_bytes(fwd, nv), state_bytes(fwd, nv)
    cb = _sum_bytes(v.aval for v in a["bwd_graph"].outputs) if "bwd_graph" in a else 0
    if None in (rb, sb, cb):
        return [f"a loop gradient ({node.op})",
                "per iteration: sizes known only when it runs (a function traced with None dims)",
                "mode: stacks of n rows (no budget: it never checkpoints)"
                if node.op == "WhileGradGrad" else
                f"mode: stacks while n rows fit the budget ({a['memory_budget']} bytes), else "
                f"checkpoints; decided when the loop runs"]
    if node.op == "WhileGradGrad":
        return ["a loop's second-order gradient",
                f"per iteration: {sb + 2 * rb + cb} bytes stacked ({sb} of loop state, {rb} of "
                f"rows, {rb} of their cotangents, {cb} of carry)",
                "mode: stacks of n rows, allocated when it starts (n: the trip count); "
                "no budget: it never checkpoints"]
    what = {"WhileGrad": "a loop's gradient (it runs the forward again to fill its stacks)",
            "WhileWithGrad": "the While and its gradient in one loop (the forward runs once)",
            "WhileStacks": "the While keeping its gradient's stacks, returned with the "
                           "residuals (the forward runs once)",
            "WhileGradStacks": "a loop's gradient over the stacks the forward program "
                               "returned"}[node.op]
    per = f"per iteration: {rb} bytes stacked, {sb} bytes of loop state"
    if rb == 0:
        return [what, per, "mode: nothing to stack"]
    budget = a["memory_budget"]
    fit = budget // rb
    every = f"checkpoints every ceil(sqrt(n * {sb} / {rb})) iterations"
    if node.op == "WhileGradStacks":
        return [what, per, f"mode: reads the n rows it is given; given none (the forward was "
                           f"past the budget, {budget} bytes), {every} (O(sqrt n) memory)"]
    if node.op == "WhileGrad":
        if fit <= 1:
            mode = (f"{every} (budget {budget} bytes): the state at each, one segment of rows "
                    f"recomputed at a time in the backward (O(sqrt n) memory)")
        else:
            mode = (f"stacks of n rows, allocated when it starts (n: the forward loop's trip "
                    f"count), while n <= {fit} (budget {budget} bytes); past that, {every} "
                    f"(O(sqrt n) memory)")
        return [what, per, "mode: " + mode]
    past = (f"the rows are dropped and the gradient {every} (the forward runs again; "
            f"O(sqrt n) memory)")
    if node.op == "WhileStacks":
        past = (f"the stacks are returned empty and the backward {every} (the forward runs "
                f"again; O(sqrt n) memory)")
    if fit <= 1:
        mode = f"checkpoints (budget {budget} bytes): after the first iteration {past}"
    else:
        if counted(a["cond_graph"], fwd, nv) is not None:
            how = "stacks allocated at the start for the trip count (a counted loop: i < bound, i += 1)"
        elif trip_bounds(a["cond_graph"], fwd, nv):
            how = ("stacks allocated at the start for the loop's bound (maximum_iterations, or "
                   "a condition i < bound and ..., i += 1; it may stop before)")
        else:
            how = "stacks of 16 rows, doubling as they fill (the trip count is known only at the end)"
        mode = f"{how}, up to {fit} rows (budget {budget} bytes); past that, {past}"
    return [what, per, "mode: " + mode]


def _sum_bytes(avals):
    sizes = [_nbytes(a) for a in avals]
    return None if None in sizes else sum(sizes)


def _nbytes(aval):
    """Bytes of a value of ``aval``; None if a size is known only at run time."""
    if any(d is None for d in aval.shape):
        return None
    return int(np.prod(aval.shape, dtype=np.int64)) * aval.dtype.size


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
    # the last state's cotangent (zeros, shaped as that state: a TensorArray grown in the
    # loop has more rows than at the start)
    state_ct = [np.zeros_like(s) for s in state]
    for i in reversed(range(n)):
        out = run_graph(fwd_vjp, *states[i], *extra, *state_ct, *rows_ct[i])
        state_ct = out[:n_vars]
        extra_ct = [a + b for a, b in zip(extra_ct, out[n_vars:], strict=True)]
    return (*state_ct, *extra_ct, *ct)
