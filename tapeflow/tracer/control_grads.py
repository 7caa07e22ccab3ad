"""Gradients of If and While, built from the reverse graphs of their branches and body.

The tracer registers them (importing this module fills ``registry.GRADS``), because they are
built by tracing: the eager autodiff layer below never imports the tracer.

If: another If on the same predicate whose branches are the branches' VJPs. As in
TensorFlow's cond_v2, an operand with a gradient in one branch gets zeros from the other
(so a variable read only in the untaken branch gets 0.0); in neither, None.

While: a loop running backwards over the forward iteration count. Iteration ``k`` recomputes
the loop state after ``k`` steps from the initial values (an inner loop) and applies the
body's VJP: no per-iteration state is stored (memory O(1) in the trip count, time O(n^2) body
evaluations), and since it is built of While and If ops it is differentiable again.
"""
from ..autodiff.backprop import zeros
from ..ops import math
from ..passes.dce import without_effects
from ..runtime.dispatch import apply
from ..runtime.interpret import replay
from ..runtime.registry import gradient
from .autodiff import vjp_graph
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
        grads = [got[i] if i in got else zeros(joint.graph.inputs[i].aval) for i in wanted]
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
    count = op.outputs[n]
    wanted, (joint,), (vjp,) = _branch_vjps([body])
    floats = joint.ct_outputs                        # loop variables that carry a gradient
    into_extra = [i for i in wanted if i >= n]
    if not floats or not wanted:
        return [None] * len(op.inputs)

    def state_after(k):
        """The loop variables after ``k`` iterations, recomputed from the initial values."""
        def step(j, *xs):
            return [math.add(j, 1), *replay(body, list(xs) + extra)]
        return while_loop(lambda j, *xs: math.less(j, k), step, [zeros(count.aval), *init])[1:]

    def back(k, *acc):
        g, gx = acc[:len(floats)], acc[len(floats):]
        k = math.subtract(k, 1)
        xs = state_after(k)
        got = dict(zip(wanted, replay(vjp, list(xs) + extra + list(g)), strict=True))
        g_new = [got[i] if i in got else zeros(init[i].aval) for i in floats]
        gx_new = [math.add(a, got[i]) for a, i in zip(gx, into_extra, strict=True)]
        return [k, *g_new, *gx_new]

    start = [cts[i] if cts[i] is not None else zeros(init[i].aval) for i in floats]
    out = while_loop(lambda k, *acc: math.greater(k, 0), back,
                     [count, *start, *[zeros(extra[i - n].aval) for i in into_extra]])
    result = [None] * len(op.inputs)
    # a loop variable's gradient after zero iterations is its own cotangent
    for i, g in zip(floats, out[1:1 + len(floats)], strict=True):
        result[i] = g
    for i, g in zip(into_extra, out[1 + len(floats):], strict=True):
        result[i] = g
    return result
