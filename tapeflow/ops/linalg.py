"""Linear algebra: ``tapeflow.linalg.*`` and ``tapeflow.matmul``/``einsum``/``tensordot``/``norm``.

Primitives (MatMul, Einsum, MatrixSolve, MatrixInverse, MatrixDeterminant, Cholesky)
go through ``apply``; the rest are composites built the way TensorFlow builds them,
so their gradients touch the same tensors.
"""
from __future__ import annotations

import collections

import numpy as np

from ..errors import InvalidArgumentError

from ..ir.defs.linalg import LETTERS
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor, Variable, convert_to_tensor
from . import array, math, reduce
from .creation import eye


def _tensor(x, dtype_hint=None):
    if isinstance(x, Tensor) or hasattr(x, "aval") and not isinstance(x, Variable):
        return x
    return convert_to_tensor(x, dtype_hint=dtype_hint)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, grad_a=False, grad_b=False,
           name=None) -> Tensor:
    """The matrix product ``a @ b``.

    ``a @ b`` over the last two axes; leading (batch) axes broadcast. Real dtypes: adjoint = transpose.

    Args:
      a, b: tensors of rank >= 2 and one float or int dtype.
      transpose_a, transpose_b: use the transpose of ``a`` or ``b``.

    Returns:
      A tensor of shape ``[..., M, N]``.

    >>> tf.matmul(tf.constant([[1.0, 2.0]]), tf.constant([[3.0], [4.0]]))
    <tf.Tensor: shape=(1, 1), dtype=float32, numpy=array([[11.]], dtype=float32)>
    """
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    if output_type is not None:
        raise NotImplementedError("matmul: output_type is not supported")
    return apply("MatMul", [a, b], {"transpose_a": bool(transpose_a or adjoint_a),
                                    "transpose_b": bool(transpose_b or adjoint_b)})


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False,
           name=None) -> Tensor:
    """The matrix-vector product ``a @ b``.

    ``a @ b`` for a (batch of) matrix and vector, as TF: expand, matmul, squeeze.

    >>> tf.linalg.matvec(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([1.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 7.], dtype=float32)>
    """
    b = _tensor(b)
    out = matmul(a, array.expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
    return array.squeeze(out, -1)


def _explicit(equation):
    """TensorFlow's spelling: spaces dropped; implicit output made explicit ('...' first)."""
    eq = equation.replace(" ", "")
    if "->" in eq:
        return eq
    counts = {}
    for c in eq.replace("...", ""):
        if c in LETTERS:
            counts[c] = counts.get(c, 0) + 1
    out = "".join(sorted(c for c, n in counts.items() if n == 1))
    return eq + "->" + ("..." if "..." in eq else "") + out


def einsum(equation, *inputs, **kwargs) -> Tensor:
    """Einstein summation over any number of operands (one Einsum op).

    >>> tf.einsum("ij,j->i", tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([1.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 7.], dtype=float32)>
    """
    hint = next((x.dtype for x in inputs if isinstance(x, (Tensor, Variable, np.ndarray))), None)
    tensors = [_tensor(x, hint) for x in inputs]
    return apply("Einsum", tensors, {"equation": _explicit(equation)})


def _tensordot_axes(a, axes):
    rank = a.ndim
    if isinstance(axes, (int, np.integer)):
        if axes < 0:
            raise ValueError(f"`axes` must be at least 0. Received: {axes}.")
        if axes > rank:
            raise ValueError(f"`axes` must not be larger than the number of dimensions of tensor {a}. "
                             f"Received {axes}, vs tensor dimensions {rank}.")
        return list(range(rank - axes, rank)), list(range(axes))
    if hasattr(axes, "numpy"):
        axes = axes.numpy().tolist()
    if not isinstance(axes, (list, tuple)) or len(axes) != 2:
        raise ValueError(f"`axes` must be an integer or have length 2. Received {axes}.")
    a_axes, b_axes = axes
    if isinstance(a_axes, (int, np.integer)) and isinstance(b_axes, (int, np.integer)):
        a_axes, b_axes = [a_axes], [b_axes]
    a_axes, b_axes = [int(i) for i in a_axes], [int(i) for i in b_axes]
    if len(a_axes) != len(b_axes):
        raise ValueError(f"Different number of contraction axes `a` and `b`, {len(a_axes)} != {len(b_axes)}.")
    return a_axes, b_axes


def _tensordot_reshape(a, axes, flipped=False):
    """TF's helper: transpose the contracted axes to one end, then flatten to a matrix."""
    shape = list(a.shape)
    axes = [i if i >= 0 else i + len(shape) for i in axes]
    free = [i for i in range(len(shape)) if i not in axes]
    free_dims = [shape[i] for i in free]
    prod_free = int(np.prod(free_dims, dtype=np.int64))
    prod_axes = int(np.prod([shape[i] for i in axes], dtype=np.int64))
    perm = axes + free if flipped else free + axes
    new_shape = [prod_axes, prod_free] if flipped else [prod_free, prod_axes]
    if perm != list(range(len(shape))):
        a = array.transpose(a, perm)
    if list(a.shape) != new_shape:
        a = array.reshape(a, new_shape)
    return a, free_dims


def tensordot(a, b, axes, name=None) -> Tensor:
    """The sum of products of ``a`` and ``b`` over ``axes``.

    Contraction over ``axes``, via transpose/reshape/matmul exactly as TensorFlow.

    >>> tf.tensordot(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]), axes=1)
    <tf.Tensor: shape=(), dtype=float32, numpy=11.0>
    """
    a, b = _tensor(a), _tensor(b)
    a_axes, b_axes = _tensordot_axes(a, axes)
    a_mat, a_free = _tensordot_reshape(a, a_axes)
    b_mat, b_free = _tensordot_reshape(b, b_axes, flipped=True)
    product = matmul(a_mat, b_mat)
    if list(product.shape) == a_free + b_free:
        return product
    return array.reshape(product, a_free + b_free)


def matrix_transpose(a, name="matrix_transpose", conjugate=False) -> Tensor:
    """Each matrix of ``a`` transposed (the last two axes swapped).

    Swap the last two axes.

    >>> tf.linalg.matrix_transpose(tf.zeros([5, 2, 3])).shape
    TensorShape([5, 3, 2])
    """
    a = _tensor(a)
    rank = a.ndim
    if rank < 2:
        raise ValueError(f"Argument `a` should be a (batch) matrix with rank >= 2.  Received `a` = {a} "
                         f"with shape: {list(a.shape)}")
    return array.transpose(a, list(range(rank - 2)) + [rank - 1, rank - 2])


def adjoint(matrix, name=None) -> Tensor:
    """The conjugate transpose of each matrix (the transpose: dtypes are real).

    Conjugate transpose; real dtypes only, so just the transpose.

    >>> tf.linalg.adjoint(tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[1., 3.],
           [2., 4.]], dtype=float32)>
    """
    return matrix_transpose(matrix)


def solve(matrix, rhs, adjoint=False, name=None) -> Tensor:
    """``x`` with ``matrix @ x == rhs`` for each (batch of) square matrix.

    >>> tf.linalg.solve(tf.constant([[2.0, 0.0], [0.0, 4.0]]), tf.constant([[2.0], [2.0]]))
    <tf.Tensor: shape=(2, 1), dtype=float32, numpy=
    array([[1. ],
           [0.5]], dtype=float32)>
    """
    return apply("MatrixSolve", [matrix, rhs], {"adjoint": bool(adjoint)})


def inv(input, adjoint=False, name=None) -> Tensor:
    """The inverse of each matrix of ``input`` (an error names a singular one).

    >>> tf.linalg.inv(tf.constant([[2.0, 0.0], [0.0, 4.0]]))
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[0.5 , 0.  ],
           [0.  , 0.25]], dtype=float32)>
    """
    return apply("MatrixInverse", [input], {"adjoint": bool(adjoint)})


def det(input, name=None) -> Tensor:
    """The determinant of each matrix of ``input`` (shape ``[..., M, M]``).

    >>> tf.linalg.det(tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    <tf.Tensor: shape=(), dtype=float32, numpy=-2.0>
    """
    return apply("MatrixDeterminant", [input])


def cholesky(input, name=None) -> Tensor:
    """The lower-triangular Cholesky factor ``L`` (``L @ L^T == input``) of each matrix.

    >>> tf.linalg.cholesky(tf.constant([[4.0, 2.0], [2.0, 5.0]]))
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[2., 0.],
           [1., 2.]], dtype=float32)>
    """
    return apply("Cholesky", [input])


def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT") -> Tensor:
    """The main diagonal of each matrix of ``input`` (TF's MatrixDiagPartV3; its gradient
    places the cotangent on a diagonal of zeros, never reading ``input``).

    >>> tf.linalg.diag_part(tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 4.], dtype=float32)>
    """
    x = _tensor(input)
    return apply("MatrixDiagPartV3", [x], {"k": _pair(k), "padding_value": _number(padding_value),
                                          "align": align})


def trace(x, name=None) -> Tensor:
    """The sum of the main diagonal of each matrix.

    Sum of the main diagonal: ``reduce_sum(diag_part(x), -1)`` as in TF.

    >>> tf.linalg.trace(tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    <tf.Tensor: shape=(), dtype=float32, numpy=5.0>
    """
    return reduce.reduce_sum(diag_part(x), axis=-1)


_VECTOR_NORMS = ("euclidean", 1, 2, np.inf)
_MATRIX_NORMS = ("euclidean", "fro", 1, 2, np.inf)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None) -> Tensor:
    """The vector or matrix norm of ``tensor`` over ``axis``.

    TensorFlow's ``tf.norm``: the same composite of ops (so the same gradients, NaN at 0 included).

    >>> tf.norm(tf.constant([3.0, 4.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=5.0>
    """
    is_matrix = isinstance(axis, (tuple, list)) and len(axis) == 2
    if is_matrix:
        axis = tuple(axis)
        if not all(isinstance(i, int) for i in axis) or axis[0] == axis[1]:
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
        if ord not in _MATRIX_NORMS:
            raise ValueError(f"'ord' must be a supported matrix norm in {_MATRIX_NORMS}, got {ord}")
    else:
        if not (isinstance(axis, int) or axis is None):
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
        if isinstance(ord, str) and ord not in _VECTOR_NORMS or \
                not isinstance(ord, str) and (not np.isreal(ord) or ord <= 0):
            raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
        if axis is not None:
            axis = (axis,)
    x = _tensor(tensor)
    if is_matrix and ord in (2, 2.0):
        result = _matrix_2_norm(x, axis)
    elif ord in ("fro", "euclidean", 2, 2.0):
        result = math.sqrt(reduce.reduce_sum(x * x, axis, keepdims=True))
    else:
        result = math.abs(x)
        if ord == 1:
            result = reduce.reduce_sum(result, None if axis is None else axis[0], keepdims=True)
            if is_matrix:
                result = reduce.reduce_max(result, axis[-1], keepdims=True)
        elif ord == np.inf:
            if is_matrix:
                result = reduce.reduce_sum(result, axis[1], keepdims=True)
            result = reduce.reduce_max(result, None if axis is None else axis[0], keepdims=True)
        else:
            result = math.pow(reduce.reduce_sum(math.pow(result, ord), axis, keepdims=True), 1.0 / ord)
    if not keepdims:
        result = array.squeeze(result, axis)
    return result


