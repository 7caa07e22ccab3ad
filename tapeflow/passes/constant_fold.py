"""Constant folding: evaluate at compile time the nodes whose inputs are all constants.

The node is run with the very NumPy kernel the interpreter uses
(``runtime.registry.KERNELS``), so a folded value is bit-for-bit what running the
graph would give. Only small results are folded (``max_elements``, 1e5 by default):
a folded constant is stored in the graph (and in saved files), so turning
``BroadcastTo(Const 0, [4096, 4096])`` into a 64 MB array would be a loss.
A kernel that raises (integer division by zero...) leaves its node alone, so the
error appears when the program runs, where it can name the user's line.
"""
import numpy as np

from ..ir.graph import const_node, is_constant
from ..ir.opdef import OPS
from ..ir.shapes import num_elements
from ..runtime import kernels as _kernels  # noqa: F401  (importing the kernels fills KERNELS)
from ..runtime.registry import KERNELS
from .rewrite import KEEP, is_pure, rebuild

MAX_ELEMENTS = 100_000


def constant_fold(graph, max_elements=MAX_ELEMENTS):
    def rule(node, inputs, new):
        if is_constant(node) or not is_pure(node) or node.op not in KERNELS:
            return KEEP
        arrays = [new.const_array(v) for v in inputs]
        if any(a is None for a in arrays):
            return KEEP
        sizes = [num_elements(v.aval.shape) for v in node.outputs]
        if any(n is None or n > max_elements for n in sizes):
            return KEEP
        results = _evaluate(KERNELS[node.op], node, arrays)
        if results is None:
            return KEEP
        return [new.append(const_node(r)).outputs[0] for r in results]

    return rebuild(graph, rule)


def _evaluate(kernel, node, arrays):
    """The node's results as fresh arrays of exactly its output types, or None if it cannot run."""
    try:
        out = kernel(*arrays, **node.attrs)
    except Exception:  # noqa: BLE001  (any kernel error is reported at run time instead)
        return None
    out = out if OPS[node.op].multi_output else (out,)
    results = []
    for v, r in zip(node.outputs, out, strict=True):
        r = np.array(r, dtype=v.aval.dtype.np, copy=True)  # a copy: never alias another Const
        if r.shape != tuple(v.aval.shape):
            return None
        results.append(r)
    return results
