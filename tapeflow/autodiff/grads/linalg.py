"""Gradient rules of the linear algebra ops (TF's math_grad.py / linalg_grad.py)."""
import numpy as np

from ...ir.defs.linalg import LETTERS, parse_einsum
from ...ops import array as a
from ...ops import creation, dims
from ...ops import linalg as la
from ...ops import math as m
from ...ops import reduce
from ...runtime.dispatch import apply
from ...runtime.registry import gradient
from ...runtime.tensor import wrap


@gradient("MatMul", inputs=(0, 1))
def _matmul(op, g):
    """TF's _MatMulGrad / _BatchMatMulV2Grad; the tape sums broadcast batch dims back."""
    x, y = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    gx = gy = None
    if op.wants[0]:
        if not ta:
            gx = la.matmul(g, y, transpose_b=not tb)
        elif not tb:
            gx = la.matmul(y, g, transpose_b=True)
        else:
            gx = la.matmul(y, g, transpose_a=True, transpose_b=True)
    if op.wants[1]:
        if not tb:
            gy = la.matmul(x, g, transpose_a=not ta)
        elif not ta:
            gy = la.matmul(g, x, transpose_a=True)
        else:
            gy = la.matmul(g, x, transpose_a=True, transpose_b=True)
    return [gx, gy]


def _einsum_vjp(g, out_labels, others, target, sizes, dtype, target_shape=None):
    """einsum(g, *others) into ``target``'s labels.

    Labels only ``target`` has (summed out by the op) come back through a ones vector;
    a repeated label (a diagonal) is renamed and tied to the original by an identity.
    """
    used = set(out_labels + target).union(*(lab for _, lab in others))
    fresh = iter(c for c in LETTERS if c not in used)
    operands, subs = [g] + [t for t, _ in others], [out_labels] + [lab for _, lab in others]
    result, seen = "", set()
    for c in target:
        if c in seen:
            d = next(fresh)
            size = sizes[c] if sizes[c] is not None else dims.dim(target_shape, target.index(c))
            operands.append(dims.eye(size, dtype))   # of run-time size in a None-dim trace
            subs.append(c + d)
            result += d
        else:
            seen.add(c)
            result += c
    present = set("".join(subs))
    for c in dict.fromkeys(target):
        if c not in present:   # summed out by the op: back through ones of its size
            size = sizes[c] if sizes[c] is not None else dims.dim(target_shape, target.index(c))
            operands.append(creation.ones(dims.pack([size]), dtype))
            subs.append(c)
    return apply("Einsum", operands, {"equation": ",".join(subs) + "->" + result})


@gradient("Einsum", inputs="all")
def _einsum(op, g):
    """For each operand: the output gradient contracted with all the other operands."""
    labels, out, sizes = parse_einsum(op.attrs["equation"], [av.shape for av in op.in_avals])
    terms = op.attrs["equation"].split("->")[0].split(",")
    if sum("..." in t for t in terms) > 1 and any(None in av.shape for av in op.in_avals):
        # which '...' dims broadcast (a 1 against a size) only the run time knows
        return _einsum_ellipsis(op, g, terms)
    grads = []
    for i, target in enumerate(labels):
        if not op.wants[i]:
            grads.append(None)
            continue
        others = [(op.inputs[j], labels[j]) for j in range(len(labels)) if j != i]
        grads.append(_einsum_vjp(g, out, others, target, sizes, op.in_avals[i].dtype,
                                 op.in_avals[i].shape))
    return grads


def _tokens(term):
    """A term's labels as a list, '...' one token."""
    if "..." not in term:
        return list(term)
    pre, post = term.split("...")
    return list(pre) + ["..."] + list(post)