def _matrix_2_norm(x, axis):
    """The largest singular value over ``axis`` (moved last), kept as two size-1 dims (TF's)."""
    rank = x.ndim
    pos = [a % rank for a in axis]
    perm_before = [a for a in range(rank) if a not in pos] + pos
    perm_after = [perm_before.index(a) for a in range(rank)]
    s = apply("Svd", [array.transpose(x, perm_before)], {"compute_uv": False, "full_matrices": False})[0]
    result = array.expand_dims(reduce.reduce_max(math.abs(s), axis=-1, keepdims=True), -1)
    return array.transpose(result, perm_after)


def _number(x):
    """A Python number from an attribute given as a number or a constant tensor."""
    if hasattr(x, "numpy"):
        x = x.numpy()
    x = np.asarray(x)
    if x.ndim:
        raise ValueError(f"expected a scalar, got shape {list(x.shape)}")
    return x.item()


def _pair(k):
    """A diagonal index ``k`` (an int or a (lower, upper) pair) as a (lower, upper) tuple."""
    if hasattr(k, "numpy"):
        k = k.numpy()
    k = np.asarray(k).reshape(-1).tolist()
    if len(k) not in (1, 2) or not all(isinstance(i, int) for i in k):
        raise ValueError(f"k must be an int or a pair of ints, got {k}")
    return (k[0], k[-1])


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None) -> Tensor:
    """``x`` with ``matrix @ x == rhs`` for triangular ``matrix`` (only its ``lower`` or upper
    triangle is read); batch dims broadcast. A zero on the diagonal gives inf/nan, no error.

    >>> tf.linalg.triangular_solve(tf.constant([[2.0, 0.0], [1.0, 1.0]]), tf.constant([[2.0], [2.0]]))
    <tf.Tensor: shape=(2, 1), dtype=float32, numpy=
    array([[1.],
           [1.]], dtype=float32)>
    """
    return apply("MatrixTriangularSolve", [matrix, rhs], {"lower": bool(lower), "adjoint": bool(adjoint)})


