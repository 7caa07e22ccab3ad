"""WhileGrad (runtime/kernels/loops.py) in one jitted function. The trip count is known when
it starts, so the plan is made once: ``k`` iterations per segment (``k = n`` when ``n`` rows
fit the memory budget: plain stacks), a first loop keeping the state at each segment's start
(no iterations when ``k = n``), then per segment, last first, a loop writing each iteration's
values into stack buffers of ``k`` rows and a reverse loop running the backward body on them.
"""
from ...passes.dce import dce
from ...ir.graph import Graph
from ...runtime.kernels.loops import row_bytes, state_bytes
from ..emitter import np_type
from .control import _assign
from .registry import stmt_op


def _buffer(em, rows, aval):
    name = em.fresh("stack")
    dims = ", ".join([rows] + [str(d) for d in aval.shape])     # sizes as read (symbolic.py)
    em.line(f"{name} = np.empty(({dims},), dtype={np_type(aval.dtype)})")
    return name


@stmt_op("WhileGrad")
def _while_grad(em, node, fwd_graph, bwd_graph, n_vars, n_extra, memory_budget):
    ins = [em.ref(v) for v in node.inputs[1:]]
    state = [em.fresh("s") for _ in range(n_vars)]
    extra = ins[n_vars:n_vars + n_extra]
    carry = [em.var(v) for v in node.outputs]
    _assign(em, state, ins[:n_vars])
    _assign(em, carry, ins[n_vars + n_extra:])
    n = em.fresh("n")
    em.line(f"{n} = np.int64({em.ref(node.inputs[0])})")
    _segments(em, n, state, extra, carry, fwd_graph, bwd_graph, n_vars, memory_budget)
    for v in node.outputs:
        em.bind(v)


def _segments(em, n, state, extra, carry, fwd_graph, bwd_graph, n_vars, memory_budget):
    """WhileGrad's loops for trip count ``n`` from the loop state ``state`` (names the code
    reassigns), updating the ``carry`` names."""
    k, segs, i = em.fresh("k"), em.fresh("segs"), em.fresh("i")
    rb, sb = row_bytes(fwd_graph, n_vars), state_bytes(fwd_graph, n_vars)
    # runtime/kernels/loops.segment_length, inline
    with em.block(f"if {n} * {rb} <= {int(memory_budget)} or {n} <= 1:"):
        em.line(f"{k} = max({n}, 1)")
    with em.block("else:"):
        em.line(f"{k} = min({n}, max(1, np.int64(np.ceil(np.sqrt({n} * {sb} / {max(rb, 1)})))))")
    em.line(f"{segs} = ({n} + {k} - 1) // {k}")
    rows = fwd_graph.outputs[n_vars:]
    checkpoints = [_buffer(em, f"max({segs}, 1)", v.aval) for v in fwd_graph.inputs[:n_vars]]
    stacks = [_buffer(em, k, r.aval) for r in rows]
    step = dce(Graph(fwd_graph.inputs, fwd_graph.nodes, fwd_graph.outputs[:n_vars]))
    em.line(f"{i} = 0")
    with em.block(f"while {i} < ({segs} - 1) * {k}:"):      # checkpoints only
        with em.block(f"if {i} % {k} == 0:"):
            for c, s in zip(checkpoints, state, strict=True):
                em.line(f"{c}[{i} // {k}] = {s}")
        _assign(em, state, em.inline(step, state + extra), simultaneous=True)
        em.line(f"{i} += 1")
    with em.block(f"if {segs} > 0:"):
        for c, s in zip(checkpoints, state, strict=True):
            em.line(f"{c}[{segs} - 1] = {s}")
    with em.block(f"while {segs} > 0:"):
        em.line(f"{segs} -= 1")
        _assign(em, state, [f"{c}[{segs}]" for c in checkpoints])
        m = em.fresh("m")
        em.line(f"{m} = min({k}, {n} - {segs} * {k})")
        em.line(f"{i} = 0")
        with em.block(f"while {i} < {m}:"):
            outs = em.inline(fwd_graph, state + extra)
            for s, e in zip(stacks, outs[n_vars:], strict=True):
                em.line(f"{s}[{i}] = {e}")
            _assign(em, state, outs[:n_vars], simultaneous=True)
            em.line(f"{i} += 1")
        with em.block(f"while {i} > 0:"):
            em.line(f"{i} -= 1")
            _assign(em, carry, em.inline(bwd_graph, [f"{s}[{i}]" for s in stacks] + extra + carry),
                    simultaneous=True)


