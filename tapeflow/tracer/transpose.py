"""Forward mode by transposition: the program of J·t from the reverse program of sᵀJ.

A reverse graph (``tape_graph.ReverseGraph``) maps a seed s in the target's space to sᵀJₖ
for every source k, and is linear in s. Its gradient with respect to s, given the
cotangent t in source k's space, is Jₖ·t: the tangent of the target for a tangent t of
source k. The ordinary gradient rules build it (the "linear transpose" trick, as JAX's
``linear_transpose``), so no op needs a rule of its own for forward mode, and the result
is vectorized over one-hot tangents like any reverse program.

Forward mode needs one seed per source element where reverse needs one per target
element; ``tracer.jacobian`` runs whichever needs fewer.
"""
import numpy as np

from ..passes.dce import dce
from ..ops.indexed_slices import dense
from ..runtime.interpret import replay
from ..autodiff.tape import GradientTape
from ..runtime.tensor import wrap
from .context import TraceContext
from .tape_graph import ReverseGraph

_GRAPHS = {}        # (reverse structure key, output index) -> forward Graph
_MAX_GRAPHS = 256


def forward_graph(rg, gi):
    """The ReverseGraph-shaped program (tangent of the source of output ``gi``, then
    ``rg``'s saved and captured inputs) -> the target's tangent, J·t."""
    key = None if rg.key is None else (rg.key, gi)
    graph = _GRAPHS.get(key) if key is not None else None
    if graph is None:
        graph = _transpose(rg.graph, gi)
        if key is not None:
            if len(_GRAPHS) >= _MAX_GRAPHS:
                _GRAPHS.pop(next(iter(_GRAPHS)))
            _GRAPHS[key] = graph
    return ReverseGraph(graph, 1, rg.saved, rg.captured, [0],
                        None if key is None else ("forward",) + key)


def _transpose(graph, gi):
    seed_aval = graph.inputs[0].aval
    ctx = TraceContext()
    with ctx:
        tangent = ctx.input(graph.outputs[gi].aval)
        rest = [ctx.input(v.aval) for v in graph.inputs[1:]]
        # The transpose of a linear map does not depend on the point: any seed will do.
        seed = wrap(np.zeros(seed_aval.shape, seed_aval.dtype.np))
        with GradientTape() as tape:
            tape.watch(seed)
            outs = replay(graph, [seed] + rest)
        jt = dense(tape.gradient(outs[gi], seed, output_gradients=tangent))
        if jt is None:
            jt = wrap(np.zeros(seed_aval.shape, seed_aval.dtype.np))
        out = ctx.value_of(jt)
    g = ctx.graph
    g.outputs = [out]
    return dce(g)


__all__ = ["forward_graph"]
