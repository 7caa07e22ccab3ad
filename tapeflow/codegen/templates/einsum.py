"""Einsum lowered at codegen time (Numba has no np.einsum).

The equation is made explicit by ``parse_einsum`` (the kernel's own parser), then operands
are contracted left to right. A pairwise contraction of float operands without repeated
labels becomes transposes + reshapes + (batched) ``np.dot``: labels shared and kept are the
batch, shared and summed are the inner dimension. Anything else (diagonals, a label summed
out of one operand only, integers, scalars) is an explicit loop nest over every label,
accumulating ``out[kept] += a[...] * b[...]``, which is what einsum means.
"""
from ...ir.defs.linalg import parse_einsum
from ...ir.shapes import num_elements
from ..emitter import cast, index, lit, np_type, shape_lit
from ..shape_free import Dim


def _unique(labels):
    seen = []
    for c in labels:
        if c not in seen:
            seen.append(c)
    return "".join(seen)


class _Op:
    """An operand: an array expression (a scalar if ``labels`` is empty) and its labels."""

    def __init__(self, expr, labels):
        self.expr, self.labels = expr, labels

    def read(self, pos):
        if not self.labels:
            return self.expr
        return f"{self.expr}[{index([pos[c] for c in self.labels])}]"


def _loop_contract(em, ops, out_labels, sizes, dt):
    """sum over all other labels of the product of ``ops``, indexed by ``out_labels``."""
    every = _unique("".join(op.labels for op in ops) + out_labels)
    zero = lit(0, dt)
    if out_labels:
        res = em.fresh("es")
        em.line(f"{res} = np.zeros({shape_lit([sizes[c] for c in out_labels])}, dtype={np_type(dt)})")
    else:
        res = em.fresh("acc")
        em.line(f"{res} = {zero}")
    with em.loops([sizes[c] for c in every]) as idx:
        pos = dict(zip(every, idx))
        term = " * ".join(op.read(pos) for op in ops)
        target = f"{res}[{index([pos[c] for c in out_labels])}]" if out_labels else res
        em.line(f"{target} += {term}")
    if not out_labels:
        final = em.fresh("es")
        em.line(f"{final} = {cast(res, dt)}")
        res = final
    return _Op(res, out_labels)


def _permute(em, op, order, sizes, dt):
    """A C-contiguous copy of ``op`` with its labels in ``order`` (no copy if already so)."""
    if op.labels == order:
        return op.expr
    res = em.fresh("ep")
    em.line(f"{res} = np.empty({shape_lit([sizes[c] for c in order])}, dtype={np_type(dt)})")
    with em.loops([sizes[c] for c in order]) as idx:
        pos = dict(zip(order, idx))
        em.line(f"{res}[{index(idx)}] = {op.read(pos)}")
    return res


def _dot_contract(em, a, b, keep, sizes, dt):
    batch = [c for c in a.labels if c in b.labels and c in keep]
    inner = [c for c in a.labels if c in b.labels and c not in keep]
    left = [c for c in a.labels if c not in b.labels]
    right = [c for c in b.labels if c not in a.labels]
    nb, m, k, n = (num_elements([sizes[c] for c in g]) for g in (batch, left, inner, right))
    pa = _permute(em, a, "".join(batch + left + inner), sizes, dt)
    pb = _permute(em, b, "".join(batch + inner + right), sizes, dt)
    labels = "".join(batch + left + right)
    shape = shape_lit([sizes[c] for c in labels]) if labels else None
    res = em.fresh("ed")
    if not isinstance(nb, Dim) and nb == 1:     # a batch read from the inputs: the loop, no decision
        prod = em.fresh("ed")
        em.line(f"{prod} = rt.dot({pa}.reshape({shape_lit((m, k))}), {pb}.reshape({shape_lit((k, n))}))")
        em.line(f"{res} = {prod}.reshape({shape})" if labels else f"{res} = {prod}[0, 0]")
        return _Op(res, labels)
    em.line(f"{res} = np.empty({shape}, dtype={np_type(dt)})")
    av, bv, rv = em.fresh("ea"), em.fresh("eb"), em.fresh("er")
    em.line(f"{av} = {pa}.reshape({shape_lit((nb, m, k))})")
    em.line(f"{bv} = {pb}.reshape({shape_lit((nb, k, n))})")
    em.line(f"{rv} = {res}.reshape({shape_lit((nb, m, n))})")
    with em.loops((nb,)) as (i,):
        em.line(f"rt.dot_into({av}[{i}], {bv}[{i}], {rv}[{i}])")
    return _Op(res, labels)


def _contract(em, a, b, keep, sizes, dt):
    labels = [c for c in _unique(a.labels + b.labels) if c in keep]
    dot_ok = (dt.is_floating and a.labels and b.labels
              and len(set(a.labels)) == len(a.labels) and len(set(b.labels)) == len(b.labels)
              and all(c in keep or c in b.labels for c in a.labels)
              and all(c in keep or c in a.labels for c in b.labels))
    if dot_ok:
        return _dot_contract(em, a, b, keep, sizes, dt)
    return _loop_contract(em, [a, b], "".join(labels), sizes, dt)


def emit_einsum(em, node, equation):
    (y,) = node.outputs
    dt = y.aval.dtype
    labels, out, sizes = parse_einsum(equation, [x.aval.shape for x in node.inputs])
    ops = [_Op(em.ref(x), lab) for x, lab in zip(node.inputs, labels)]
    cur = ops[0]
    for k in range(1, len(ops)):
        keep = set(out).union(*[set(op.labels) for op in ops[k + 1:]])
        cur = _contract(em, cur, ops[k], keep, sizes, dt)
    if cur.labels != out:
        if sorted(cur.labels) == sorted(out) and len(set(cur.labels)) == len(cur.labels):
            cur = _Op(_permute(em, cur, out, sizes, dt), out)
        else:
            cur = _loop_contract(em, [cur], out, sizes, dt)
    if cur.expr in [em.ref(x) for x in node.inputs]:
        em.bind(y, cur.expr)
    else:
        em.define(y, cur.expr)