def cholesky_solve(chol, rhs, name=None) -> Tensor:
    """``x`` with ``A @ x == rhs`` given ``chol = cholesky(A)``: two triangular solves, as TF.

    >>> tf.linalg.cholesky_solve(tf.constant([[2.0, 0.0], [1.0, 1.0]]), tf.constant([[4.0], [2.0]]))
    <tf.Tensor: shape=(2, 1), dtype=float32, numpy=
    array([[1.],
           [0.]], dtype=float32)>
    """
    y = triangular_solve(chol, rhs, adjoint=False, lower=True)
    return triangular_solve(chol, y, adjoint=True, lower=True)


def band_part(input, num_lower, num_upper, name=None) -> Tensor:
    """Each matrix with everything outside its band zeroed: ``num_lower`` subdiagonals and
    ``num_upper`` superdiagonals kept (negative: the whole triangle).

    >>> tf.linalg.band_part(tf.ones([3, 3]), 0, -1)
    <tf.Tensor: shape=(3, 3), dtype=float32, numpy=
    array([[1., 1., 1.],
           [0., 1., 1.],
           [0., 0., 1.]], dtype=float32)>
    """
    return apply("MatrixBandPart", [input], {"num_lower": int(_number(num_lower)),
                                             "num_upper": int(_number(num_upper))})


