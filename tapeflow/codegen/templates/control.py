"""If and While (runtime/kernels/control.py): their graphs are emitted inline, in the same
jitted function, under a Python ``if``/``else`` or ``while`` that Numba compiles natively.

``Emitter.inline`` emits a nested graph through a child emitter: its values' names continue
the enclosing program's sequence (so every generated name is unique and reads like the
others), and its array constants become parameters of the program, never globals, so the
on-disk cache still works.
"""
from .lists import own_loop_lists
from .registry import stmt_op


def _assign(em, names, exprs, simultaneous=False):
    """``name = expr`` lines (one per line, so the program splitter sees each definition);
    ``simultaneous``: through temporaries, for a loop update whose values read the old state."""
    if simultaneous:
        temps = [em.fresh("u") for _ in exprs]
        for t, e in zip(temps, exprs, strict=True):
            em.line(f"{t} = {e}")
        exprs = temps
    for n, e in zip(names, exprs, strict=True):
        em.line(f"{n} = {e}")


@stmt_op("If")
def _if(em, node, then_graph, else_graph):
    outs = [em.var(v) for v in node.outputs]
    operands = [em.ref(v) for v in node.inputs[1:]]
    for graph, header in ((then_graph, f"if {em.ref(node.inputs[0])}:"), (else_graph, "else:")):
        with em.block(header):
            _assign(em, outs, em.inline(graph, operands))
            if not outs:
                em.line("pass")
    for v in node.outputs:
        em.bind(v)


@stmt_op("While")
def _while(em, node, cond_graph, body_graph, n_vars):
    state = [em.var(v) for v in node.outputs[:n_vars]]
    count = em.fresh("n")
    extra = [em.ref(v) for v in node.inputs[n_vars:]]
    _assign(em, state, [em.ref(v) for v in node.inputs[:n_vars]])
    own = own_loop_lists(em, body_graph, state)     # list variables: written in place
    em.line(f"{count} = 0")
    with em.block("while True:"):
        (pred,) = em.inline(cond_graph, state + extra)
        with em.block(f"if not {pred}:"):
            em.line("break")
        _assign(em, state, em.inline(body_graph, state + extra, own), simultaneous=True)
        em.line(f"{count} += 1")
    for v in node.outputs[:n_vars]:
        em.bind(v)
    em.define(node.outputs[n_vars], f"np.int32({count})")


@stmt_op("CheckTripCount")
def _check_trip_count(em, node, message):
    """Numba raises with a constant text; the interpreter then raises the op's own error
    (codegen/failures.py), so ``message`` never enters the generated source."""
    (x, n), (y,) = node.inputs, node.outputs
    with em.block(f"if {em.ref(n)} == 0:"):
        em.line('raise ValueError("CheckTripCount: the loop ran zero times")')
    em.bind(y, em.ref(x))
