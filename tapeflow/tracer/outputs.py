"""A traced function's output structure: its leaves (``OutRef``, ``ConstLeaf``) and its builder.

The structure the Python function returned is kept as a template whose tensor leaves
name graph outputs; calling the function rebuilds it around the program's results.
Both the general call (concrete_function.py) and the generated one (fastcall.py) read it.
"""
from .. import _nest
from ..ops.indexed_slices import IndexedSlices


class OutRef:
    """A tensor leaf of the output structure: graph output ``index``."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


class ConstLeaf:
    """A non-tensor leaf of the output structure (None, a Python value)."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class SlicesRef:
    """An IndexedSlices leaf: its values, indices and dense_shape (``OutRef``s, or a ``ConstLeaf``
    None for a missing dense_shape), rebuilt as an IndexedSlices of the program's results."""
    __slots__ = ("parts",)

    def __init__(self, parts):
        self.parts = tuple(parts)

    def build(self, outs):
        return IndexedSlices(*(outs[p.index] if isinstance(p, OutRef) else p.value
                               for p in self.parts))


def builder(template):
    """A function outs -> the output structure, composed once from the template."""
    if isinstance(template, SlicesRef):
        return template.build
    if isinstance(template, OutRef):
        i = template.index
        return lambda outs: outs[i]
    if isinstance(template, ConstLeaf):
        v = template.value
        return lambda outs: v
    if isinstance(template, dict):
        parts = [(k, builder(v)) for k, v in template.items()]
        return lambda outs: {k: f(outs) for k, f in parts}
    if isinstance(template, list):
        parts = [builder(v) for v in template]
        return lambda outs: [f(outs) for f in parts]
    if isinstance(template, tuple) and not hasattr(type(template), "_fields"):
        parts = [builder(v) for v in template]
        return lambda outs: tuple(f(outs) for f in parts)
    return lambda outs: _unflatten(template, outs)


def _unflatten(template, outs):
    """Rebuild the output structure: int leaves index ``outs``; other leaves stay as they are."""
    leaves = [outs[x.index] if isinstance(x, OutRef) else x.value if isinstance(x, ConstLeaf) else
              x.build(outs) if isinstance(x, SlicesRef) else x for x in _nest.flatten(template)]
    return _nest.pack_sequence_as(template, leaves)


__all__ = ["OutRef", "ConstLeaf", "SlicesRef", "builder"]
