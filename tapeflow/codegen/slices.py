"""Slices along a size only the run knows (``symbolic.RunDim``): bounds as size expressions.

``slice(start, stop, step).indices(n)`` reads ``n`` as a plain number in C, which for a size
read at run time would be its stand-in value, silently. These functions compute the same
bounds with size arithmetic and comparisons instead, so the bounds are code and each
comparison is a check the program makes where it slices (a list sliced past its end, an
empty one, runs that call on the interpreter).
"""
from ..ir.defs.array import expand_spec


def bounds(n, s):
    """(first index, length) of ``slice(*s)`` over ``n`` elements, as Python's
    ``slice.indices`` and ``len(range(...))``: ``s`` is (start, stop, step), None for a
    default; ``n`` a size (a ``Dim`` or an int)."""
    start, stop, step = s
    step = 1 if step is None else step
    lower, upper = (0, n) if step > 0 else (-1, n - 1)

    def clamp(v, default):
        if v is None:
            return default
        if v < 0:
            v = v + n
            return lower if v < lower else v
        return upper if v > upper else v
    first = clamp(start, lower if step > 0 else upper)
    last = clamp(stop, upper if step > 0 else lower)
    if step > 0:
        length = (last - first + step - 1) // step if last > first else 0
    else:
        length = (first - last - step - 1) // -step if first > last else 0
    return first, length


def sliced_shape(shape, spec):
    """Output shape of ``x[spec]`` (``ir.defs.array.sliced_shape``) by ``bounds``."""
    out, dim = [], 0
    for s in expand_spec(spec, len(shape)):
        if s is None:
            out.append(1)
            continue
        if not isinstance(s, int):
            if s[2] == 0:
                raise ValueError("a zero step")
            out.append(bounds(shape[dim], s)[1])
        elif not -shape[dim] <= s < shape[dim]:
            raise ValueError("an index out of range")
        dim += 1
    return tuple(out)
