"""Batching rules of linear algebra: the batch dim becomes one more matrix batch dim."""
from ...ir.defs.linalg import LETTERS, parse_einsum
from .registry import batching


@batching("MatMul", "MatrixSolve", "MatrixInverse", "MatrixDeterminant", "Cholesky")
def matrix_batch(b, node, inputs, batched):
    """These ops already map over leading dims (MatMul broadcasts them): align the ranks.

    MatrixSolve needs equal batch dims, so its unbatched operand is broadcast.
    """
    if node.op == "MatrixSolve":
        args = [b.broadcast(v, f, w.aval.shape) for v, f, w in zip(inputs, batched, node.inputs)]
        return [(b.emit1(node.op, args, node.attrs), True)]
    if node.op == "MatMul" and batched == [False, True] and len(node.inputs[0].aval.shape) == 2 \
            and len(node.inputs[1].aval.shape) == 2:
        return _matrix_times_batch(b, node, *inputs)
    rank = max(len(w.aval.shape) for w in node.inputs)
    args = [b.align(v, rank) if f else v for v, f in zip(inputs, batched)]
    return [(b.emit1(node.op, args, node.attrs), True)]


def _matrix_times_batch(b, node, a, x):
    """A @ X[j] for every j as one GEMM: (X as [B*n, k]) @ A^T, i.e. the batch moves into rows."""
    ta, tx = node.attrs.get("transpose_a", False), node.attrs.get("transpose_b", False)
    size = b.size
    m, n = node.outputs[0].aval.shape
    k = node.inputs[0].aval.shape[0 if ta else 1]
    # X[j] as rows [n, k]: X[j] is [k, n] (or [n, k] when transposed)
    rows = x if tx else (b.reshape(x, (size, k)) if n == 1 else b.emit1("Transpose", [x], {"perm": (0, 2, 1)}))
    rows = b.reshape(rows, (size * n, k))
    out = b.emit1("MatMul", [rows, a], {"transpose_a": False, "transpose_b": not ta})   # [B*n, m]
    out = b.reshape(out, (size, n, m))
    if n != 1:
        out = b.emit1("Transpose", [out], {"perm": (0, 2, 1)})
    return [(b.reshape(out, (size, m, n)), True)]


@batching("Einsum")
def einsum(b, node, inputs, batched):
    """A fresh label for the batch dim on the batched operands and in front of the output."""
    labels, out, _ = parse_einsum(node.attrs["equation"], [w.aval.shape for w in node.inputs])
    used = set("".join(labels) + out)
    z = next(c for c in LETTERS if c not in used)
    terms = [z + lab if f else lab for lab, f in zip(labels, batched)]
    eq = ",".join(terms) + "->" + z + out
    return [(b.emit1("Einsum", inputs, {"equation": eq}), True)]


@batching("MatrixTriangularSolve")
def triangular_solve(b, node, inputs, batched):
    """Batch dims broadcast, as in MatMul: align the batched operand's rank."""
    rank = max(len(w.aval.shape) for w in node.inputs)
    args = [b.align(v, rank) if f else v for v, f in zip(inputs, batched)]
    return [(b.emit1(node.op, args, node.attrs), True)]


@batching("MatrixBandPart", "MatrixDiagPartV3", "MatrixDiagV3", "LogMatrixDeterminant")
def leading_dims(b, node, inputs, batched):
    """Ops mapping over every leading dim: the batch dim is one more (all outputs batched)."""
    return [(v, True) for v in b.emit(node.op, inputs, node.attrs)]


@batching("MatrixSetDiagV3")
def set_diag(b, node, inputs, batched):
    """Both operands need the same leading dims: the unbatched one is broadcast."""
    args = [b.broadcast(v, f, w.aval.shape) for v, f, w in zip(inputs, batched, node.inputs)]
    return [(b.emit1(node.op, args, node.attrs), True)]


from . import linalg_decomp  # noqa: E402,F401  (rules of the decompositions)
