"""Gradient rules of the reductions (TensorFlow's math_grad.py, dense)."""
import numpy as np

from ...ir import dtypes as D
from ...ir.defs.reduce import reduction_axes
from ...ir.shapes import reduced_shape
from ...ops import array as a
from ...ops import dims
from ...ops import math as m
from ...ops import reduce as r
from ...runtime.registry import gradient, not_differentiable
from ...runtime.tensor import wrap

not_differentiable("Any", "All", "ArgMax", "ArgMin")


def _axes(op):
    return reduction_axes(op.attrs.get("axis"), len(op.in_avals[0].shape))


def keep_dims(t, op):
    """``t`` (shaped like the op's output) reshaped to the keepdims shape."""
    if op.attrs.get("keepdims", False):
        return t
    shape = op.in_avals[0].shape
    if None in shape:
        return a.reshape(t, dims.keep_dims(shape, _axes(op)))
    return a.reshape(t, reduced_shape(shape, _axes(op), True))


def expand_to(g, op):
    """Broadcast the reduced gradient ``g`` back to the input's shape."""
    return a.broadcast_to(keep_dims(g, op), op.in_avals[0].shape)


@gradient("Sum")
def _sum(op, g):
    return [expand_to(g, op)]


@gradient("Mean")
def _mean(op, g):
    """Sum's gradient over the count; ``in // max(out, 1)`` as TF (an empty input divides by 0).
    Counts of unknown dims are computed at run time, as TF's ``_safe_shape_div``."""
    n_in, n_out = (dims.num_elements(av.shape) for av in (op.in_avals[0], op.out_avals[0]))
    if isinstance(n_in, int) and isinstance(n_out, int):
        return [m.truediv(expand_to(g, op), m.constant_like(n_in // max(n_out, 1), g))]
    if isinstance(n_out, int):
        factor = n_in if n_out <= 1 else m.floordiv(n_in, n_out)
    else:
        factor = m.floordiv(n_in, m.maximum(n_out, 1))
    return [m.truediv(expand_to(g, op), m.cast(factor, g.dtype))]


@gradient("Max", inputs=(0,), outputs=(0,))
@gradient("Min", inputs=(0,), outputs=(0,))
def _min_or_max(op, g):
    """TF's _MinOrMaxGrad: ties share the gradient equally."""
    y, g = keep_dims(op.outputs[0], op), keep_dims(g, op)
    indicators = m.cast(m.equal(y, op.inputs[0]), g.dtype)
    num_selected = r.reduce_sum(indicators, _axes(op), keepdims=True)
    return [m.multiply(m.truediv(indicators, num_selected), g)]


@gradient("Prod", inputs=(0,))
def _prod(op, g):
    """Each element's gradient is the product of the others, computed without division.

    Correct with zeros in the input and differentiable again (TF uses exclusive
    cumprods instead). The reduced axes are moved last and flattened to ``n``;
    row ``i`` of an ``[..., n, n]`` tensor is the input with element ``i`` replaced
    by 1, and its product is the product of the others. This takes O(n^2) memory
    per kept position (each further order of differentiation multiplies by n).
    """
    x = op.inputs[0]
    shape = op.in_avals[0].shape
    axes = _axes(op)
    kept = [i for i in range(len(shape)) if i not in axes]
    perm = kept + list(axes)
    # sizes are ints, or int32 scalar tensors where only the run time knows them (a function
    # traced with None dims): the same ops then take their shapes at run time
    lead = [dims.dim(shape, i) for i in kept]
    n = dims.num_elements(dims.pack([dims.dim(shape, i) for i in axes]))
    flat = a.reshape(a.transpose(x, perm), dims.pack(lead + [n]))
    rows = a.broadcast_to(a.expand_dims(flat, -2), dims.pack(lead + [n, n]))
    one = wrap(np.ones((), x.dtype.np))
    others = r.reduce_prod(m.where(dims.eye(n, D.bool_), one, rows), axis=-1)
    others = a.reshape(others, dims.pack([dims.dim(shape, i) for i in perm]))
    return [m.multiply(expand_to(g, op), a.transpose(others, list(np.argsort(perm))))]


@gradient("UnsortedSegmentSum", inputs=(1,))
@gradient("DynamicUnsortedSegmentSum", inputs=(1,))
def _unsorted_segment_sum(op, g):
    """TF's _GatherDropNegatives: gather the gradient, zero where an id was negative."""
    ids = op.inputs[1]
    clipped = m.maximum(ids, m.constant_like(0, ids))
    gathered = a.gather(g, clipped)
    extra = len(gathered.shape) - len(ids.shape)
    ids_shape = op.in_avals[1].shape
    is_positive = a.reshape(m.greater_equal(ids, m.constant_like(0, ids)),
                            dims.pack([dims.dim(ids_shape, k) for k in range(len(ids_shape))] +
                                      [1] * extra))
    return [m.where(is_positive, gathered, wrap(np.zeros((), g.dtype.np)))] + \
        [None] * (len(op.in_avals) - 1)
