"""Gradient rules of the cumulative ops, TensorFlow's ``math_grad.py`` op for op."""
import numpy as np

from ...ops import math as m
from ...ops import scan as sc
from ...ops import special as s
from ...runtime.registry import gradient


def _attrs(op):
    return op.attrs["axis"], op.attrs["exclusive"], op.attrs["reverse"]


@gradient("Cumsum")
def _cumsum(op, g):
    axis, exclusive, reverse = _attrs(op)
    return [sc.cumsum(g, axis, exclusive=exclusive, reverse=not reverse)]


@gradient("Cumprod", inputs=(0,))
def _cumprod(op, g):
    """Through div_no_nan: where x is 0 the gradient is 0 (TF's rule, not the true one)."""
    axis, exclusive, reverse = _attrs(op)
    x = op.inputs[0]
    prod = sc.cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = sc.cumsum(m.multiply(prod, g), axis, exclusive=exclusive, reverse=not reverse)
    return [s.divide_no_nan(out, x)]


@gradient("CumulativeLogsumexp", inputs=(0,), outputs=(0,))
def _cumulative_logsumexp(op, g):
    """The incoming gradient split by sign, each part scanned in log space (TF's rule)."""
    axis, exclusive, reverse = _attrs(op)
    x, out = op.inputs[0], op.outputs[0]
    lowest = m.constant_like(np.finfo(g.dtype.np).min, g)
    log_pos = m.where(m.greater(g, m.constant_like(0, g)), m.log(g), lowest)
    log_neg = m.where(m.less(g, m.constant_like(0, g)), m.log(m.negative(g)), lowest)

    def part(log_g):
        scanned = sc.cumulative_logsumexp(m.subtract(log_g, out), axis=axis,
                                          reverse=not reverse, exclusive=exclusive)
        return m.exp(m.add(scanned, x))
    return [m.subtract(part(log_pos), part(log_neg))]
