"""Batching rules of linear algebra: the batch dim becomes one more matrix batch dim."""
from ...ir.defs.linalg import LETTERS, parse_einsum
from . import batching


@batching("MatMul", "MatrixSolve", "MatrixInverse", "MatrixDeterminant", "Cholesky")
def matrix_batch(b, node, inputs, batched):
    """These ops already map over leading dims (MatMul broadcasts them): align the ranks.

    MatrixSolve needs equal batch dims, so its unbatched operand is broadcast.
    """
    if node.op == "MatrixSolve":
        args = [b.broadcast(v, f, w.aval.shape) for v, f, w in zip(inputs, batched, node.inputs)]
        return [(b.emit1(node.op, args, node.attrs), True)]
    rank = max(len(w.aval.shape) for w in node.inputs)
    args = [b.align(v, rank) if f else v for v, f in zip(inputs, batched)]
    return [(b.emit1(node.op, args, node.attrs), True)]


@batching("Einsum")
def einsum(b, node, inputs, batched):
    """A fresh label for the batch dim on the batched operands and in front of the output."""
    labels, out, _ = parse_einsum(node.attrs["equation"], [w.aval.shape for w in node.inputs])
    used = set("".join(labels) + out)
    z = next(c for c in LETTERS if c not in used)
    terms = [z + lab if f else lab for lab, f in zip(labels, batched)]
    eq = ",".join(terms) + "->" + z + out
    return [(b.emit1("Einsum", inputs, {"equation": eq}), True)]