def _einsum_ellipsis(op, g, terms):
    """Einsum's gradient where '...' dims of several operands have sizes only the run time
    knows, so whether one broadcasts against another (a 1 against a size) is not decided
    while tracing. Each operand's gradient keeps '...' in its equation (NumPy's einsum
    broadcasts it at run time), with '...' moved first, is summed back to the operand's
    '...' dims (``sum_to_shape``, TensorFlow's BroadcastGradientArgs) and transposed into
    place. Repeated and summed-out labels as ``_einsum_vjp``."""
    equation = op.attrs["equation"]
    toks = [_tokens(t) for t in terms]
    if "->" in equation:
        out = _tokens(equation.split("->")[1])
    else:   # implicit: '...' then the labels used once, sorted (NumPy, TensorFlow)
        letters = "".join(terms).replace(".", "")
        out = ["..."] + sorted(c for c in set(letters) if letters.count(c) == 1)
    grads = []
    for i, target in enumerate(toks):
        if not op.wants[i]:
            grads.append(None)
            continue
        others = [(op.inputs[j], toks[j]) for j in range(len(toks)) if j != i]
        grads.append(_ellipsis_vjp(g, out, others, target, op.in_avals[i]))
    return grads


def _ellipsis_vjp(g, out, others, target, aval):
    shape, dtype = aval.shape, aval.dtype
    rank = len(shape) - (len(target) - ("..." in target))   # the dims '...' stands for
    where, k = {}, 0      # token -> the axes of the operand it covers
    for t in target:
        n = rank if t == "..." else 1
        where.setdefault(t, list(range(k, k + n)))
        k += n
    size = {t: dims.dim(shape, ax[0]) for t, ax in where.items() if t != "..."}
    used = set(out).union(target, *(lab for _, lab in others))
    fresh = iter(c for c in LETTERS if c not in used)
    operands = [g] + [x for x, _ in others]
    subs = ["".join(out)] + ["".join(lab) for _, lab in others]
    result, seen = [], set()
    for t in target:
        if t in seen:     # a diagonal: renamed, tied to the first by an identity
            d = next(fresh)
            operands.append(dims.eye(size[t], dtype))
            subs.append(t + d)
            result.append(d)
        else:
            seen.add(t)
            result.append(t)
    # '...' counts as present only in the output gradient, whose '...' covers the operand's:
    # if the op summed it out, ones of the operand's '...' dims bring its broadcast back
    present = set("".join(subs).replace("...", "")) | ({"..."} if "..." in out else set())
    for t in dict.fromkeys(target):
        if t not in present:   # summed out by the op: back through ones of its size
            axes = where[t]
            operands.append(creation.ones(dims.pack([dims.dim(shape, ax) for ax in axes]), dtype))
            subs.append(t)
    lead = ["..."] if "..." in result else []
    rest = [t for t in result if t != "..."]
    grad = apply("Einsum", operands,
                 {"equation": ",".join(subs) + "->" + "".join(lead + rest)})
    if not lead:
        return grad
    order = where["..."] + [ax for ax in range(len(shape)) if ax not in where["..."]]
    grad = reduce.sum_to_shape(grad, dims.pack([dims.dim(shape, ax) for ax in order]))
    return a.transpose(grad, list(np.argsort(order)))


@gradient("MatrixSolve", inputs=(0,), outputs=(0,))
def _solve(op, g):
    """TF's _MatrixSolveGrad: gb solves the adjoint system; ga = -gb x^T (reads a and the output x)."""
    matrix, x = op.inputs[0], op.outputs[0]
    adjoint = op.attrs["adjoint"]
    grad_rhs = la.solve(matrix, g, adjoint=not adjoint)
    if not op.wants[0]:
        return [None, grad_rhs]
    if adjoint:
        grad_matrix = m.negative(la.matmul(x, grad_rhs, transpose_b=True))
    else:
        grad_matrix = m.negative(la.matmul(grad_rhs, x, transpose_b=True))
    return [grad_matrix, grad_rhs]


@gradient("MatrixInverse", outputs=(0,))
def _inverse(op, g):
    """TF's _MatrixInverseGrad: -Ainv^T g Ainv^T, from the output alone."""
    ainv = op.outputs[0]
    adj = op.attrs["adjoint"]
    inner = la.matmul(g, ainv, transpose_a=adj, transpose_b=not adj)
    return [m.negative(la.matmul(ainv, inner, transpose_a=not adj))]


