"""WhileGrad: the gradient of a While loop in linear time, as one op.

``WhileGrad(count, *loop_vars, *operands, *carry)`` runs the loop forward ``count`` times (the
forward While's trip count) from ``loop_vars`` (``fwd_graph``: (loop vars, operands) -> (next loop
vars, then the per-iteration values the body's gradient reads)), keeping those values in one
stack per output (as TensorFlow's while_v2 accumulators), then runs ``bwd_graph``:
(one iteration's stacked values, operands, carry) -> carry, once per iteration in reverse.
Its outputs are the final carry: the loop variables' cotangents and the operands' summed
gradients. Its stacks never leave the op. Under a tape across a function boundary the
forward and backward are two programs: there ``WhileStacks`` (the While returning its
stacks) and ``WhileGradStacks`` (WhileGrad reading them) pass the stacks between them as
residuals (``passes/keep_stacks.py``), the one place an IR value has a leading size only the
run knows (the trip count, ``stack_output``).

``memory_budget`` (bytes) chooses, at run time when the trip count is known, between the
stacks (``count`` rows fit) and checkpointing (``runtime/kernels/loops.py``): the same
gradients either way.
"""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import AVal, defop
from .control import _avals, _check_inputs, _fits, _fmt, _inputs, _loop_avals, _while, agree


def _compatible(a, b):
    """Same dtype and rank, sizes equal where both are known: a graph made concrete for its
    input shapes (codegen/concretize.py) keeps the unknown sizes its nested ops give, where the
    values they meet have become known."""
    return _fits(a, b) or _fits(b, a)


def _while_grad(avals, fwd_graph, bwd_graph, n_vars, n_extra, memory_budget):
    if not avals or avals[0] != AVal((), D.int32):
        raise InferError("WhileGrad's first operand must be the int32 trip count")
    avals = avals[1:]
    if n_vars + n_extra > len(avals):
        raise InferError(f"WhileGrad has {n_vars} loop variables and {n_extra} operands but "
                         f"{len(avals)} inputs after the trip count")
    loop = tuple(avals[:n_vars + n_extra])
    carry = tuple(avals[n_vars + n_extra:])
    _check_inputs(fwd_graph, loop, "the forward body of WhileGrad")
    fwd_out = _avals(fwd_graph)
    if _loop_avals(fwd_out[:n_vars], tuple(avals[:n_vars]), _inputs(fwd_graph)[:n_vars]) is None:
        raise InferError(f"the forward body of WhileGrad returns {_fmt(fwd_out[:n_vars])} for "
                         f"loop variables {_fmt(avals[:n_vars])}")
    _check_inputs(bwd_graph, fwd_out[n_vars:] + tuple(avals[n_vars:n_vars + n_extra]) + carry,
                  "the backward body of WhileGrad")
    out = _loop_avals(_avals(bwd_graph), carry,
                      _inputs(bwd_graph)[len(_inputs(bwd_graph)) - len(carry):])
    if out is None:
        raise InferError(f"the backward body of WhileGrad returns {_fmt(_avals(bwd_graph))} "
                         f"for a carry of {_fmt(carry)}")
    return out


def _output_avals(graph):
    """A graph's output avals as a list (``graph_inputs`` rules concatenate them with lists)."""
    return [v.aval for v in graph.outputs]


def _while_grad_graph_inputs(ins, fwd_graph, bwd_graph, n_vars, n_extra, memory_budget):
    loop = ins[1:1 + n_vars + n_extra]
    yield "fwd_graph", loop
    yield "bwd_graph", _output_avals(fwd_graph)[n_vars:] + loop[n_vars:] + ins[1 + n_vars + n_extra:]


defop("WhileGrad", _while_grad, arity=None, multi_output=True,
      attrs={"fwd_graph": "graph", "bwd_graph": "graph",
             "n_vars": "int", "n_extra": "int", "memory_budget": "int"},
      graph_inputs=_while_grad_graph_inputs, static_graphs=True, stores_rows=True)


