"""Matrix functions and the rest of tf.linalg: expm, sqrtm, tridiagonal_solve (a primitive),
and the composites TensorFlow builds the same way: tridiagonal_matmul, banded_triangular_solve,
eigh_tridiagonal, cross, normalize, global_norm, l2_normalize."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor
from . import array, creation, math, reduce
from .indexed_slices import IndexedSlices
from .linalg import _tensor, diag, diag_part, norm, set_diag, triangular_solve
from .linalg_decomp import eigh, eigvalsh
from .nn import l2_loss, l2_normalize


def expm(input, name=None) -> Tensor:
    """The matrix exponential of each matrix (scaling and squaring with Padé approximants).

    >>> tf.linalg.expm(tf.zeros([2, 2]))
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[1., 0.],
           [0., 1.]], dtype=float32)>
    """
    return apply("MatrixExponential", [input])


def sqrtm(input, name=None) -> Tensor:
    """The principal square root of each matrix (NaN where none is real).

    >>> tf.linalg.sqrtm(tf.constant([[4.0, 0.0], [0.0, 9.0]]))
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[2., 0.],
           [0., 3.]], dtype=float32)>
    """
    return apply("MatrixSquareRoot", [input])


def _compact(diagonals, diagonals_format):
    """TF's three formats as the compact [..., 3, M] (superdiagonal, diagonal, subdiagonal;
    the last superdiagonal and first subdiagonal entries are padding)."""
    if diagonals_format == "compact":
        d = _tensor(diagonals)
        if d.ndim < 2 or d.shape[-2] != 3:
            raise ValueError(f"Expected 3 diagonals got {d.shape[-2] if d.ndim >= 2 else d.shape}")
        return d
    if diagonals_format == "sequence":
        if not isinstance(diagonals, (list, tuple)) or len(diagonals) != 3:
            raise ValueError("Expected diagonals to be a sequence of length 3.")
        sup, main, sub = (_tensor(t) for t in diagonals)
        m = main.shape[-1]
        if sup.shape[-1] == m - 1:   # TF pads shorter super/subdiagonals
            sup = array.pad(sup, [[0, 0]] * (sup.ndim - 1) + [[0, 1]])
        if sub.shape[-1] == m - 1:
            sub = array.pad(sub, [[0, 0]] * (sub.ndim - 1) + [[1, 0]])
        return array.stack([sup, main, sub], axis=-2)
    if diagonals_format == "matrix":
        mat = _tensor(diagonals)
        m = mat.shape[-1]
        if mat.ndim < 2 or mat.shape[-2] != m:
            raise ValueError(f"Expected last two dimensions of diagonals to be same, got "
                             f"{mat.shape[-2] if mat.ndim >= 2 else mat.shape} and {m}")
        return diag_part(mat, k=(-1, 1), padding_value=0, align="LEFT_RIGHT")
    raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")


def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False,
                      conjugate_rhs=False, name=None, partial_pivoting=True,
                      perturb_singular=False) -> Tensor:
    """``x`` with ``A @ x = rhs`` for tridiagonal ``A`` given by its diagonals ("compact":
    [..., 3, M]; "sequence": (super, main, sub); "matrix": [..., M, M]). A singular system
    gives NaN (or, with ``perturb_singular``, a perturbed solution), no error.

    >>> tf.linalg.tridiagonal_solve(tf.constant([[1.0, 0.0], [2.0, 2.0], [0.0, 1.0]]),
    ...                             tf.constant([[3.0], [3.0]]))
    <tf.Tensor: shape=(2, 1), dtype=float32, numpy=
    array([[1.],
           [1.]], dtype=float32)>
    """
    d = _compact(diagonals, diagonals_format)
    rhs = _tensor(rhs, d.dtype)
    vector = rhs.ndim == d.ndim - 1
    if vector:
        rhs = array.expand_dims(rhs, -1)
    elif transpose_rhs:
        rhs = array.transpose(rhs, list(range(rhs.ndim - 2)) + [rhs.ndim - 1, rhs.ndim - 2])
    m = d.shape[-1]
    if rhs.ndim >= 2 and rhs.shape[-2] != m:
        raise ValueError(f"Expected number of left-hand sided and right-hand sides to be equal, "
                         f"got {m} and {rhs.shape[-2]}")
    x = apply("TridiagonalSolve", [d, rhs], {"partial_pivoting": bool(partial_pivoting),
                                             "perturb_singular": bool(perturb_singular)})
    return array.squeeze(x, -1) if vector else x


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None) -> Tensor:
    """``A @ rhs`` for tridiagonal ``A`` given by its diagonals (formats as tridiagonal_solve),
    as shifted products: TF's gradient (its _TridiagonalMatMulGrad) follows.

    >>> tf.linalg.tridiagonal_matmul(tf.constant([[1.0, 0.0], [2.0, 2.0], [0.0, 1.0]]),
    ...                              tf.constant([[1.0], [1.0]]))
    <tf.Tensor: shape=(2, 1), dtype=float32, numpy=
    array([[3.],
           [3.]], dtype=float32)>
    """
    d = _compact(diagonals, diagonals_format)
    rhs = _tensor(rhs, d.dtype)
    if rhs.shape[-2] != d.shape[-1]:
        raise ValueError(f"Expected number of left-hand sided and right-hand sides to be equal, "
                         f"got {d.shape[-1]} and {rhs.shape[-2]}")
    sup, main, sub = (array.expand_dims(d[..., i, :], -1) for i in range(3))
    pad = [[0, 0]] * (rhs.ndim - 2)
    below = array.pad(rhs[..., 1:, :], pad + [[0, 1], [0, 0]])    # rhs shifted up: row i+1
    above = array.pad(rhs[..., :-1, :], pad + [[1, 0], [0, 0]])   # rhs shifted down: row i-1
    return main * rhs + sup * below + sub * above


def banded_triangular_solve(bands, rhs, lower=True, adjoint=False, name=None) -> Tensor:
    """``x`` with ``A @ x = rhs`` for a banded triangular ``A`` stored as its ``K`` bands
    [..., K, M] (LEFT_RIGHT aligned, the main diagonal first when ``lower``, last otherwise).

    >>> tf.linalg.banded_triangular_solve(tf.constant([[2.0, 3.0, 4.0], [1.0, 2.0, 3.0]]),
    ...                                   tf.ones([3, 1]))
    <tf.Tensor: shape=(3, 1), dtype=float32, numpy=
    array([[0.5 ],
           [0.  ],
           [0.25]], dtype=float32)>
    """
    bands = _tensor(bands)
    k, m = bands.shape[-2:]
    ks = (-(k - 1), 0) if lower else (0, k - 1)
    zeros = creation.zeros(list(bands.shape[:-2]) + [m, m], dtype=bands.dtype)
    matrix = set_diag(zeros, bands if k > 1 else bands[..., 0, :], k=ks, align="LEFT_RIGHT")
    return triangular_solve(matrix, _tensor(rhs, bands.dtype), lower=lower, adjoint=adjoint)


def eigh_tridiagonal(alpha, beta, eigvals_only=True, select="a", select_range=None, tol=None,
                     name=None) -> Tensor | tuple[Tensor, Tensor]:
    """Eigenvalues (and vectors) of the symmetric tridiagonal matrix with diagonal ``alpha``
    and off-diagonal ``beta``, through the dense symmetric eigensolver; ``select`` "a" (all),
    "i" (an index range, inclusive) or "v" (values in (lo, hi]).

    >>> tf.linalg.eigh_tridiagonal(tf.constant([2.0, 2.0]), tf.constant([1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 3.], dtype=float32)>
    """
    alpha = _tensor(alpha)
    beta = _tensor(beta, alpha.dtype)
    if alpha.ndim != 1 or beta.ndim != 1:
        raise ValueError(f"Only supports rank 1 alpha and beta, got {alpha.shape} and {beta.shape}")
    n = alpha.shape[0]
    if beta.shape[0] != n - 1:
        raise ValueError(f"beta must have one element less than alpha: {beta.shape[0]} vs {n}")
    if select not in ("a", "v", "i"):
        raise ValueError("'select' must have a value in {'a', 'v', 'i'}.")
    matrix = diag(alpha) if n == 1 else diag(array.stack([
        array.pad(beta, [[0, 1]]), alpha, array.pad(beta, [[1, 0]])]), k=(-1, 1), align="LEFT_RIGHT")
    if eigvals_only:
        values, vectors = eigvalsh(matrix), None
    else:
        values, vectors = eigh(matrix)
    if select == "i":
        lo, hi = (int(np.asarray(getattr(v, "numpy", lambda: v)())) for v in select_range)
        values = values[lo:hi + 1]
        vectors = None if vectors is None else vectors[:, lo:hi + 1]
    elif select == "v":
        lo, hi = (float(np.asarray(getattr(v, "numpy", lambda: v)())) for v in select_range)
        keep = np.flatnonzero((values.numpy() > lo) & (values.numpy() <= hi))
        values = array.gather(values, keep)
        vectors = None if vectors is None else array.gather(vectors, keep, axis=1)
    return values if eigvals_only else (values, vectors)


def cross(a, b, name=None) -> Tensor:
    """The cross product of 3-element vectors along the last axis (same shapes, as TF's Cross).

    >>> tf.linalg.cross(tf.constant([1.0, 0.0, 0.0]), tf.constant([0.0, 1.0, 0.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0., 0., 1.], dtype=float32)>
    """
    a, b = _tensor(a), _tensor(b)
    if list(a.shape) != list(b.shape):
        raise InvalidArgumentError(f"Cross: Both inputs must be of same shape: {list(a.shape)} vs. "
                                   f"{list(b.shape)}")
    if a.ndim < 1 or a.shape[-1] != 3:
        raise InvalidArgumentError("Cross: Cross-products are only defined for 3-element vectors. "
                                   f"Got shape {list(a.shape)}")
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    return array.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def normalize(tensor, ord="euclidean", axis=None, name=None) -> tuple[Tensor, Tensor]:
    """``(tensor / norm, norm)`` with the norm kept along ``axis``, as TF.

    >>> tf.linalg.normalize(tf.constant([3.0, 4.0]))[1]
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([5.], dtype=float32)>
    """
    x = _tensor(tensor)
    n = math.cast(norm(x, ord=ord, axis=axis, keepdims=True), x.dtype)
    return x / n, n


def global_norm(t_list, name=None) -> Tensor:
    """``sqrt(sum(||t||^2))`` over the tensors of ``t_list`` (None entries skipped).

    >>> tf.linalg.global_norm([tf.constant([3.0]), tf.constant([4.0])])
    <tf.Tensor: shape=(), dtype=float32, numpy=5.0>
    """
    if isinstance(t_list, (str, bytes)) or not isinstance(t_list, (list, tuple)):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    values = [_tensor(t.values if isinstance(t, IndexedSlices) else t)   # TensorFlow's: the values
              for t in t_list if t is not None]
    if not values:      # TensorFlow: the sum of an empty float32 stack
        return _tensor(0.0)
    half_squared = reduce.reduce_sum(array.stack([l2_loss(v) for v in values]))
    return math.sqrt(half_squared * math.constant_like(2.0, half_squared))


__all__ = ["expm", "sqrtm", "tridiagonal_solve", "tridiagonal_matmul", "banded_triangular_solve",
           "eigh_tridiagonal", "cross", "normalize", "global_norm", "l2_normalize"]
