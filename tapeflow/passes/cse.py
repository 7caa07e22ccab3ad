"""Common subexpression elimination: one node per (op, inputs, attributes).

Two nodes merge when they apply the same pure op to the same (already merged) input
values with equal attributes, and two ``Const`` nodes merge when their arrays have the
same dtype, shape and bytes. Equality is *exact*, never "close": attribute numbers
compare by type and repr (``1`` is not ``1.0``, ``-0.0`` is not ``0.0``) and arrays by
their bits, because anything looser could change a result.

Inputs of ops that are exactly commutative in IEEE arithmetic (``OpDef.commutative``:
Add, Mul, Equal, ...) are put in a canonical order first, so ``a*b`` and ``b*a`` merge.
Maximum/Minimum are left out on purpose: NumPy's ``maximum(-0.0, 0.0)`` depends on the order.
"""
import hashlib

import numpy as np

from ..ir import dtypes as D
from ..ir.graph import Graph
from ..ir.opdef import OPS
from .rewrite import is_pure, keep


def cse(graph):
    env = {}    # old value id -> value of the new graph
    seen = {}   # key -> nodes of the new graph with that key (attrs confirmed exactly)
    nodes = []
    for node in graph.nodes:
        inputs = [env.get(v.id, v) for v in node.inputs]
        key = None
        if is_pure(node):
            ids = [v.id for v in inputs]
            if node.op in OPS and OPS[node.op].commutative:
                ids.sort()
            key = (node.op, tuple(ids), attrs_key(node.attrs))
            match = next((n for n in seen.get(key, ()) if attrs_equal(n.attrs, node.attrs)), None)
            if match is not None:
                env.update((o.id, m) for o, m in zip(node.outputs, match.outputs, strict=True))
                continue
        new = keep(node, inputs)
        nodes.append(new)
        if new is not node:
            env.update((o.id, m) for o, m in zip(node.outputs, new.outputs, strict=True))
        if key is not None:
            seen.setdefault(key, []).append(new)
    return Graph(inputs=graph.inputs, nodes=nodes, outputs=[env.get(v.id, v) for v in graph.outputs])


# -- attribute keys ----------------------------------------------------------------------------

def attrs_key(attrs):
    """A hashable key equal for equal attribute dicts (arrays by digest; see ``attrs_equal``)."""
    return tuple((k, _key(v)) for k, v in sorted(attrs.items()))


def _key(v):
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(v)
        return ("array", a.dtype.str, a.shape, hashlib.sha1(_bits(a)).hexdigest())
    if isinstance(v, D.DType):
        return ("dtype", v.name)
    if isinstance(v, (tuple, list)):
        return (type(v).__name__,) + tuple(_key(x) for x in v)
    if isinstance(v, dict):
        return ("dict",) + attrs_key(v)
    if isinstance(v, Graph):    # by structure: its repr is only a summary
        return ("graph", graph_key(v))
    return (type(v).__name__, repr(v))


def graph_key(graph):
    """A digest of a nested graph's structure: input avals, each node's op, wiring, attributes
    (arrays by their bits, nested graphs by their digests) and output avals, and the outputs.
    Graphs with equal digests compute the same thing."""
    pos = {v.id: k for k, v in enumerate(graph.inputs)}
    parts = [tuple(str(v.aval) for v in graph.inputs)]
    for node in graph.nodes:
        ins = tuple(pos.get(v.id, ("free", v.id)) for v in node.inputs)
        parts.append((node.op, ins, attrs_key(node.attrs), tuple(str(v.aval) for v in node.outputs)))
        for v in node.outputs:
            pos[v.id] = len(pos)
    parts.append(tuple(pos.get(v.id, ("free", v.id)) for v in graph.outputs))
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def attrs_equal(a, b):
    """Exact equality of two attribute dicts: same keys, values equal by type and bits."""
    return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)


def _equal(x, y):
    if isinstance(x, (np.ndarray, np.generic)) or isinstance(y, (np.ndarray, np.generic)):
        if not (isinstance(x, (np.ndarray, np.generic)) and isinstance(y, (np.ndarray, np.generic))):
            return False
        x, y = np.asarray(x), np.asarray(y)
        return x.dtype == y.dtype and x.shape == y.shape and np.array_equal(_bits(x), _bits(y))
    if isinstance(x, (tuple, list)):
        return (type(x) is type(y) and len(x) == len(y)
                and all(_equal(p, q) for p, q in zip(x, y, strict=True)))
    if isinstance(x, dict):
        return isinstance(y, dict) and attrs_equal(x, y)
    return _key(x) == _key(y)


def _bits(a):
    """The raw bytes of an array as a flat uint8 array (so NaNs and signed zeros compare by bits)."""
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)
