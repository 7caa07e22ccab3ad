"""Algebraic simplification: rewrite nodes that compute nothing new, in one forward walk.

Rules (each a direct check on the node, no pattern engine):

- ``Identity(x)`` -> x
- ``x*1``, ``1*x``, ``x/1``, ``x+0``, ``0+x``, ``x-0`` -> x (the constant may be any shape
  of ones/zeros, if the result's type is x's type; for the zeros see "signed zeros" below)
- ``Neg(Neg(x))`` -> x
- ``Reshape``, ``BroadcastTo`` or ``Squeeze`` to x's own shape, ``Tile`` by ones, ``Pad``
  by zeros (``OpDef.shape_noop``), ``Cast`` to x's dtype, one-input ``AddN`` -> x
- ``Transpose`` with the identity perm -> x; ``Transpose(Transpose(x, p), q)`` ->
  ``Transpose(x, p∘q)`` (or x when that is the identity)

The guard every rule shares: the node's output type must equal the kept value's type
*exactly* (shape and dtype). So ``x * ones([3, 3])`` with x of shape [3] stays (it
broadcasts), and shape no-ops need fully known shapes: with an unknown dimension,
``BroadcastTo`` to ``[None]`` may still broadcast a 1 at run time.

Signed zeros: every rewrite is bit-exact, so a simplified program can be checked against
the interpreter with ``==``. In IEEE arithmetic ``-0.0 + 0.0`` is ``+0.0``: ``x + 0.0`` is
*not* x where x is ``-0.0`` (and ``1 / x`` then flips from -inf to +inf). So for floats
``x + (-0.0)`` and ``x - 0.0`` fold, while ``x + 0.0`` and ``x - (-0.0)`` fold only with
``no_signed_zeros=True`` (LLVM's ``nsz``; XLA and grappler always fold them). Integer
zeros always fold. Dead producers left behind are removed by ``dce``.
"""
import numpy as np

from ..ir.opdef import OPS
from .rewrite import KEEP, known_shape, rebuild, same_aval


def simplify(graph, no_signed_zeros=False):
    def rule(node, inputs, new):
        kept = _simplified(node, inputs, new, no_signed_zeros)
        return KEEP if kept is None else [kept]
    return rebuild(graph, rule)


def _is_unit(new, value, unit, no_signed_zeros):
    """Is ``value`` a constant equal to ``unit`` (``OpDef.unit``: ``x op u == x`` for every x,
    bit for bit)? A float zero must have the unit's sign (x + (-0.0) is x; x + 0.0 turns a
    -0.0 in x into +0.0), unless signed zeros may be ignored."""
    a = new.const_array(value)
    if a is None or a.size == 0 or not np.all(a == unit):
        return False
    if a.dtype.kind != "f" or no_signed_zeros:
        return True
    return bool(np.all(np.signbit(a) == np.signbit(unit)))


def _simplified(node, inputs, new, no_signed_zeros):
    """The value standing for the node's single output, or None to keep the node."""
    op = node.op
    if len(node.outputs) != 1:
        return None
    out = node.outputs[0].aval

    def same(x):
        return x if same_aval(x.aval, out) else None

    if op == "Identity":
        return inputs[0]
    if op == "Cast" or (op == "AddN" and len(inputs) == 1):
        return same(inputs[0])
    if op in OPS and OPS[op].shape_noop:
        x = inputs[0]
        return same(x) if known_shape(out) and known_shape(x.aval) else None
    if op in OPS and OPS[op].unit:
        unit, positions = OPS[op].unit
        x, y = inputs
        if 1 in positions and _is_unit(new, y, unit, no_signed_zeros) and same(x) is not None:
            return x
        if 0 in positions and _is_unit(new, x, unit, no_signed_zeros) and same(y) is not None:
            return y
        return None
    if op == "Neg":
        inner = new.producer(inputs[0])
        if inner is not None and inner.op == "Neg":
            return same(inner.inputs[0])
        return None
    if op == "Transpose":
        return _transpose(node, inputs[0], new)
    return None


def _transpose(node, x, new):
    perm = tuple(node.attrs["perm"])
    inner = new.producer(x)
    if inner is not None and inner.op == "Transpose":
        # y = transpose(x0, p): y axis j is x0 axis p[j]; z = transpose(y, q): z axis i is y
        # axis q[i], i.e. x0 axis p[q[i]].
        p = tuple(inner.attrs["perm"])
        x, perm = inner.inputs[0], tuple(p[q] for q in perm)
        if perm != tuple(range(len(perm))):
            return new.add("Transpose", [x], {"perm": perm}, [node.outputs[0].aval]).outputs[0]
    if perm == tuple(range(len(perm))) and same_aval(x.aval, node.outputs[0].aval):
        return x
    return None
