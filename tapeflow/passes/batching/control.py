"""Batching rules of If, While and WhileGrad.

If: on a shared predicate, an If of the vectorized branches.

While and WhileGrad: one batched loop. A loop variable is batched if its initial value is or
if the body makes it so from batched values (a fixed point over the body: at most one
round per loop variable); the others stay shared, so a counter stays a scalar and the
condition on it stays one predicate. While needs that predicate shared (a batched one,
rows running different trip counts, has no rule: the reported loop over the batch);
WhileGrad runs the forward While's trip count, which must be shared. WhileGrad's carry
(the cotangents: the usual batch of a jacobian) gets the same fixed point over the
backward body.

WhileGradGrad (a Hessian through a loop: the jacobian of a loop's gradient): one batched
op, its four graphs vectorized together. Its outputs have its inputs' types (state, operand
and carry cotangents; its kernel and template allocate the accumulators and stacks from
them), so a slot is batched in all the graphs that read or write it: a joint fixed point over
the states, rows, carries and operands. The seeds batch the carry's cotangent, which batches
the operands' cotangents and so the operands: the forward passes run batched too (B times
their work, still one loop of n iterations).
"""
import types

from ...ir.defs.loops import stacked_rows
from .registry import batching


@batching("If")
def if_(b, node, inputs, batched):
    if batched[0]:
        return None
    flags = list(batched[1:])
    branches = [b.vectorize(node.attrs[k], flags) for k in ("then_graph", "else_graph")]
    outs = b.emit("If", inputs, {"then_graph": branches[0], "else_graph": branches[1]})
    return [(o, True) for o in outs]


def _fixed_point(b, graph, flags, fixed, n_loop, n_more=0):
    """Loop-variable flags (the first ``n_loop`` of ``flags``, then the ``fixed`` flags of the
    other inputs) such that the vectorized ``graph`` returns the loop variables batched exactly
    where they come in batched; its other ``n_more`` outputs as they come. Returns (flags,
    the Vectorized graph)."""
    loop = list(flags)
    while True:
        out = b.vectorize(graph, loop + fixed, broadcast=loop + [False] * n_more)
        grown = [a or bool(o) for a, o in zip(loop, out.out_flags[:n_loop], strict=True)]
        if grown == loop:
            return loop, out
        loop = grown


def _widen(b, values, had, want, nodes_inputs):
    """``values`` broadcast over the batch where ``want`` says batched and ``had`` did not."""
    return [b.broadcast(v, False, old.aval.shape) if w and not h else v
            for v, h, w, old in zip(values, had, want, nodes_inputs, strict=True)]


@batching("While")
def while_(b, node, inputs, batched):
    n = node.attrs["n_vars"]
    flags = [bool(f) for f in batched]
    extra = flags[n:]
    state, body = _fixed_point(b, node.attrs["body_graph"], flags[:n], extra, n)
    cond = b.vectorize(node.attrs["cond_graph"], state + extra, broadcast=[False])
    if cond.out_flags[0]:
        return None
    ins = _widen(b, inputs[:n], flags[:n], state, node.inputs[:n]) + list(inputs[n:])
    outs = b.emit("While", ins, {"cond_graph": cond.graph, "body_graph": body.graph, "n_vars": n})
    return [(o, f) for o, f in zip(outs, state + [False], strict=True)]


@batching("WhileGrad")
def while_grad(b, node, inputs, batched, stacks=()):
    if batched[0]:                                   # rows running different trip counts
        return None
    nv, ne = node.attrs["n_vars"], node.attrs["n_extra"]
    fwd, bwd = node.attrs["fwd_graph"], node.attrs["bwd_graph"]
    flags = [bool(f) for f in batched[1:]]
    extra = flags[nv:nv + ne]
    state, vfwd = _fixed_point(b, fwd, flags[:nv], extra, nv, len(fwd.outputs) - nv)
    rows = [bool(f) for f in vfwd.out_flags[nv:]]
    # the backward body takes (rows, operands, carry): the carry is its loop
    carry, vbwd = _fixed_point_last(b, bwd, rows + extra, flags[nv + ne:])
    ins = (_widen(b, inputs[1:1 + nv], flags[:nv], state, node.inputs[1:1 + nv])
           + list(inputs[1 + nv:1 + nv + ne])
           + _widen(b, inputs[1 + nv + ne:], flags[nv + ne:], carry, node.inputs[1 + nv + ne:]))
    op = "WhileGradStacks" if stacks and not any(rows) else "WhileGrad"
    outs = b.emit(op, [inputs[0]] + ins + (list(stacks) if op == "WhileGradStacks" else []),
                  {"fwd_graph": vfwd.graph, "bwd_graph": vbwd.graph, "n_vars": nv, "n_extra": ne,
                   "memory_budget": node.attrs["memory_budget"]})
    return [(o, f) for o, f in zip(outs, carry, strict=True)]


