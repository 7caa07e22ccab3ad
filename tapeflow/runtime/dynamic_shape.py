"""A shape with dims known only when the program runs, inside a function traced with ``None``
dims: the static dims (``None`` where unknown) and the int32 tensor that holds the sizes.

A tape inside such a trace records its ops' avals with these shapes (dispatch's ``_record``),
so a gradient rule that asks ``op.in_avals[0].shape`` gets the sizes as a tensor of the
forward graph: reshapes, broadcasts and zeros of that shape (``ops.dims``) read the sizes at
run time, and only the small int vector (never the tensor itself) becomes a residual.
It equals the tuple of its dims, so code that only compares shapes sees no difference.
"""


class DynamicShape(tuple):
    """The dims (ints, None where unknown) plus ``tensor``: their int32 value at run time."""

    def __new__(cls, dims, tensor, fits=False):
        obj = super().__new__(cls, dims)
        obj.tensor = tensor
        # an input of an op whose outputs have its shape at run time (a unary elementwise
        # op): a gradient shaped like the output needs no summing back (backprop.unbroadcast)
        obj.fits = fits
        return obj

    def __repr__(self):
        return f"DynamicShape({tuple(self)})"

    def __reduce__(self):  # copies and pickles keep the static dims only
        return tuple, (tuple(self),)


def is_static(shape):
    """Whether every dim of ``shape`` is known while tracing."""
    return None not in tuple(shape)


__all__ = ["DynamicShape", "is_static"]
