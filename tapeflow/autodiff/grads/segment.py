"""Gradient rules of the segment max, min and product (TensorFlow's math_grad.py:
``_SegmentMinOrMaxGrad``, ``_UnsortedSegmentMinOrMaxGrad``, ``_SegmentProdGrad``,
``_UnsortedSegmentProdGrad``, op for op). Ties share a segment's gradient equally; a product's
gradient is the product of the others, 0 in a segment holding two zeros."""
from ...ir import dtypes as D
from ...ops import array as a
from ...ops import dims
from ...ops import math as m
from ...ops.creation import ones_like, zeros_like
from ...ops.reduce import unsorted_segment_sum
from ...ops.segment import sorted_segment, unsorted_segment
from ...runtime.registry import gradient


def _num(op):
    return op.attrs["num_segments"]


def gather_drop_negatives(params, ids, ids_shape, zero_clipped=None, is_positive=None):
    """TF's _GatherDropNegatives: ``params`` gathered at ``ids``, zero where an id is negative;
    also the clipped ids and the broadcast mask, for reuse."""
    if zero_clipped is None:
        zero_clipped = m.maximum(ids, zeros_like(ids))
    gathered = a.gather(params, zero_clipped)
    if is_positive is None:
        extra = len(gathered.shape) - len(ids_shape)
        shape = dims.pack([dims.dim(ids_shape, k) for k in range(len(ids_shape))] + [1] * extra)
        is_positive = a.reshape(m.greater_equal(ids, zeros_like(ids)), shape)
        is_positive = m.logical_and(is_positive, ones_like(gathered, dtype=D.bool_))
    return m.where(is_positive, gathered, zeros_like(gathered)), zero_clipped, is_positive


@gradient("SegmentMax", inputs=(0, 1), outputs=(0,))
@gradient("SegmentMin", inputs=(0, 1), outputs=(0,))
def _segment_min_or_max(op, g):
    data, ids = op.inputs
    zeros = zeros_like(data)
    gathered_outputs = a.gather(op.outputs[0], ids)
    is_selected = m.equal(data, gathered_outputs)
    num_selected = unsorted_segment_sum(m.cast(is_selected, g.dtype), ids, _num(op))
    weighted = m.divide(g, num_selected)
    gathered = a.gather(weighted, ids)
    return [m.where(is_selected, gathered, zeros), None]


@gradient("UnsortedSegmentMax", inputs=(0, 1), outputs=(0,))
@gradient("UnsortedSegmentMin", inputs=(0, 1), outputs=(0,))
def _unsorted_segment_min_or_max(op, g):
    data, ids = op.inputs
    ids_shape = op.in_avals[1].shape
    gathered_outputs, clipped, is_positive = gather_drop_negatives(op.outputs[0], ids, ids_shape)
    is_selected = m.logical_and(m.equal(data, gathered_outputs), is_positive)
    num_selected = unsorted_segment_sum(m.cast(is_selected, g.dtype), ids, _num(op))
    weighted = m.divide(g, num_selected)
    gathered, _, _ = gather_drop_negatives(weighted, None, ids_shape, clipped, is_positive)
    return [m.where(is_selected, gathered, zeros_like(gathered)), None]


@gradient("SegmentProd", inputs=(0, 1), outputs=(0,))
def _segment_prod(op, g):
    data, ids = op.inputs
    is_zero = m.equal(data, zeros_like(data))
    num_zeros = unsorted_segment_sum(m.cast(is_zero, D.int32), ids, _num(op))
    g = m.where(m.greater(num_zeros, m.constant_like(1, num_zeros)), zeros_like(g), g)
    non_zero_data = m.where(is_zero, ones_like(data), data)
    non_zero_prod = sorted_segment("SegmentProd", non_zero_data, ids, _num(op))
    gathered_prod = a.gather(op.outputs[0], ids)
    gathered_non_zero_prod = a.gather(non_zero_prod, ids)
    prod_divided_by_el = m.truediv(gathered_prod, non_zero_data)
    partial = m.where(is_zero, gathered_non_zero_prod, prod_divided_by_el)
    return [m.multiply(a.gather(g, ids), partial), None]


@gradient("UnsortedSegmentProd", inputs=(0, 1), outputs=(0,))
def _unsorted_segment_prod(op, g):
    data, ids = op.inputs
    is_zero = m.equal(data, zeros_like(data))
    num_zeros = unsorted_segment_sum(m.cast(is_zero, D.int32), ids, _num(op))
    g = m.where(m.greater(num_zeros, m.constant_like(1, num_zeros)), zeros_like(g), g)
    non_zero_data = m.where(is_zero, ones_like(data), data)
    non_zero_prod = unsorted_segment("UnsortedSegmentProd", non_zero_data, ids, _num(op))
    clipped = m.maximum(ids, zeros_like(ids))
    gathered_prod = a.gather(op.outputs[0], clipped)
    gathered_non_zero_prod = a.gather(non_zero_prod, clipped)
    prod_divided_by_el = m.truediv(gathered_prod, data)      # may hold nan/inf, as in TF
    partial = m.where(is_zero, gathered_non_zero_prod, prod_divided_by_el)
    gathered_g = gather_drop_negatives(g, ids, op.in_avals[1].shape, clipped)[0]
    return [m.multiply(gathered_g, partial), None]