def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
         align="RIGHT_LEFT") -> Tensor:
    """Matrices with ``diagonal`` on diagonal(s) ``k`` (TF's MatrixDiagV3), ``padding_value``
    elsewhere.

    >>> tf.linalg.diag(tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[1., 0.],
           [0., 2.]], dtype=float32)>
    """
    return apply("MatrixDiagV3", [diagonal], {
        "k": _pair(k), "num_rows": int(_number(num_rows)), "num_cols": int(_number(num_cols)),
        "padding_value": _number(padding_value), "align": align})


def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT") -> Tensor:
    """``input`` with its diagonal(s) ``k`` replaced by ``diagonal``.

    >>> tf.linalg.set_diag(tf.zeros([2, 2]), tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[1., 0.],
           [0., 2.]], dtype=float32)>
    """
    return apply("MatrixSetDiagV3", [input, diagonal], {"k": _pair(k), "align": align})


LogMatrixDeterminant = collections.namedtuple("LogMatrixDeterminant", ["sign", "log_abs_determinant"])


def slogdet(input, name=None) -> LogMatrixDeterminant:
    """``(sign, log_abs_determinant)`` of each matrix; a singular one gives (0, -inf).

    >>> tf.linalg.slogdet(tf.constant([[1.0, 2.0], [3.0, 4.0]])).sign
    <tf.Tensor: shape=(), dtype=float32, numpy=-1.0>
    """
    return LogMatrixDeterminant(*apply("LogMatrixDeterminant", [input]))


def logdet(matrix, name=None) -> Tensor:
    """``log(det(matrix))`` of Hermitian positive definite matrices through their Cholesky
    factor, as TF (a matrix that is not positive definite gives NaN).

    >>> tf.linalg.logdet(tf.constant([[4.0, 0.0], [0.0, 1.0]]))
    <tf.Tensor: shape=(), dtype=float32, numpy=1.3862944>
    """
    chol = cholesky(matrix)
    return 2.0 * reduce.reduce_sum(math.log(diag_part(chol)), axis=[-1])


def tensor_diag(diagonal, name=None) -> Tensor:
    """The tensor of rank 2k with ``diagonal`` (rank k) on its diagonal (TF's ``Diag``).

    >>> tf.linalg.tensor_diag(tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[1., 0.],
           [0., 2.]], dtype=float32)>
    """
    d = _tensor(diagonal)
    if d.ndim < 1:
        raise InvalidArgumentError(f"Diag: Input must be at least rank 1, got 0 [shape {list(d.shape)}]")
    shape = list(d.shape)
    return array.reshape(diag(array.reshape(d, [-1])), shape + shape)


def tensor_diag_part(input, name=None) -> Tensor:
    """The diagonal of a tensor of rank 2k: ``out[i..] = input[i.., i..]`` (TF's ``DiagPart``).

    >>> tf.linalg.tensor_diag_part(tf.constant([[1.0, 0.0], [0.0, 2.0]]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
    """
    x = _tensor(input)
    shape = list(x.shape)
    half = len(shape) // 2
    if not shape or len(shape) % 2 or shape[:half] != shape[half:]:
        raise InvalidArgumentError(f"DiagPart: The rank of the tensor should be even and positive, "
                                   f"with equal halves, got shape {shape}")
    n = int(np.prod(shape[:half], dtype=np.int64))
    return array.reshape(diag_part(array.reshape(x, [n, n])), shape[:half])


__all__ = ["matmul", "matvec", "einsum", "tensordot", "matrix_transpose", "adjoint", "solve", "inv",
           "det", "cholesky", "diag_part", "trace", "norm", "eye"]
# tf.linalg's alone (tapeflow/linalg.py), not also top-level names
LINALG_ONLY = ["triangular_solve", "cholesky_solve", "band_part", "diag", "set_diag", "slogdet", "logdet",
               "tensor_diag", "tensor_diag_part"]
