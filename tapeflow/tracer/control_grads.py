"""Gradients of If and While, built from the reverse graphs of their branches and body.

The tracer registers them (importing this module fills ``registry.GRADS``), because they are
built by tracing: the eager autodiff layer below never imports the tracer.

If: another If on the same predicate whose branches are the branches' VJPs. As in
TensorFlow's cond_v2, an operand with a gradient in one branch gets zeros from the other
(so a variable read only in the untaken branch gets 0.0); in neither, None.

While: one WhileGrad op (ir/defs/loops.py). The body's joint graph is split as a function's
is (``graph_vjp.split``): its forward part computes the next loop variables and the residuals
the body's gradient reads; WhileGrad runs the loop again from the initial values for the
forward While's trip count, keeping each iteration's residuals (residuals that are operands
of the loop are passed once, not stacked), then runs the backward part once per iteration in
reverse: O(n) body evaluations (n for the forward While, n again in WhileGrad's forward, n
body gradients) and memory O(n) residual rows, or, past the memory budget
(``memory_budget``: ``loop_memory`` below, else ``TAPEFLOW_LOOP_MEMORY_MB``), checkpoints:
n more body evaluations, O(sqrt n) memory. (WhileGrad runs its own forward because a
gradient rule sees the forward op after the fact. Where the While and its WhileGrad end up
in one program, ``passes/share_loops.py`` fuses them into one WhileWithGrad; where they are
split into a call's forward and backward programs, ``passes/keep_stacks.py`` makes them a
WhileStacks returning the stacks and a WhileGradStacks reading them: n forward bodies, n
body gradients either way.)

WhileGrad's own gradient (second order) is one WhileGradGrad op: O(n) body evaluations
(runtime/kernels/loops.py). Its gradient (third order) differentiates an equivalent graph
of While ops (``_expansion``): a reverse loop over the trip count that recomputes the state
of iteration ``k`` from the initial values: O(n^2), no stack needed, any order.
"""
import contextlib
import threading
from collections.abc import Iterator

from .. import env
from ..autodiff.backprop import zeros
from ..ops import math
from ..ops.creation import zeros_like
from ..ir.defs.loops import stacked_rows
from ..passes.dce import without_effects
from ..runtime.dispatch import apply
from ..runtime.interpret import replay
from ..runtime.registry import gradient, not_differentiable
from ..runtime.tensor import convert_to_tensor
from ..ir.graph import Graph
from .graph_vjp import split, vjp_graph
from .context import TraceContext
from .control import while_loop


def _branch_vjps(graphs):
    """(wanted operand indices, per graph a Graph (operands..., cts...) -> grads of wanted)."""
    joints = [vjp_graph(g) for g in graphs]
    wanted = sorted(set().union(*[j.grad_inputs for j in joints]))
    return wanted, joints, [_padded(j, wanted) for j in joints]


def _padded(joint, wanted):
    """The joint's gradients for ``wanted`` inputs, zeros where it has none."""
    ctx = TraceContext()
    with ctx:
        ins = [ctx.input(v.aval) for v in joint.graph.inputs]
        outs = replay(joint.graph, ins)
        got = dict(zip(joint.grad_inputs, outs[joint.n_outputs:], strict=True))
        grads = [got[i] if i in got else zeros_like(ins[i]) for i in wanted]  # None dims too
        ctx.graph.outputs = [ctx.value_of(g) for g in grads]
    return without_effects(ctx.graph)


@gradient("If", inputs="all")
def _if(op, *cts):
    then_graph, else_graph = op.attrs["then_graph"], op.attrs["else_graph"]
    wanted, joints, (gt, ge) = _branch_vjps([then_graph, else_graph])
    # both joints take (operands..., cts of the float outputs...): the same float outputs
    ct_in = [cts[i] for i in joints[0].ct_outputs]
    grads = apply("If", [op.inputs[0], *op.inputs[1:], *ct_in], {"then_graph": gt, "else_graph": ge}) \
        if wanted else ()
    result = [None] * len(op.inputs)
    for i, g in zip(wanted, grads, strict=True):
        result[1 + i] = g
    return result


