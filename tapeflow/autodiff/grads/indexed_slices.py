"""The gradient rules that take an IndexedSlices and pass one on, as TensorFlow's do: Identity
(a variable's read is one here), EnsureShape and Cast (its values cast back). The sweep
(``backprop.SLICES_RULES``) densifies the gradient for every other rule."""
from ...ops import math as m
from ...ops.indexed_slices import IndexedSlices
from ..backprop import SLICES_RULES


def _pass_on(op, g):
    return [g]


def _cast(op, g):
    src = op.in_avals[0].dtype
    if src.is_floating and op.out_avals[0].dtype.is_floating:
        return [IndexedSlices(m.cast(g.values, src), g.indices, g.dense_shape)]
    return [None]


SLICES_RULES.update({"Identity": _pass_on, "EnsureShape": _pass_on, "Cast": _cast})
