"""Batching rules for scaled values (``vectorize.Scaled``: a batched base times a shared coefficient).

A reverse program multiplies the batched cotangent by many shared values (the saved
activations' derivatives). Batched, each product costs B times the unbatched size; kept
as ``base * coef`` the products happen on the small coefficient, and the base is
multiplied once, when an op needs the dense value, or never: a matmul contracting the
scaled axis scales the shared matrix instead (``A @ (X * c) = (A * c^T) @ X``).
Rules return None when they do not apply (the value is then made dense).
"""
from ...ir.opdef import OPS
from ..sink_layout import _is_unit_reshape, _unit_reshape
from .flags import Scaled
from .linalg import matrix_batch

SCALED_RULES = {}
SCALED_STARTS = ("Mul",)   # ops that make a Scaled value from a plain batched one


def _rule(*names):
    def deco(fn):
        for n in names:
            SCALED_RULES[n] = fn
        return fn
    return deco


def _fits(coef, shape):
    """``coef`` broadcasts into ``shape`` without growing it."""
    c = tuple(coef.aval.shape)
    if len(c) > len(shape):
        return False
    return all(d == 1 or d == e for d, e in zip(c[::-1], shape[::-1]))


def _as_scaled(v, f, b):
    """(base, coef) of a batched operand: a plain batched value is its own base times one."""
    if isinstance(f, Scaled):
        return v, f.coef
    return v, None


def _times(b, c, u):
    return u if c is None else b.emit1("Mul", [c, u])


@_rule("Mul")
def mul(b, node, values, flags):
    """batched (or scaled) times shared: the shared factor joins the coefficient."""
    if len(values) != 2 or flags.count(False) != 1:
        return None
    k = 0 if flags[0] is not False else 1
    base, coef = _as_scaled(values[k], flags[k], b)
    u = values[1 - k]
    shape = tuple(node.outputs[0].aval.shape)
    if tuple(base.aval.shape[1:]) != shape or not _fits(u, shape):
        return None
    new = _times(b, coef, u)
    return [(base, Scaled(new))]


@_rule("Neg")
def neg(b, node, values, flags):
    (base,), (f,) = values, flags
    return [(base, Scaled(b.emit1("Neg", [f.coef])))]


@_rule("RealDiv")
def div(b, node, values, flags):
    if not isinstance(flags[0], Scaled) or flags[1] is not False:
        return None
    shape = tuple(node.outputs[0].aval.shape)
    if not _fits(values[1], shape):
        return None
    return [(values[0], Scaled(b.emit1("RealDiv", [flags[0].coef, values[1]])))]


@_rule("Add", "Sub")
def add(b, node, values, flags):
    """Two scalings of one base add as their coefficients."""
    (x, y), (fx, fy) = values, flags
    if not (isinstance(fx, Scaled) and isinstance(fy, Scaled)) or x is not y:
        return None
    shape = tuple(node.outputs[0].aval.shape)
    if tuple(x.aval.shape[1:]) != shape:
        return None
    return [(x, Scaled(b.emit1(node.op, [fx.coef, fy.coef])))]


@_rule("Reshape", "ExpandDims", "Squeeze")
def reshape(b, node, values, flags):
    (base,), (f,) = values, flags
    old, new = tuple(base.aval.shape[1:]), tuple(node.outputs[0].aval.shape)
    c = tuple(f.coef.aval.shape)
    if c == () or all(d == 1 for d in c):
        coef = f.coef if c == () else b.reshape(f.coef, ())
    elif _is_unit_reshape(old, new):
        aligned = b.reshape(f.coef, (1,) * (len(old) - len(c)) + c)
        coef = b.reshape(aligned, _unit_reshape(old, new, aligned.aval.shape))
    else:
        return None
    return [(b.reshape(base, (b.size,) + new), Scaled(coef))]


@_rule("Transpose")
def transpose(b, node, values, flags):
    (base,), (f,) = values, flags
    perm = tuple(node.attrs["perm"])
    c = tuple(f.coef.aval.shape)
    aligned = b.reshape(f.coef, (1,) * (len(perm) - len(c)) + c)
    coef = b.emit1("Transpose", [aligned], {"perm": perm})
    return [(b.emit1("Transpose", [base], {"perm": (0,) + tuple(p + 1 for p in perm)}), Scaled(coef))]


@_rule(*(name for name, op in OPS.items() if op.gemm))
def matmul(b, node, values, flags):
    """2-D products with one scaled operand and one shared: the coefficient moves either onto
    the shared matrix (when it varies along the contracted axis) or onto the result."""
    (a, c), (fa, fc) = values, flags
    if any(len(w.aval.shape) != 2 for w in node.inputs):
        return None
    ta, tc = node.attrs.get("transpose_a", False), node.attrs.get("transpose_b", False)
    if isinstance(fa, Scaled) and fc is False:
        scaled_left, coef, shape, t = True, fa.coef, node.inputs[0].aval.shape, ta
    elif isinstance(fc, Scaled) and fa is False:
        scaled_left, coef, shape, t = False, fc.coef, node.inputs[1].aval.shape, tc
    else:
        return None
    cs = (1,) * (2 - len(coef.aval.shape)) + tuple(coef.aval.shape)
    coef2 = b.reshape(coef, cs)
    if t:       # the stored operand is transposed: coefficient axes follow
        cs = cs[::-1]
        coef2 = b.emit1("Transpose", [coef2], {"perm": (1, 0)})
    # cs is now in the logical [rows, cols] orientation of the operand
    k_axis = 1 if scaled_left else 0          # contracted axis of the logical operand
    free = 1 - k_axis
    if cs[k_axis] == 1:
        # varies only along the free axis (or not at all): scale the result
        plain = matrix_batch(b, node, [a, c], [True, False] if scaled_left else [False, True])
        if plain is None:
            return None
        (out, _), = plain
        oc = b.reshape(coef2, (cs[0], 1) if scaled_left else (1, cs[1]))
        return [(out, Scaled(oc))]
    if cs[free] == 1:
        # varies along the contracted axis: scale the shared matrix instead
        if scaled_left:   # (X * c[1,k]) @ M = X @ (c^T * M)
            vec = b.reshape(coef2, (cs[1], 1))
            m = c
            m_scaled = b.emit1("Mul", [m, b.emit1("Transpose", [vec], {"perm": (1, 0)}) if tc else vec])
            return matrix_batch(b, node, [a, m_scaled], [True, False])
        # M @ (X * c[k,1]) = (M * c^T) @ X
        vec = b.reshape(coef2, (1, cs[0]))
        m_scaled = b.emit1("Mul", [a, b.emit1("Transpose", [vec], {"perm": (1, 0)}) if ta else vec])
        return matrix_batch(b, node, [m_scaled, c], [False, True])
    return None


__all__ = ["SCALED_RULES", "SCALED_STARTS"]
