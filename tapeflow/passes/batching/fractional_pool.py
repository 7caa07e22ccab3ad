"""Batching rules of fractional pooling: the sequences depend on the sizes and seeds only, so
a batch of inputs folds into N (one op, the same cells for every row, as each row's op would
draw with the same seeds); the gradient ops fold too, unless their sequences are batched."""
from .conv import _fold, _known, _unfold
from .registry import batching


@batching("FractionalMaxPool", "FractionalAvgPool")
def _pool(b, node, inputs, batched):
    shape = tuple(node.inputs[0].aval.shape)
    y, row, col = b.emit(node.op, [_fold(b, inputs[0], batched[0], shape)], dict(node.attrs))
    return [(_unfold(b, y), True), (row, False), (col, False)]


@batching("FractionalMaxPoolGrad", "FractionalAvgPoolGrad")
def _pool_grad(b, node, inputs, batched):
    if any(batched[-2:]):
        return None
    shapes = [tuple(v.aval.shape) for v in node.inputs[:-2]]
    if not all(_known(s) for s in shapes):
        return None
    args = [_fold(b, v, f, s) for v, f, s in zip(inputs[:-2], batched[:-2], shapes)]
    y = b.emit1(node.op, args + list(inputs[-2:]), dict(node.attrs))
    return [(_unfold(b, y), True)]
