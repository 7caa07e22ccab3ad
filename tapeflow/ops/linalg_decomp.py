"""Decompositions and what TensorFlow builds on them: qr, svd, eigh, eigvalsh, lu (and
lu_solve, lu_matrix_inverse, lu_reconstruct), lstsq, pinv, matrix_rank.

Primitives (Qr, Svd, SelfAdjointEigV2, Lu, MatrixSolveLs) go through ``apply``; the rest are
composites built the way TensorFlow builds them (``linalg_impl.py``), so their gradients
follow. The permutation of ``lu`` is applied as a one-hot matrix product (TF gathers rows):
the same values, and a gradient with respect to the factors.
"""
from __future__ import annotations

import collections

import numpy as np

from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor
from . import array, creation, math, reduce
from .linalg import _tensor, band_part, matmul, set_diag, triangular_solve

Qr = collections.namedtuple("Qr", ["q", "r"])
Lu = collections.namedtuple("Lu", ["lu", "p"])


def qr(input, full_matrices=False, name=None) -> Qr:
    """``(q, r)`` with ``input = q @ r``, q orthonormal columns and r upper triangular
    (LAPACK's Householder signs, TensorFlow's).

    >>> tf.linalg.qr(tf.constant([[3.0, 0.0], [4.0, 5.0]])).r
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[-5., -4.],
           [ 0., -3.]], dtype=float32)>
    """
    return Qr(*apply("Qr", [input], {"full_matrices": bool(full_matrices)}))


def svd(tensor, full_matrices=False, compute_uv=True, name=None) -> Tensor | tuple[Tensor, Tensor, Tensor]:
    """``s`` (descending), or ``(s, u, v)`` with ``tensor = u @ diag(s) @ v^T``.

    >>> tf.linalg.svd(tf.constant([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([4., 3.], dtype=float32)>
    """
    s, u, v = apply("Svd", [tensor], {"compute_uv": bool(compute_uv),
                                      "full_matrices": bool(full_matrices)})
    return (s, u, v) if compute_uv else s


def eigh(tensor, name=None) -> tuple[Tensor, Tensor]:
    """``(e, v)``: ascending eigenvalues and eigenvectors (columns) of the self-adjoint
    matrices whose lower triangles ``tensor`` holds.

    >>> tf.linalg.eigh(tf.constant([[2.0, 0.0], [0.0, 1.0]]))[0]
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
    """
    return apply("SelfAdjointEigV2", [tensor], {"compute_v": True})


def eigvalsh(tensor, name=None) -> Tensor:
    """The ascending eigenvalues of self-adjoint matrices (their lower triangles).

    >>> tf.linalg.eigvalsh(tf.constant([[2.0, 0.0], [0.0, 1.0]]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
    """
    return apply("SelfAdjointEigV2", [tensor], {"compute_v": False})[0]


def lu(input, output_idx_type=D.int32, name=None) -> Lu:
    """``(lu, p)``: L (unit diagonal, below) and U packed in one matrix, and ``p`` with
    ``input[p] = L @ U``. A singular matrix is an error; TF registers no gradient (LookupError).

    >>> tf.linalg.lu(tf.constant([[1.0, 2.0], [3.0, 4.0]])).p
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 0], dtype=int32)>
    """
    return Lu(*apply("Lu", [input], {"output_idx_type": D.as_dtype(output_idx_type)}))


def _lower_unit(lower_upper):
    return set_diag(band_part(lower_upper, -1, 0), creation.ones_like(lower_upper)[..., 0])