@stmt_op("WhileWithGrad")
def _while_with_grad(em, node, cond_graph, fwd_graph, bwd_graph, seed_graph, n_vars, n_extra,
                     memory_budget):
    """runtime/kernels/loops.py's WhileWithGrad: the While's loop writing each iteration's
    rows into buffers that double as they fill (the trip count is not known before), up to
    the memory budget; past it the rows are dropped and WhileGrad's loops run (``_segments``)."""
    ins = [em.ref(v) for v in node.inputs]
    init, extra, seeds = ins[:n_vars], ins[n_vars:n_vars + n_extra], ins[n_vars + n_extra:]
    state = [em.var(v) for v in node.outputs[:n_vars]]
    _assign(em, state, init)
    rows = fwd_graph.outputs[n_vars:]
    fit = max(int(memory_budget) // max(row_bytes(fwd_graph, n_vars), 1), 1)
    n, cap, keep, i = em.fresh("n"), em.fresh("cap"), em.fresh("keep"), em.fresh("i")
    counted = _counted(cond_graph, fwd_graph, n_vars)
    if counted is None:
        em.line(f"{cap} = {min(fit, 16)}")
    else:                   # a counted loop (``for i in tf.range``): its trip count up front
        at, bound = counted
        em.line(f"{cap} = max(1, min({fit}, np.int64({ins[bound]}) - np.int64({ins[at]})))")
    stacks = [_buffer(em, cap, r.aval) for r in rows]
    em.line(f"{keep} = True")
    em.line(f"{n} = 0")
    with em.block("while True:"):
        (pred,) = em.inline(cond_graph, state + extra)
        with em.block(f"if not {pred}:"):
            em.line("break")
        outs = em.inline(fwd_graph, state + extra)
        with em.block(f"if {keep} and {n} >= {cap}:"):
            with em.block(f"if {n} < {fit}:"):       # double the buffers, up to the budget
                em.line(f"{cap} = min(2 * {cap}, {fit})")
                for s, r in zip(stacks, rows, strict=True):
                    grown = _buffer(em, cap, r.aval)
                    em.line(f"{grown}[:{n}] = {s}[:{n}]")
                    em.line(f"{s} = {grown}")
            with em.block("else:"):
                em.line(f"{keep} = False")
        with em.block(f"if {keep}:"):
            for s, e in zip(stacks, outs[n_vars:], strict=True):
                em.line(f"{s}[{n}] = {e}")
        _assign(em, state, outs[:n_vars], simultaneous=True)
        em.line(f"{n} += 1")
    for v in node.outputs[:n_vars]:
        em.bind(v)
    em.define(node.outputs[n_vars], f"np.int32({n})")
    carry = [em.var(v) for v in node.outputs[n_vars + 1:]]
    _assign(em, carry, em.inline(seed_graph, state + [em.ref(node.outputs[n_vars])] + seeds))
    with em.block(f"if {keep}:"):
        em.line(f"{i} = {n}")
        with em.block(f"while {i} > 0:"):
            em.line(f"{i} -= 1")
            _assign(em, carry, em.inline(bwd_graph, [f"{s}[{i}]" for s in stacks] + extra + carry),
                    simultaneous=True)
    with em.block("else:"):                          # past the budget: WhileGrad's plan
        again = [em.fresh("s") for _ in range(n_vars)]
        _assign(em, again, init)
        _segments(em, f"np.int64({n})", again, extra, carry, fwd_graph, bwd_graph, n_vars,
                  memory_budget)
    for v in node.outputs[n_vars + 1:]:
        em.bind(v)


def _counted(cond_graph, fwd_graph, n_vars):
    """(i, j) if the loop runs while loop variable ``i < operand j`` and the body adds 1 to
    ``i``: then it runs ``j - i`` times from the start (at least 0), known before it starts."""
    if len(cond_graph.nodes) != 1 or cond_graph.nodes[0].op != "Less":
        return None
    a, b = cond_graph.nodes[0].inputs
    names = {v.id: k for k, v in enumerate(cond_graph.inputs)}
    i, j = names.get(a.id), names.get(b.id)
    if i is None or j is None or not i < n_vars <= j:
        return None
    step = fwd_graph.outputs[i].node
    if step is None or step.op != "Add" or step.inputs[0] is not fwd_graph.inputs[i]:
        return None
    one = step.inputs[1].node
    if one is None or one.op != "Const" or one.attrs["value"].shape != () or \
            one.attrs["value"] != 1 or one not in fwd_graph.nodes:
        return None
    return i, j


def _zero(aval):
    if not aval.shape:
        return f"{np_type(aval.dtype)}(0)"
    dims = "".join(f"{d}, " for d in aval.shape)      # sizes as read (symbolic.py)
    return f"np.zeros(({dims.rstrip()}), dtype={np_type(aval.dtype)})"


def _accumulate(em, names, avals, exprs):
    """``name = name + expr`` for the float ones (integers have no cotangent: they stay 0)."""
    for name, aval, e in zip(names, avals, exprs, strict=True):
        if aval.dtype.is_floating:
            em.line(f"{name} = {name} + {e}")


@stmt_op("WhileGradGrad")
def _while_grad_grad(em, node, fwd_graph, bwd_graph, fwd_vjp, bwd_vjp, n_vars, n_extra):
    """runtime/kernels/loops.py's four passes, each a ``while`` over stacks of ``n`` rows."""
    nc = len(node.outputs) - n_vars - n_extra
    ins = [em.ref(v) for v in node.inputs[1:]]
    avals = [v.aval for v in node.inputs[1:]]
    extra = ins[n_vars:n_vars + n_extra]
    state = [em.fresh("s") for _ in range(n_vars)]
    carry = [em.fresh("c") for _ in range(nc)]
    ct = [em.fresh("ct") for _ in range(nc)]
    _assign(em, state, ins[:n_vars])
    _assign(em, carry, ins[n_vars + n_extra:n_vars + n_extra + nc])
    _assign(em, ct, ins[n_vars + n_extra + nc:])
    n, i = em.fresh("n"), em.fresh("i")
    em.line(f"{n} = np.int64({em.ref(node.inputs[0])})")
    rows = [v.aval for v in fwd_graph.outputs[n_vars:]]
    states_st = [_buffer(em, f"max({n}, 1)", a) for a in avals[:n_vars]]
    rows_st = [_buffer(em, f"max({n}, 1)", a) for a in rows]
    carry_st = [_buffer(em, f"max({n}, 1)", a) for a in avals[n_vars + n_extra:n_vars + n_extra + nc]]
    rows_ct_st = [_buffer(em, f"max({n}, 1)", a) for a in rows]
    em.line(f"{i} = 0")
    with em.block(f"while {i} < {n}:"):
        outs = em.inline(fwd_graph, state + extra)
        for b, s in zip(states_st, state, strict=True):
            em.line(f"{b}[{i}] = {s}")
        for b, e in zip(rows_st, outs[n_vars:], strict=True):
            em.line(f"{b}[{i}] = {e}")
        _assign(em, state, outs[:n_vars], simultaneous=True)
        em.line(f"{i} += 1")
    row = [f"{b}[{i}]" for b in rows_st]
    with em.block(f"while {i} > 0:"):
        em.line(f"{i} -= 1")
        for b, c in zip(carry_st, carry, strict=True):
            em.line(f"{b}[{i}] = {c}")
        _assign(em, carry, em.inline(bwd_graph, row + extra + carry), simultaneous=True)
    extra_ct = [em.fresh("ea") for _ in range(n_extra)]
    _assign(em, extra_ct, [_zero(a) for a in avals[n_vars:n_vars + n_extra]])
    nr = len(rows)
    with em.block(f"while {i} < {n}:"):
        outs = em.inline(bwd_vjp, row + extra + [f"{b}[{i}]" for b in carry_st] + ct)
        for b, e in zip(rows_ct_st, outs[:nr], strict=True):
            em.line(f"{b}[{i}] = {e}")
        _accumulate(em, extra_ct, avals[n_vars:n_vars + n_extra], outs[nr:nr + n_extra])
        _assign(em, ct, outs[nr + n_extra:], simultaneous=True)
        em.line(f"{i} += 1")
    state_ct = [em.fresh("sa") for _ in range(n_vars)]
    _assign(em, state_ct, [_zero(a) for a in avals[:n_vars]])
    with em.block(f"while {i} > 0:"):
        em.line(f"{i} -= 1")
        outs = em.inline(fwd_vjp, [f"{b}[{i}]" for b in states_st] + extra + state_ct
                         + [f"{b}[{i}]" for b in rows_ct_st])
        _accumulate(em, extra_ct, avals[n_vars:n_vars + n_extra], outs[n_vars:])
        floats = [k for k, a in enumerate(avals[:n_vars]) if a.dtype.is_floating]
        _assign(em, [state_ct[k] for k in floats], [outs[k] for k in floats], simultaneous=True)
    _assign(em, [em.var(v) for v in node.outputs], state_ct + extra_ct + ct)
    for v in node.outputs:
        em.bind(v)
