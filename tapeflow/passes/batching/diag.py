"""Batching rules for diagonal values (one-hot seed stacks, ``vectorize.Diag``).

A diagonal batched value V[j, *i] = D[*i] where flat(i over axes) == j + offset, else 0,
is kept as D. Rules here return None whenever they do not apply; ``vectorize`` then
builds the dense one-hot stack and uses the ordinary rule. Only ops that are linear
and zero-preserving in the diagonal operand can keep it diagonal.
"""
import numpy as np

from ...ir.defs.reduce import reduction_axes
from ...ir.graph import constant_of
from ...ir.opdef import OPS
from .flags import Diag

DIAG_RULES = {}


def _rule(*names):
    def deco(fn):
        for n in names:
            DIAG_RULES[n] = fn
        return fn
    return deco


@_rule(*(name for name, op in OPS.items() if op.linear_in))
def linear(b, node, values, flags):
    """One diagonal operand in a position where the op is linear and maps zeros to zeros
    (``OpDef.linear_in``), the rest shared, and no broadcasting of D."""
    diag = [k for k, f in enumerate(flags) if isinstance(f, Diag)]
    if len(diag) != 1 or diag[0] not in OPS[node.op].linear_in or any(f is True for f in flags):
        return None
    k = diag[0]
    if tuple(node.outputs[0].aval.shape) != tuple(values[k].aval.shape):
        return None
    return [(b.emit1(node.op, values, node.attrs), flags[k])]


@_rule("Add", "Sub", "AddN")
def add(b, node, values, flags):
    """Diagonals of one pattern add as their D's."""
    if len(set(flags)) != 1 or any(tuple(v.aval.shape) != tuple(node.outputs[0].aval.shape)
                                   for v in values):
        return None
    return [(b.emit1(node.op, values, node.attrs), flags[0])]


@_rule("Cast")
def cast(b, node, values, flags):
    if not node.outputs[0].aval.dtype.is_floating:
        return None
    return [(b.emit1("Cast", values, node.attrs), flags[0])]


@_rule("Reshape", "ExpandDims", "Squeeze")
def reshape(b, node, values, flags):
    """Row-major order over a trailing block of axes survives a reshape that keeps the prefix."""
    (d,), (f,) = values, flags
    old, new = tuple(d.aval.shape), tuple(node.outputs[0].aval.shape)
    if not f.axes:
        return None
    p = min(f.axes)
    if any(old[a] != 1 and a not in f.axes for a in range(p, len(old))) or new[:p] != old[:p]:
        return None
    out = b.reshape(d, new)
    return [(out, b.diag(out, tuple(range(p, len(new))), f.offset))]


@_rule("Transpose")
def transpose(b, node, values, flags):
    (d,), (f,) = values, flags
    perm = tuple(node.attrs["perm"])
    moved = [perm.index(a) for a in f.axes]
    if moved != sorted(moved):
        return None
    return [(b.emit1("Transpose", [d], {"perm": perm}), Diag(tuple(moved), f.offset))]


@_rule("Sum", "Mean")
def reduce(b, node, values, flags):
    (d,), (f,) = values, flags
    rank = len(d.aval.shape)
    axes = reduction_axes(node.attrs.get("axis"), rank)
    if set(axes) & set(f.axes):
        return None
    keep = node.attrs.get("keepdims", False)
    new_axes = tuple(a if keep else a - sum(1 for r in axes if r < a) for a in f.axes)
    return [(b.emit1(node.op, [d], node.attrs), Diag(new_axes, f.offset))]


@_rule(*(name for name, op in OPS.items() if op.gemm))
def matmul(b, node, values, flags):
    """Contracting the diagonal axis of one 2-D operand with a shared 2-D matrix.

    The other axis diagonal instead: the product of D stays diagonal on that output axis.
    (D @ M)[j, m, n] = D[m, j'] * M[j', n] with j' = j + offset: no product, one broadcast
    multiply (the same on the right: (M @ D)[j, m, n] = M[m, j'] * D[j', n]).
    """
    (a, c), (fa, fc) = values, flags
    ta, tc = node.attrs.get("transpose_a", False), node.attrs.get("transpose_b", False)
    if len(a.aval.shape) != 2 or len(c.aval.shape) != 2 or fa is True or fc is True:
        return None
    if isinstance(fa, Diag) and fc is False:
        d, f, k_axis, other, t_other = a, fa, (0 if ta else 1), c, tc
    elif isinstance(fc, Diag) and fa is False:
        d, f, k_axis, other, t_other = c, fc, (1 if tc else 0), a, ta
    else:
        return None
    if f.axes == (1 - k_axis,):     # the diagonal axis survives: D @ M stays diagonal
        left = isinstance(fa, Diag)
        return [(b.emit1(node.op, [a, c], node.attrs), Diag((0,) if left else (1,), f.offset))]
    if f.axes != (k_axis,):
        return None
    size, off = b.size, f.offset
    # D with the contracted axis first: [K, r] (r: D's other dim, m on the left, n on the right)
    dk = d if k_axis == 0 else b.emit1("Transpose", [d], {"perm": (1, 0)})
    # the shared matrix with the contracted axis first: [K, s]
    left = isinstance(fa, Diag)
    other_k_first = (not t_other) if left else t_other
    ok = other if other_k_first else b.emit1("Transpose", [other], {"perm": (1, 0)})
    K = dk.aval.shape[0]
    if off or size != K:
        dk = b.emit1("StridedSlice", [dk], {"spec": ((off, off + size, 1),)})
        ok = b.emit1("StridedSlice", [ok], {"spec": ((off, off + size, 1),)})
    r, s = dk.aval.shape[1], ok.aval.shape[1]
    if r == 1 and _all_ones(dk):    # plain identity seeds: the result is M's rows themselves
        return [(b.reshape(ok, (size,) + ((1, s) if left else (s, 1))), True)]
    if left:    # out[j, m, n] = D[m, j] * M[j, n]
        x, y = b.reshape(dk, (size, r, 1)), b.reshape(ok, (size, 1, s))
    else:       # out[j, m, n] = M[m, j] * D[j, n]
        x, y = b.reshape(ok, (size, s, 1)), b.reshape(dk, (size, 1, r))
    return [(b.emit1("Mul", [x, y]), True)]


_LAYOUT = ("Reshape", "Transpose", "ExpandDims", "Squeeze", "StridedSlice", "BroadcastTo")


def _all_ones(v):
    """``v`` is a constant of ones, possibly reshaped or sliced."""
    while v.node is not None and v.node.op in _LAYOUT:
        v = v.node.inputs[0]
    array = constant_of(v)
    return array is not None and bool(np.all(array == 1))


__all__ = ["DIAG_RULES"]