@batching("WhileGradStacks")
def while_grad_stacks(b, node, inputs, batched):
    """A WhileGrad reading the same stacks where the forward body's rows stay unbatched (the
    jacobian of a tape's record: only the cotangents carry the batch), so the batched
    backward loop runs once over the rows the forward program kept and no forward loop runs
    again. Rows the batch reaches (batched loop variables or operands) must come from the
    batched forward body: then it is a WhileGrad, which runs that body."""
    k = len(node.inputs) - len(stacked_rows(node.attrs["fwd_graph"], node.attrs["n_vars"]))
    as_while_grad = types.SimpleNamespace(attrs=node.attrs, inputs=node.inputs[:k])
    stacks = () if any(batched[k:]) else inputs[k:]
    return while_grad(b, as_while_grad, inputs[:k], batched[:k], stacks)


def _fixed_point_last(b, graph, fixed, flags):
    """``_fixed_point`` for a graph whose loop variables are its last inputs (all outputs)."""
    loop = list(flags)
    while True:
        out = b.vectorize(graph, fixed + loop, broadcast=loop)
        grown = [a or bool(o) for a, o in zip(loop, out.out_flags, strict=True)]
        if grown == loop:
            return loop, out
        loop = grown


@batching("WhileGradGrad")
def while_grad_grad(b, node, inputs, batched):
    if batched[0]:                                   # rows running different trip counts
        return None
    a = node.attrs
    nv, ne = a["n_vars"], a["n_extra"]
    fwd, bwd, fwd_vjp, bwd_vjp = a["fwd_graph"], a["bwd_graph"], a["fwd_vjp"], a["bwd_vjp"]
    nc = (len(inputs) - 1 - nv - ne) // 2
    nr = len(fwd.outputs) - nv
    flags = [bool(f) for f in batched[1:]]
    state, extra = flags[:nv], flags[nv:nv + ne]
    carry = [x or y for x, y in zip(flags[nv + ne:nv + ne + nc], flags[nv + ne + nc:],
                                    strict=True)]       # a carry and its cotangent: one type
    rows = [False] * nr
    while True:      # each slot batched where any graph makes it so: at most one round per slot
        g = [b.vectorize(fwd, state + extra, broadcast=state + rows),
             b.vectorize(bwd, rows + extra + carry, broadcast=carry),
             b.vectorize(bwd_vjp, rows + extra + carry + carry, broadcast=rows + extra + carry),
             b.vectorize(fwd_vjp, state + extra + state + rows, broadcast=state + extra)]
        f = [[bool(x) for x in v.out_flags] for v in g]
        grown = (_any(state, f[0][:nv], f[3][:nv]), _any(rows, f[0][nv:], f[2][:nr]),
                 _any(carry, f[1], f[2][nr + ne:]), _any(extra, f[2][nr:nr + ne], f[3][nv:]))
        if grown == (state, rows, carry, extra):
            break
        state, rows, carry, extra = grown
    ins = [inputs[0]] + _widen(b, inputs[1:], flags, state + extra + carry + carry, node.inputs[1:])
    outs = b.emit("WhileGradGrad", ins,
                  {"fwd_graph": g[0].graph, "bwd_graph": g[1].graph, "fwd_vjp": g[3].graph,
                   "bwd_vjp": g[2].graph, "n_vars": nv, "n_extra": ne})
    return [(o, f) for o, f in zip(outs, state + extra + carry, strict=True)]


def _any(*lists):
    return [any(xs) for xs in zip(*lists, strict=True)]


@batching("CheckTripCount")
def check_trip_count(b, node, inputs, batched):
    """The check on a shared trip count (a batched While's is shared), the value as it is."""
    if batched[1]:
        return None
    return [(b.emit1("CheckTripCount", inputs, node.attrs), batched[0])]
