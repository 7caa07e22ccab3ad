"""Gradient rules of the indexing ops, TensorFlow's ``array_grad.py`` op for op (GatherNd's
gradient is dense: a ScatterNd into the params' shape)."""
from ...ops import creation
from ...ops import indexing as ix
from ...ops import math as m
from ...runtime.registry import gradient


@gradient("ReverseV2")
def _reverse(op, g):
    return [ix.reverse(g, op.attrs["axis"])]


@gradient("Roll")
def _roll(op, g):
    return [ix.roll(g, [-s for s in op.attrs["shift"]], op.attrs["axis"])]


@gradient("GatherNd", inputs=(1,))
def _gather_nd(op, g):
    return [ix.scatter_nd(op.inputs[1], g, op.in_avals[0].shape), None]


@gradient("ScatterNd", inputs=(0,))
def _scatter_nd(op, g):
    return [None, ix.gather_nd(g, op.inputs[0])]


@gradient("TensorScatterUpdate", inputs=(1, 2))
def _tensor_scatter_update(op, g):
    indices, updates = op.inputs[1], op.inputs[2]
    tensor_grad = ix.tensor_scatter_nd_update(m.identity(g), indices, creation.zeros_like(updates))
    return [tensor_grad, None, ix.gather_nd(g, indices)]


@gradient("TensorScatterAdd", inputs=(1,))
def _tensor_scatter_add(op, g):
    return [m.identity(g), None, ix.gather_nd(g, op.inputs[1])]


@gradient("TensorScatterSub", inputs=(1,))
def _tensor_scatter_sub(op, g):
    return [m.identity(g), None, m.negative(ix.gather_nd(g, op.inputs[1]))]


def _tensor_scatter_min_max(op, g):
    """Ties share the gradient between the tensor's entry and the updates that equal it."""
    x, indices, y = op.inputs
    output = op.outputs[0]
    x_indicators = m.cast(m.equal(x, output), g.dtype)
    y_indicators = m.cast(m.equal(y, ix.gather_nd(output, indices)), g.dtype)
    ys_indicators = ix.scatter_nd(indices, y_indicators, op.in_avals[0].shape)
    indicators = m.add(x_indicators, ys_indicators)
    x_grad = m.divide(m.multiply(g, x_indicators), indicators)
    y_grad = m.multiply(ix.gather_nd(m.divide(g, indicators), indices), y_indicators)
    return [x_grad, None, y_grad]


gradient("TensorScatterMax", inputs=(0, 1, 2), outputs=(0,))(_tensor_scatter_min_max)
gradient("TensorScatterMin", inputs=(0, 1, 2), outputs=(0,))(_tensor_scatter_min_max)
