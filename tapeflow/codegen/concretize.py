"""A graph with unknown (``None``) dimensions made concrete for one call's input shapes.

``compile_graph`` compiles such a graph once: each new combination of input shapes gets its
graph made concrete here and its source generated (Python work, milliseconds), and since the
source reads every size from the arrays (shape_free.py) all those sources are the same text,
one cache entry and one Numba compile. A size no input gives (a TensorArray a loop grows,
a loop variable whose size changes) stays unknown here; the source reads it from the array
holding it when the program runs (shape_free.py, ``RunDim``). Shapes that do not fit the
graph raise what the op raises eagerly: ``InvalidArgumentError`` naming the op, the shapes
and the user's line.
"""
from ..errors import InferError
from ..ir.graph import Graph, Value, is_constant
from ..ir.opdef import OPS, AVal
from ..runtime.dispatch import op_error


def concretize(graph, shapes, known=True):
    """A copy of ``graph`` with input shapes ``shapes`` and every other shape re-inferred.
    ``known=False``: the inputs' known dimensions are not checked either (only ranks), so
    the first op that cannot take ``shapes`` is the one named."""
    if len(shapes) != len(graph.inputs):
        raise TypeError(f"graph takes {len(graph.inputs)} inputs, got {len(shapes)}")
    g = Graph()
    env = {}
    for k, (v, shape) in enumerate(zip(graph.inputs, shapes, strict=True)):
        want = v.aval.shape
        if len(shape) != len(want) or known and any(d is not None and d != s for d, s in zip(want, shape)):
            raise op_error("Placeholder", InferError(
                f"input #{k} must have shape {_text(want)}, got {_text(shape)}"), [v.aval])
        nv = Value(AVal(tuple(shape), v.aval.dtype))
        env[v.id] = nv
        g.inputs.append(nv)
    for node in graph.nodes:
        ins = [env[v.id] for v in node.inputs]
        if is_constant(node):
            avals = [v.aval for v in node.outputs]
        else:
            opdef = OPS[node.op]
            try:
                out = opdef.infer([v.aval for v in ins], **node.attrs)
            except InferError as e:
                raise op_error(node.op, e, [v.aval for v in ins], node.line) from None
            avals = list(out) if opdef.multi_output else [out]
        new = g.add(node.op, ins, node.attrs, avals)
        new.line = node.line
        for old, nv in zip(node.outputs, new.outputs, strict=True):
            env[old.id] = nv
    g.outputs = [env[v.id] for v in graph.outputs]
    return g


def _text(shape):
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"