@gradient("While", inputs="all", outputs="all")
def _while(op, *cts):
    n, body = op.attrs["n_vars"], op.attrs["body_graph"]
    init, extra = list(op.inputs[:n]), list(op.inputs[n:])
    joint = vjp_graph(body)
    floats, wanted = joint.ct_outputs, joint.grad_inputs   # loop vars carrying a gradient
    if not floats or not wanted:
        return [None] * len(op.inputs)
    # operands whose gradient the tape wants (OpView.wants): the others' accumulators, e.g.
    # a dense gradient of a gathered-from input per iteration, are never built
    wants = getattr(op, "wants", None) or (True,) * len(op.inputs)
    into_extra = [i for i in wanted if i >= n and wants[i]]
    fwd, bwd, _ = split(joint)
    residuals = fwd.outputs[n:]
    position = {v.id: j for j, v in enumerate(fwd.inputs)}
    stacked = [r for r in residuals if position.get(r.id, 0) < n]   # operands are passed once
    # the forward runs again to fill the stacks: its prints already ran in the While
    fwd_graph = without_effects(Graph(fwd.inputs, fwd.nodes, fwd.outputs[:n] + stacked))

    ctx = TraceContext()
    with ctx:
        rows = {r.id: ctx.input(r.aval) for r in stacked}
        ops_in = [ctx.input(v.aval) for v in body.inputs[n:]]
        g = [ctx.input(body.outputs[i].aval) for i in floats]
        acc = [ctx.input(body.inputs[i].aval) for i in into_extra]
        res_in = [rows[r.id] if r.id in rows else ops_in[position[r.id] - n] for r in residuals]
        got = dict(zip(wanted, replay(bwd, res_in + g), strict=True))
        new = [got[i] if i in got else zeros_like(g[k]) for k, i in enumerate(floats)]
        new += [math.add(a, got[i]) for a, i in zip(acc, into_extra, strict=True)]
        ctx.graph.outputs = [ctx.value_of(x) for x in new]
    bwd_graph = without_effects(ctx.graph)

    # a loop variable's gradient after zero iterations is its own cotangent
    start = [cts[i] if cts[i] is not None else zeros_like(init[i]) for i in floats]
    start += [zeros_like(extra[i - n]) for i in into_extra]
    out = apply("WhileGrad", [op.outputs[n]] + init + extra + start,
                {"fwd_graph": fwd_graph, "bwd_graph": bwd_graph,
                 "n_vars": n, "n_extra": len(extra), "memory_budget": memory_budget()})
    result = [None] * len(op.inputs)
    for i, gr in zip(floats + into_extra, out, strict=True):
        result[i] = gr
    return result


@gradient("WhileStacks", inputs="all", outputs="all")
def _while_stacks(op, *cts):
    """The While's gradient (``passes/keep_stacks.py``). The stacks' cotangents are left out:
    their one reader, WhileGradStacks, gives them None and differentiates through the loop's
    inputs instead (below), so they are None or zeros."""
    return _while(op, *cts[:op.attrs["n_vars"] + 1])


# WhileWithGrad (a While and its WhileGrad run as one loop) is made by passes/share_loops.py
# in FINAL, on programs that are never differentiated again: it never meets a tape.
not_differentiable("WhileWithGrad")


def _expansion(attrs, inputs):
    """WhileGrad's outputs computed with While ops only (no stacks): differentiable."""
    n, n_extra = attrs["n_vars"], attrs["n_extra"]
    fwd, bwd = attrs["fwd_graph"], attrs["bwd_graph"]
    count, inputs = inputs[0], inputs[1:]
    init, extra, carry = inputs[:n], inputs[n:n + n_extra], inputs[n + n_extra:]

    def step(j, *xs):
        return [math.add(j, 1), *replay(fwd, list(xs) + extra)[:n]]

    def back(k, *c):
        k = math.subtract(k, 1)
        xs = while_loop(lambda j, *xs: math.less(j, k), step, [zeros_int(), *init])[1:]
        rows = replay(fwd, list(xs) + extra)[n:]
        return [k, *replay(bwd, rows + extra + list(c))]

    return while_loop(lambda k, *c: math.greater(k, 0), back, [count, *carry])[1:]


def memory_budget():
    """Bytes a loop's gradient may stack before it checkpoints: the innermost
    ``loop_memory`` scope's, else ``TAPEFLOW_LOOP_MEMORY_MB``'s."""
    mb = _BUDGET.stack[-1] if _BUDGET.stack else env.get("TAPEFLOW_LOOP_MEMORY_MB")
    return int(mb * 2**20)


class _Budget(threading.local):
    def __init__(self):
        self.stack = []


_BUDGET = _Budget()


@contextlib.contextmanager
def loop_memory(megabytes: float) -> Iterator[None]:
    """A scope in which loop gradients stack at most ``megabytes`` MiB per loop.

    Loops whose gradients are built in the scope (the first call of a function under a tape,
    or the trace of a function that takes a gradient in its body) keep every iteration's
    values while they fit (``tape.saved_bytes(detail=True)`` shows each loop's mode), and past
    that keep
    every k-th loop state and recompute each segment in the backward pass (the same
    gradients, O(sqrt n) memory). 0 always checkpoints. Overrides ``TAPEFLOW_LOOP_MEMORY_MB``.

    Args:
      megabytes: the budget per loop in MiB, a number >= 0.

    >>> @tf.function
    ... def grad(x):
    ...     with tf.GradientTape() as tape:
    ...         tape.watch(x)
    ...         y = tf.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, tf.sin(s)), (0, x))[1]
    ...         total = tf.reduce_sum(y)
    ...     return tape.gradient(total, x)
    >>> with tf.config.loop_memory(0):      # traced here: the loop checkpoints
    ...     g = grad(tf.constant([0.5, -0.2]))
    >>> g.numpy().round(4)
    array([0.3827, 0.8269], dtype=float32)
    """
    if isinstance(megabytes, bool) or not isinstance(megabytes, (int, float)) or not megabytes >= 0:
        raise ValueError(f"loop_memory takes a number of MiB >= 0, got {megabytes!r}")
    _BUDGET.stack.append(megabytes)
    try:
        yield
    finally:
        _BUDGET.stack.pop()


