"""Gradient rule of IsotonicRegression (TensorFlow's ``_IsotonicRegressionGrad``): each entry
gets the mean of the output gradient over its segment; the segments have none.

TensorFlow takes the means row by row with ``unsorted_segment_mean`` (a count of segments
known only at run time); here the same means come from the segments' equality matrix
([..., d, d] per row): ``sum_j [s_i == s_j] g_j / sum_j [s_i == s_j]``. Linear in the
gradient, so higher orders follow through it as through TF's.
"""
from ...ops import array as a
from ...ops import math as m
from ...ops import reduce as r
from ...runtime.registry import gradient


def segment_means(g, segments):
    """``g``'s mean over the entries of each row sharing ``segments``' id, at every entry."""
    same = m.cast(m.equal(a.expand_dims(segments, -1), a.expand_dims(segments, -2)), g.dtype)
    sums = r.reduce_sum(m.multiply(same, a.expand_dims(g, -2)), axis=-1)
    return m.truediv(sums, r.reduce_sum(same, axis=-1))


@gradient("IsotonicRegression", outputs=(1,))
def _isotonic(op, g_output, g_segments):
    if not op.out_avals[1].shape:
        return [g_output]       # a scalar is its own segment
    return [segment_means(g_output, op.outputs[1])]