def _while_grad_grad(avals, fwd_graph, bwd_graph, fwd_vjp, bwd_vjp, n_vars, n_extra):
    """``WhileGradGrad(count, *loop_vars, *operands, *carry, *carry_ct)``: WhileGrad's VJP
    (its inputs' cotangents, zeros for integers) in linear time; see runtime/kernels/loops.py."""
    n_carry = (len(avals) - 1 - n_vars - n_extra) // 2
    if not avals or avals[0] != AVal((), D.int32) or n_carry < 0 or \
            1 + n_vars + n_extra + 2 * n_carry != len(avals):
        raise InferError(f"WhileGradGrad takes the trip count, {n_vars} loop variables, "
                         f"{n_extra} operands, a carry and its cotangent; got {len(avals)} inputs")
    body = tuple(avals[1:1 + n_vars + n_extra])
    carry = tuple(avals[1 + n_vars + n_extra:1 + n_vars + n_extra + n_carry])
    if not all(_compatible(c, t) for c, t in zip(avals[1 + n_vars + n_extra + n_carry:], carry,
                                                  strict=True)):
        raise InferError("WhileGradGrad: the carry's cotangent must have the carry's types")
    _check_inputs(fwd_graph, body, "the forward body of WhileGradGrad")
    rows = _avals(fwd_graph)[n_vars:]
    _check_inputs(bwd_graph, rows + body[n_vars:] + carry, "the backward body of WhileGradGrad")
    _check_inputs(bwd_vjp, rows + body[n_vars:] + carry + carry, "the backward body's VJP")
    _check_inputs(fwd_vjp, body + body[:n_vars] + rows, "the forward body's VJP")
    return body + carry


def _while_grad_grad_graph_inputs(ins, fwd_graph, bwd_graph, fwd_vjp, bwd_vjp, n_vars, n_extra):
    body = ins[1:1 + n_vars + n_extra]
    n_carry = (len(ins) - 1 - n_vars - n_extra) // 2
    carry = ins[1 + n_vars + n_extra:1 + n_vars + n_extra + n_carry]
    yield "fwd_graph", body
    rows = _output_avals(fwd_graph)[n_vars:]
    yield "bwd_graph", rows + body[n_vars:] + carry
    yield "bwd_vjp", rows + body[n_vars:] + carry + carry
    yield "fwd_vjp", body + body[:n_vars] + rows
    # what the template writes where, and its infer rule does not check: equal sizes
    agree(_output_avals(fwd_graph)[:n_vars], body[:n_vars])
    agree(_output_avals(bwd_graph), carry)
    agree(_output_avals(bwd_vjp), rows + body[n_vars:] + carry)
    agree(_output_avals(fwd_vjp), body)


defop("WhileGradGrad", _while_grad_grad, arity=None, multi_output=True,
      attrs={"fwd_graph": "graph", "bwd_graph": "graph", "fwd_vjp": "graph", "bwd_vjp": "graph",
             "n_vars": "int", "n_extra": "int"},
      graph_inputs=_while_grad_grad_graph_inputs, static_graphs=True, stores_rows=True)


def _while_with_grad(avals, cond_graph, fwd_graph, bwd_graph, seed_graph, n_vars, n_extra,
                     memory_budget):
    """``WhileWithGrad(*loop_vars, *operands, *seed_operands)``: a While and the WhileGrad of
    it in one loop (``passes/share_loops.py`` makes it; it is never differentiated). The
    forward runs ``cond_graph`` and ``fwd_graph`` once per iteration, keeping the rows;
    ``seed_graph`` (final loop vars, trip count, seed operands) -> the starting carry (the
    cotangents that start the backward: they depend on the loop's result); then the backward
    as WhileGrad's. Outputs: the While's (final loop vars, trip count), then WhileGrad's."""
    if not 0 <= n_vars + n_extra <= len(avals):
        raise InferError(f"WhileWithGrad has {n_vars} loop variables and {n_extra} operands "
                         f"but {len(avals)} inputs")
    loop = tuple(avals[:n_vars + n_extra])
    seeds = tuple(avals[n_vars + n_extra:])
    _check_inputs(cond_graph, loop, "the condition of WhileWithGrad")
    _check_inputs(fwd_graph, loop, "the forward body of WhileWithGrad")
    fwd_out = _avals(fwd_graph)
    result = _loop_avals(fwd_out[:n_vars], loop[:n_vars], _inputs(fwd_graph)[:n_vars])
    if result is None:
        raise InferError(f"the forward body of WhileWithGrad returns {_fmt(fwd_out[:n_vars])} "
                         f"for loop variables {_fmt(loop[:n_vars])}")
    result = result + (AVal((), D.int32),)
    _check_inputs(seed_graph, result + seeds, "the seed of WhileWithGrad")
    carry = _avals(seed_graph)
    _check_inputs(bwd_graph, fwd_out[n_vars:] + loop[n_vars:] + carry,
                  "the backward body of WhileWithGrad")
    out = _loop_avals(_avals(bwd_graph), carry,
                      _inputs(bwd_graph)[len(_inputs(bwd_graph)) - len(carry):])
    if out is None:
        raise InferError(f"the backward body of WhileWithGrad returns "
                         f"{_fmt(_avals(bwd_graph))} for a carry of {_fmt(carry)}")
    return result + out


