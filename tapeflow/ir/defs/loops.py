"""WhileGrad: the gradient of a While loop in linear time, as one op.

``WhileGrad(count, *loop_vars, *operands, *carry)`` runs the loop forward ``count`` times (the
forward While's trip count) from ``loop_vars`` (``fwd_graph``: (loop vars, operands) -> (next loop
vars, then the per-iteration values the body's gradient reads)), keeping those values in one
stack per output (as TensorFlow's while_v2 accumulators), then runs ``bwd_graph``:
(one iteration's stacked values, operands, carry) -> carry, once per iteration in reverse.
Its outputs are the final carry: the loop variables' cotangents and the operands' summed
gradients. The stacks never leave the op, so every tensor of the IR keeps a static type
while the trip count is data: no dynamically-shaped stack value is needed.

``memory_budget`` (bytes) chooses, at run time when the trip count is known, between the
stacks (``count`` rows fit) and checkpointing (``runtime/kernels/loops.py``): the same
gradients either way.
"""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import AVal, defop
from .control import _avals, _check_inputs, _fmt, _inputs, _loop_avals


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


defop("WhileGrad", _while_grad, arity=None, multi_output=True,
      attrs={"fwd_graph": "graph", "bwd_graph": "graph",
             "n_vars": "int", "n_extra": "int", "memory_budget": "int"})


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
    if tuple(avals[1 + n_vars + n_extra + n_carry:]) != carry:
        raise InferError("WhileGradGrad: the carry's cotangent must have the carry's types")
    _check_inputs(fwd_graph, body, "the forward body of WhileGradGrad")
    rows = _avals(fwd_graph)[n_vars:]
    _check_inputs(bwd_graph, rows + body[n_vars:] + carry, "the backward body of WhileGradGrad")
    _check_inputs(bwd_vjp, rows + body[n_vars:] + carry + carry, "the backward body's VJP")
    _check_inputs(fwd_vjp, body + body[:n_vars] + rows, "the forward body's VJP")
    return body + carry


defop("WhileGradGrad", _while_grad_grad, arity=None, multi_output=True,
      attrs={"fwd_graph": "graph", "bwd_graph": "graph", "fwd_vjp": "graph", "bwd_vjp": "graph",
             "n_vars": "int", "n_extra": "int"})


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


defop("WhileWithGrad", _while_with_grad, arity=None, multi_output=True,
      attrs={"cond_graph": "graph", "fwd_graph": "graph", "bwd_graph": "graph",
             "seed_graph": "graph", "n_vars": "int", "n_extra": "int", "memory_budget": "int"})
