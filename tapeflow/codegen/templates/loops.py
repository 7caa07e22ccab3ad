"""WhileGrad (runtime/kernels/loops.py) in one jitted function: a ``while`` loop that writes
each iteration's values into a stack buffer per value (allocated for 16 rows, doubled when
full: amortized O(1) per push), then a reverse loop reading row ``k`` of each buffer."""
from ..emitter import np_type, shape_lit
from .control import _assign
from .registry import stmt_op

FIRST_ROWS = 16


@stmt_op("WhileGrad")
def _while_grad(em, node, cond_graph, fwd_graph, bwd_graph, n_vars, n_extra):
    ins = [em.ref(v) for v in node.inputs]
    state = [em.fresh("s") for _ in range(n_vars)]
    extra = ins[n_vars:n_vars + n_extra]
    carry = [em.var(v) for v in node.outputs]
    _assign(em, state, ins[:n_vars])
    _assign(em, carry, ins[n_vars + n_extra:])
    rows = fwd_graph.outputs[n_vars:]
    stacks = [em.fresh("stack") for _ in rows]
    for s, r in zip(stacks, rows, strict=True):
        em.line(f"{s} = np.empty({shape_lit((FIRST_ROWS, *r.aval.shape))}, "
                f"dtype={np_type(r.aval.dtype)})")
    count = em.fresh("n")
    em.line(f"{count} = 0")
    with em.block("while True:"):
        (pred,) = em.inline(cond_graph, state + extra)
        with em.block(f"if not {pred}:"):
            em.line("break")
        outs = em.inline(fwd_graph, state + extra)
        for s, r, e in zip(stacks, rows, outs[n_vars:], strict=True):
            with em.block(f"if {count} == {s}.shape[0]:"):
                grown = em.fresh("grown")
                dims = ", ".join([f"2 * {count}"] + [str(int(d)) for d in r.aval.shape])
                em.line(f"{grown} = np.empty(({dims},), dtype={np_type(r.aval.dtype)})")
                em.line(f"{grown}[:{count}] = {s}")
                em.line(f"{s} = {grown}")
            em.line(f"{s}[{count}] = {e}")
        _assign(em, state, outs[:n_vars], simultaneous=True)
        em.line(f"{count} += 1")
    with em.block(f"while {count} > 0:"):
        em.line(f"{count} -= 1")
        _assign(em, carry, em.inline(bwd_graph, [f"{s}[{count}]" for s in stacks] + extra + carry),
                simultaneous=True)
    for v in node.outputs:
        em.bind(v)