def _while_with_grad_graph_inputs(ins, cond_graph, fwd_graph, bwd_graph, seed_graph, n_vars,
                                  n_extra, memory_budget):
    loop = ins[:n_vars + n_extra]
    yield "cond_graph", loop
    yield "fwd_graph", loop
    yield "seed_graph", loop[:n_vars] + [seed_graph.inputs[n_vars].aval] + ins[n_vars + n_extra:]
    yield "bwd_graph", _output_avals(fwd_graph)[n_vars:] + loop[n_vars:] + _output_avals(seed_graph)


defop("WhileWithGrad", _while_with_grad, arity=None, multi_output=True,
      attrs={"cond_graph": "graph", "fwd_graph": "graph", "bwd_graph": "graph",
             "seed_graph": "graph", "n_vars": "int", "n_extra": "int", "memory_budget": "int"},
      graph_inputs=_while_with_grad_graph_inputs, static_graphs=True, stores_rows=True)


def row_states(graph, n_vars):
    """Per row of a loop gradient's forward body (its outputs after the loop variables):
    ``(j, 0)`` if it is loop variable ``j``'s value before the iteration, ``(j, 1)`` after
    it, else None."""
    before = {v.id: j for j, v in enumerate(graph.inputs[:n_vars])}
    after = {v.id: j for j, v in enumerate(graph.outputs[:n_vars])}
    return [(before[v.id], 0) if v.id in before else (after[v.id], 1) if v.id in after else None
            for v in graph.outputs[n_vars:]]


def stacked_rows(graph, n_vars):
    """Indices of the rows an iteration stacks: a row that is a loop variable's value before
    or after the iteration (``h`` and the new ``h``, ``row_states``) counts once per variable:
    that variable's history is kept, n + 1 states, not two stacks of n rows."""
    out, kept = [], set()
    for r, state in enumerate(row_states(graph, n_vars)):
        j = None if state is None else state[0]
        if j is None or j not in kept:
            out.append(r)
            kept.add(j)
    return out


def history_spans(graph, n_vars):
    """Per loop variable whose values are rows: (lo, hi), the offsets its rows use (0: before
    an iteration, 1: after it). Its stack holds states ``lo .. n - 1 + hi``, so iteration
    ``i``'s row at offset ``o`` is its row ``i + o - lo``: n rows for one offset, n + 1 for
    both."""
    spans = {}
    for state in row_states(graph, n_vars):
        if state is not None:
            lo, hi = spans.get(state[0], (state[1], state[1]))
            spans[state[0]] = (min(lo, state[1]), max(hi, state[1]))
    return spans


def stack_avals(fwd_graph, n_vars):
    """The avals of a loop's stacks (``WhileStacks``' outputs after the While's, the last
    inputs of ``WhileGradStacks``), one per ``stacked_rows``: a leading dimension of run-time
    size (n rows; a loop variable's states, ``history_spans``: n or n + 1) over the row's shape."""
    rows = fwd_graph.outputs[n_vars:]
    return tuple(AVal((None,) + tuple(rows[r].aval.shape), rows[r].aval.dtype)
                 for r in stacked_rows(fwd_graph, n_vars))