def _permutation(perm, dtype):
    """P with P[i, perm[i]] = 1, so P @ x = x[perm]."""
    return array.one_hot(perm, perm.shape[-1], dtype=dtype)


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None) -> Tensor:
    """The matrix ``lu`` factored: ``P^T @ L @ U``.

    >>> tf.linalg.lu_reconstruct(*tf.linalg.lu(tf.constant([[1.0, 2.0], [3.0, 4.0]])))
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[1., 2.],
           [3., 4.]], dtype=float32)>
    """
    lower_upper = _tensor(lower_upper)
    perm = _tensor(perm)
    x = matmul(_lower_unit(lower_upper), band_part(lower_upper, 0, -1))
    return matmul(_permutation(perm, lower_upper.dtype), x, transpose_a=True)


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None) -> Tensor:
    """``x`` with ``A @ x = rhs`` from ``A``'s LU factors: two triangular solves, as TF.

    >>> lu, p = tf.linalg.lu(tf.constant([[2.0, 0.0], [0.0, 4.0]]))
    >>> tf.linalg.lu_solve(lu, p, tf.constant([[2.0], [2.0]]))
    <tf.Tensor: shape=(2, 1), dtype=float32, numpy=
    array([[1. ],
           [0.5]], dtype=float32)>
    """
    lower_upper = _tensor(lower_upper)
    perm, rhs = _tensor(perm), _tensor(rhs, lower_upper.dtype)
    permuted = matmul(_permutation(perm, lower_upper.dtype), rhs)
    return triangular_solve(lower_upper, triangular_solve(_lower_unit(lower_upper), permuted),
                            lower=False)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None) -> Tensor:
    """The inverse of the matrix ``lower_upper`` and ``perm`` factor (``lu_solve`` on I).

    >>> tf.linalg.lu_matrix_inverse(*tf.linalg.lu(tf.constant([[2.0, 0.0], [0.0, 4.0]])))
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[0.5 , 0.  ],
           [0.  , 0.25]], dtype=float32)>
    """
    lower_upper = _tensor(lower_upper)
    n = lower_upper.shape[-1]
    eye = array.broadcast_to(np.eye(n, dtype=lower_upper.dtype.np), list(lower_upper.shape))
    return lu_solve(lower_upper, perm, eye)


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None) -> Tensor:
    """The least-squares solution of ``matrix @ x = rhs`` (with an L2 penalty when ``fast``:
    the regularized normal equations through a Cholesky factor, as TF); ``fast=False`` gives
    the minimum-norm solution, whose gradient TF does not define.

    >>> tf.linalg.lstsq(tf.constant([[1.0], [1.0]]), tf.constant([[1.0], [3.0]]))
    <tf.Tensor: shape=(1, 1), dtype=float32, numpy=array([[2.]], dtype=float32)>
    """
    if hasattr(l2_regularizer, "numpy"):
        l2_regularizer = l2_regularizer.numpy()
    return apply("MatrixSolveLs", [matrix, rhs], {"l2_regularizer": float(l2_regularizer),
                                                  "fast": bool(fast)})


def pinv(a, rcond=None, validate_args=False, name=None) -> Tensor:
    """The Moore-Penrose pseudo-inverse through the SVD, singular values below
    ``rcond * max(s)`` dropped (default ``10 * max(M, N) * eps``), as TF.

    >>> tf.linalg.pinv(tf.constant([[2.0, 0.0], [0.0, 0.0]]))
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[0.5, 0. ],
           [0. , 0. ]], dtype=float32)>
    """
    a = _tensor(a)
    dtype = a.dtype.np
    if rcond is None:
        rcond = 10.0 * float(max(a.shape[-2:])) * np.finfo(dtype).eps
    rcond = math.cast(_tensor(rcond, a.dtype), a.dtype)
    s, u, v = svd(a, full_matrices=False, compute_uv=True)
    cutoff = rcond * reduce.reduce_max(s, axis=-1)
    s = math.where(s > array.expand_dims(cutoff, -1), s, _tensor(np.array(np.inf, dtype)))
    return matmul(v / array.expand_dims(s, -2), u, transpose_b=True)


def matrix_rank(a, tol=None, validate_args=False, name=None) -> Tensor:
    """The number of singular values above ``tol`` (default ``eps * max(M, N) * max(s)``).

    >>> tf.linalg.matrix_rank(tf.constant([[1.0, 2.0], [2.0, 4.0]]))
    <tf.Tensor: shape=(), dtype=int32, numpy=1>
    """
    a = _tensor(a, D.float32)
    s = svd(a, compute_uv=False)
    if tol is None:
        eps = np.finfo(a.dtype.np).eps
        tol = eps * float(max(a.shape[-2:])) * reduce.reduce_max(s, axis=-1, keepdims=True)
    return reduce.reduce_sum(math.cast(s > tol, D.int32), axis=-1)


__all__ = ["qr", "svd", "eigh", "eigvalsh", "lu", "lu_reconstruct", "lu_solve", "lu_matrix_inverse",
           "lstsq", "pinv", "matrix_rank"]