def zeros_int():
    return convert_to_tensor(0, dtype="int32")


def _vjp_all(graph):
    """Graph (inputs..., a cotangent per output...) -> a gradient per input (zeros where there
    is none, integers included): a VJP with a fixed signature, for the loop kernels."""
    joint = vjp_graph(graph)
    ctx = TraceContext()
    with ctx:
        ins = [ctx.input(v.aval) for v in graph.inputs]
        cts = [ctx.input(v.aval) for v in graph.outputs]
        outs = replay(joint.graph, ins + [cts[i] for i in joint.ct_outputs])
        got = dict(zip(joint.grad_inputs, outs[joint.n_outputs:], strict=True))
        # an input of sizes known only at run time (a TensorArray's element shapes) takes
        # its zeros' sizes from itself
        grads = [got[i] if i in got else zeros(v.aval) if None not in v.aval.shape
                 else zeros_like(ins[i]) for i, v in enumerate(graph.inputs)]
        ctx.graph.outputs = [ctx.value_of(g) for g in grads]
    return without_effects(ctx.graph)


def _float_only(op, grads):
    return [g if v.aval.dtype.is_floating else None for v, g in zip(op.inputs, grads, strict=True)]


@gradient("WhileGrad", inputs="all")
def _while_grad(op, *cts):
    """Second order in linear time: one WhileGradGrad (runtime/kernels/loops.py)."""
    fwd, bwd = op.attrs["fwd_graph"], op.attrs["bwd_graph"]
    ct_in = [c if c is not None else zeros_like(o) for c, o in zip(cts, op.outputs, strict=True)]
    outs = apply("WhileGradGrad", list(op.inputs) + ct_in,
                 {"fwd_graph": fwd, "bwd_graph": bwd, "fwd_vjp": _vjp_all(fwd),
                  "bwd_vjp": _vjp_all(bwd), "n_vars": op.attrs["n_vars"],
                  "n_extra": op.attrs["n_extra"]})
    return _float_only(op, [None, *outs])


@gradient("WhileGradGrad", inputs="all")
def _while_grad_grad(op, *cts):
    """Third order: WhileGradGrad's outputs rebuilt from While ops (``_expansion``, O(n^2)
    body evaluations) and differentiated as a graph: correct to any order."""
    n_in = 1 + len(op.outputs)        # WhileGrad's inputs: count, vars, operands, carry
    ctx = TraceContext()
    with ctx:
        ins = [ctx.input(v.aval) for v in op.inputs[:n_in]]
        ctx.graph.outputs = [ctx.value_of(o) for o in _expansion(op.attrs, ins)]
    vjp = _vjp_all(_vjp_all(ctx.graph))      # (inputs, cts, their cts) -> gradients
    count_ct = zeros(op.inputs[0].aval)
    ct_in = [count_ct] + [c if c is not None else zeros(o.aval)
                          for c, o in zip(cts, op.outputs, strict=True)]
    return _float_only(op, replay(vjp, list(op.inputs) + ct_in))




@gradient("WhileGradStacks", inputs="all")
def _while_grad_stacks(op, *cts):
    """WhileGrad's (second order, linear): the stacks are values the loop's inputs decide, so
    the gradient flows through those inputs (WhileGradGrad runs the loop from them) and the
    stacks get None."""
    fwd, n_vars = op.attrs["fwd_graph"], op.attrs["n_vars"]
    n_in = len(op.inputs) - len(stacked_rows(fwd, n_vars))
    ct_in = [c if c is not None else zeros_like(o) for c, o in zip(cts, op.outputs, strict=True)]
    outs = apply("WhileGradGrad", list(op.inputs[:n_in]) + ct_in,
                 {"fwd_graph": fwd, "bwd_graph": op.attrs["bwd_graph"], "fwd_vjp": _vjp_all(fwd),
                  "bwd_vjp": _vjp_all(op.attrs["bwd_graph"]), "n_vars": n_vars,
                  "n_extra": op.attrs["n_extra"]})
    grads = [None, *outs] + [None] * (len(op.inputs) - n_in)
    return _float_only(op, grads)