@gradient("MatrixDeterminant", inputs=(0,), outputs=(0,))
def _determinant(op, g):
    """TF's _MatrixDeterminantGrad: g * det * inv(A)^T."""
    matrix, det = op.inputs[0], op.outputs[0]
    inv_t = la.inv(matrix, adjoint=True)
    multipliers = a.expand_dims(a.expand_dims(m.multiply(g, det), -1), -1)  # TF: reshape to [..., 1, 1]
    return [m.multiply(multipliers, inv_t)]


@gradient("Cholesky", outputs=(0,))
def _cholesky(op, g):
    """TF's _CholeskyGrad, reading only L: ``l_inverse`` from a triangular solve against the
    identity, ``middle`` = L^T g kept to its lower triangle with the diagonal halved,
    ``l_inverse^T middle l_inverse`` symmetrized. Compiled, every product here has a
    triangular operand (codegen/templates/linalg.py ``triangle``): BLAS trmm, and the solve
    against the identity an inversion."""
    chol = op.outputs[0]
    n = op.out_avals[0].shape[-1]
    dtype = op.out_avals[0].dtype.np
    l_inverse = la.triangular_solve(chol, wrap(np.eye(n, dtype=dtype)))
    middle = la.matmul(chol, g, transpose_a=True)
    middle = m.multiply(middle, wrap((np.tril(np.ones((n, n))) - 0.5 * np.eye(n)).astype(dtype)))
    grad = la.matmul(la.matmul(l_inverse, middle, transpose_a=True), l_inverse)
    grad = m.add(grad, la.matrix_transpose(grad))
    return [m.multiply(grad, m.constant_like(0.5, grad))]


@gradient("MatrixTriangularSolve", inputs=(0,), outputs=(0,))
def _triangular_solve(op, g):
    """TF's _MatrixTriangularSolveGrad: the adjoint solve, and -grad_b c^T kept to the triangle
    the op reads (the tape sums broadcast batch dims back)."""
    matrix, c = op.inputs[0], op.outputs[0]
    lower, adjoint = op.attrs["lower"], op.attrs["adjoint"]
    grad_b = la.triangular_solve(matrix, g, lower=lower, adjoint=not adjoint)
    if not op.wants[0]:
        return [None, grad_b]
    # -(x y^T) as (-x) y^T: the same numbers (negation is exact), negating the narrow operand
    if adjoint:
        grad_a = la.matmul(c, m.negative(grad_b), transpose_b=True)
    else:
        grad_a = la.matmul(m.negative(grad_b), c, transpose_b=True)
    grad_a = la.band_part(grad_a, -1, 0) if lower else la.band_part(grad_a, 0, -1)
    return [grad_a, grad_b]


@gradient("MatrixBandPart")
def _band_part(op, g):
    return [la.band_part(g, op.attrs["num_lower"], op.attrs["num_upper"])]


@gradient("MatrixDiagPartV3", inputs=(0,))
def _diag_part(op, g):
    """TF's _MatrixDiagPartV3Grad: the gradient on the same diagonals of a zero matrix, made
    by matrix_diag where the matrix size is known (the input is not read), else set on
    zeros_like(input)."""
    rows, cols = op.in_avals[0].shape[-2:]
    if rows is not None and cols is not None:
        return [la.diag(g, k=op.attrs["k"], num_rows=rows, num_cols=cols, align=op.attrs["align"])]
    zeros = creation.zeros_like(op.inputs[0])
    return [la.set_diag(zeros, g, k=op.attrs["k"], align=op.attrs["align"])]


@gradient("MatrixDiagV3")
def _matrix_diag(op, g):
    """TF's _MatrixDiagV3Grad: the diagonals of the gradient."""
    return [la.diag_part(g, k=op.attrs["k"], align=op.attrs["align"])]


@gradient("MatrixSetDiagV3", inputs=(1,))
def _set_diag(op, g):
    """TF's _MatrixSetDiagGradV3: the gradient with the diagonals zeroed, and its diagonals."""
    k, align = op.attrs["k"], op.attrs["align"]
    grad_diag = la.diag_part(g, k=k, align=align)
    grad_input = la.set_diag(g, creation.zeros_like(op.inputs[1]), k=k, align=align)
    return [grad_input, grad_diag]
from . import linalg_decomp  # noqa: E402,F401  (rules of the decompositions)
