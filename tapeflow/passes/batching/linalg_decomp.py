"""Batching rules of the decompositions and matrix functions: they map over leading dims."""
from .registry import batching


@batching("Qr", "Svd", "SelfAdjointEigV2", "Lu", "MatrixSolveLs")
def leading_dims(b, node, inputs, batched):
    """The batch dim is one more leading dim. Empty outputs (an SVD's u and v without
    vectors, shape [0]) stay unbatched; MatrixSolveLs's operands need the same leading dims."""
    if node.op == "MatrixSolveLs":
        inputs = [b.broadcast(v, f, w.aval.shape) for v, f, w in zip(inputs, batched, node.inputs)]
    outs = b.emit(node.op, inputs, node.attrs)
    return [(v, v.aval.shape != (0,)) for v in outs]


@batching("MatrixExponential", "MatrixSquareRoot")
def matrix_function(b, node, inputs, batched):
    return [(b.emit1(node.op, inputs, node.attrs), True)]


@batching("TridiagonalSolve")
def tridiagonal_solve(b, node, inputs, batched):
    """Both operands need the same leading dims: the unbatched one is broadcast."""
    args = [b.broadcast(v, f, w.aval.shape) for v, f, w in zip(inputs, batched, node.inputs)]
    return [(b.emit1(node.op, args, node.attrs), True)]
