"""Shape arithmetic shared by op definitions: broadcasting, axes, reductions.

Dimensions are ints, or None where unknown (traced with an input signature).
Every failure raises ``InferError`` with a message naming the shapes.
"""
from ..errors import InferError


def broadcast_shapes(*shapes):
    """NumPy/TensorFlow broadcasting of several shapes. Sizes are compared with ``==`` one
    pair at a time, never hashed: codegen's symbolic sizes record each comparison
    (codegen/shape_free.py), and a size only the run knows cannot be hashed."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        known, unknown = None, False
        for s in shapes:
            if i - rank + len(s) < 0:
                continue
            d = s[i - rank + len(s)]
            if d is None:
                unknown = True
            elif d == 1:
                continue
            elif known is None:
                known = d
            elif d != known:
                raise InferError("Incompatible shapes: " + " vs. ".join(str(tuple(s)) for s in shapes))
        out.append(known if known is not None else (None if unknown else 1))
    return tuple(out)


def normalize_axis(axis, rank, what="axis"):
    """A non-negative axis for an int in [-rank, rank)."""
    if not isinstance(axis, int) or not -rank <= axis < max(rank, 1):
        raise InferError(f"{what} {axis!r} is out of range for a tensor of rank {rank}")
    return axis % rank if rank else 0


def normalize_axes(axis, rank):
    """Sorted tuple of distinct non-negative axes; None means all axes."""
    if axis is None:
        return tuple(range(rank))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = sorted({normalize_axis(a, rank) for a in axes}) if rank else []
    if rank == 0 and any(a not in (0, -1) for a in axes):
        raise InferError(f"axis {axis!r} is out of range for a scalar")
    return tuple(out)


def reduced_shape(shape, axes, keepdims):
    """Shape after reducing ``axes`` (already normalized)."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def num_elements(shape):
    n = 1
    for d in shape:
        if d is None:
            return None
        n *= d
    return n


def dims_compatible(a, b):
    """Two dims that may be the same size: equal, or one unknown (None)."""
    return a is None or b is None or a == b


def shapes_compatible(a, b):
    """Two shapes of one rank whose dims are pairwise compatible (see ``dims_compatible``)."""
    return len(a) == len(b) and all(dims_compatible(x, y) for x, y in zip(a, b))


def merge_shapes(a, b):
    """The most specific shape compatible with both (known dims win over None)."""
    return tuple(y if x is None else x for x, y in zip(a, b, strict=True))
