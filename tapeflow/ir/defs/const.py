"""Const: an array written into the graph, its ``value`` attribute.

A registered op like any other (issue 24: not a pseudo-op every consumer special-cases):
the verifier, the codec, the interpreter and the vectorizer treat it through its OpDef. What
is particular to constants stays where it belongs: ``Graph.const``/``const_node`` make one
and ``is_constant``/``constant_of`` (``ir/graph.py``) are the only ways anything outside ``ir/``
asks whether a value is a literal and reads it; constant folding and the min-cut partition
never keep one as a residual, and the code generator binds it as a literal or an argument
(``codegen/generate.bind_consts``) instead of emitting a step.
"""
import numpy as np

from .. import dtypes as D
from ..opdef import AVal, defop


def _const(avals, value):
    a = np.asarray(value)
    return AVal(tuple(a.shape), D.as_dtype(a.dtype))


defop("Const", _const, arity=0, attrs={"value": "array"})