def _while_stacks(avals, cond_graph, body_graph, fwd_graph, n_vars, memory_budget):
    """``WhileStacks(*loop_vars, *operands)``: the While (``cond_graph``, ``body_graph``) of a
    function called under a tape, whose forward program also returns the loop's stacks as
    residuals, so the backward program's ``WhileGradStacks`` need not run the loop again.
    It runs ``cond_graph`` and ``fwd_graph`` (WhileGrad's forward body: next loop variables,
    then the rows) once per iteration. Outputs: the While's (final loop vars, trip count),
    then ``stack_avals``. Past ``memory_budget`` bytes of rows the stacks are returned with no
    rows (and the backward checkpoints, as WhileGrad does). ``body_graph`` is kept for the
    op's gradient (the While's; the stacks are a cache of values the loop's inputs decide,
    and their only reader, WhileGradStacks, differentiates through those inputs instead)."""
    result = _while(avals, cond_graph, body_graph, n_vars)
    _check_inputs(fwd_graph, tuple(avals), "the forward body of WhileStacks")
    if _avals(fwd_graph)[:n_vars] != tuple(avals[:n_vars]):
        raise InferError(f"the forward body of WhileStacks returns "
                         f"{_fmt(_avals(fwd_graph)[:n_vars])} for loop variables "
                         f"{_fmt(avals[:n_vars])}")
    return result + stack_avals(fwd_graph, n_vars)


def stack_output(v):
    """Whether value ``v`` is a stack WhileStacks returns: its leading size is the trip count,
    a size only the run knows, yet the program is static (compiled code allocates the stack
    and returns it; nothing in the same program reads it)."""
    node = v.node
    return node is not None and node.op == "WhileStacks" and \
        any(o is v for o in node.outputs[node.attrs["n_vars"] + 1:])


def _while_stacks_graph_inputs(ins, cond_graph, body_graph, fwd_graph, n_vars, memory_budget):
    yield "cond_graph", ins
    yield "body_graph", ins
    yield "fwd_graph", ins


defop("WhileStacks", _while_stacks, arity=None, multi_output=True,
      attrs={"cond_graph": "graph", "body_graph": "graph", "fwd_graph": "graph",
             "n_vars": "int", "memory_budget": "int"},
      graph_inputs=_while_stacks_graph_inputs,
      graph_operands=(("cond_graph", 0), ("body_graph", 0), ("fwd_graph", 0)), stores_rows=True)


def _while_grad_stacks(avals, fwd_graph, bwd_graph, n_vars, n_extra, memory_budget):
    """``WhileGradStacks(count, *loop_vars, *operands, *carry, *stacks)``: WhileGrad reading
    the rows from ``stacks`` (``WhileStacks``' last outputs) instead of running the loop
    again; with stacks of no rows (the forward was past its budget) it is WhileGrad."""
    k = len(stack_avals(fwd_graph, n_vars))
    if k > len(avals):
        raise InferError(f"WhileGradStacks takes {k} stacks but has {len(avals)} inputs")
    got, want = tuple(avals[len(avals) - k:]), stack_avals(fwd_graph, n_vars)
    # a row size known only at run time (None) on either side takes any size: the backward
    # replayed with the forward's concrete stacks (a jacobian through the call), or a graph
    # made concrete for its inputs meeting its nested graphs' unknown sizes (codegen)
    if not all(_compatible(AVal(a.shape[1:], a.dtype), AVal(b.shape[1:], b.dtype))
               for a, b in zip(got, want, strict=True)) \
            or any(len(a.shape) != len(b.shape) for a, b in zip(got, want, strict=True)):
        raise InferError(f"WhileGradStacks' stacks are {_fmt(got)} for rows {_fmt(want)}")
    return _while_grad(avals[:len(avals) - k], fwd_graph, bwd_graph, n_vars, n_extra,
                       memory_budget)


def _while_grad_stacks_graph_inputs(ins, fwd_graph, bwd_graph, n_vars, n_extra, memory_budget):
    k = len(stacked_rows(fwd_graph, n_vars))      # the stacks come last; the graphs skip them
    yield from _while_grad_graph_inputs(ins[:len(ins) - k], fwd_graph, bwd_graph, n_vars, n_extra,
                                        memory_budget)


defop("WhileGradStacks", _while_grad_stacks, arity=None, multi_output=True,
      attrs={"fwd_graph": "graph", "bwd_graph": "graph",
             "n_vars": "int", "n_extra": "int", "memory_budget": "int"},
      graph_inputs=_while_grad_stacks_graph_inputs, stores_rows=True)
