"""codegen.lapack: compiled triangular solves, products, inverses and Cholesky factors on
NumPy's OpenBLAS, checked against NumPy for each triangle/transpose flag and operand layout
(row-major, column-major, strided: copied), sizes 0, below and above the inversion's block
size (32), float64 (float32 under ``slow``: the compiled-vs-eager op tests compile
its Cholesky and triangular solves). Only the named triangle may be read: the other one holds
garbage here. (Programs calling them: tests/ops/test_linalg_gp.py.)"""
import numpy as np
import pytest

from tapeflow.codegen import jit_helpers as rt

FLAGS = [(lower, adjoint) for lower in (True, False) for adjoint in (True, False)]


def _triangular(rng, n, dtype):
    """A well-conditioned matrix whose either triangle is a usable triangular factor."""
    return (rng.uniform(-1, 1, (n, n)) / max(n, 1) + 2 * np.eye(n)).astype(dtype)


def _tri(a, lower, adjoint):
    t = np.tril(a) if lower else np.triu(a)
    return t.T if adjoint else t


def _strided(a):
    """The same matrix as every other column of a wider one (copied before BLAS sees it)."""
    return np.repeat(a, 2, axis=1)[:, ::2]


@pytest.mark.parametrize("dtype,n", [(np.float64, 0), (np.float64, 5), (np.float64, 70),
                                     pytest.param(np.float32, 40, marks=pytest.mark.slow)])
def test_triangular_helpers_match_numpy(dtype, n):
    rng = np.random.default_rng(n)
    tol = 1e-4 if dtype == np.float32 else 1e-11
    a = _triangular(rng, n, dtype)
    b = rng.standard_normal((n, 3)).astype(dtype)
    g = rng.standard_normal((3, n)).astype(dtype)
    for lower, adjoint in FLAGS:
        t = _tri(a, lower, adjoint).astype(np.float64)
        for x in [a, _strided(a)] if dtype == np.float64 else [a]:
            out = np.empty((n, 3), dtype)
            rt.tri_solve_into(x, b, out, lower, adjoint)
            np.testing.assert_allclose(out, np.linalg.solve(t, b) if n else out, rtol=tol, atol=tol)
        for x in [a, np.asfortranarray(a)] if dtype == np.float64 else [a]:   # .T in programs
            inv = np.empty((n, n), dtype)
            rt.tri_inverse_into(x, inv, lower, adjoint)
            np.testing.assert_allclose(inv, np.linalg.inv(t) if n else inv, rtol=tol, atol=tol)
            assert not np.triu(inv if lower != adjoint else inv.T, 1).any()   # exact zeros
            left = np.empty((n, 3), dtype)
            rt.tri_matmul_into(x, b, left, True, lower, adjoint)
            np.testing.assert_allclose(left, t @ b, rtol=tol, atol=tol)
            right = np.empty((3, n), dtype)
            rt.tri_matmul_into(x, g, right, False, lower, adjoint)
            np.testing.assert_allclose(right, g @ t, rtol=tol, atol=tol)


def test_cholesky_reads_the_lower_triangle_and_gives_nan_where_not_positive_definite():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 50, 50))
    spd = x @ np.swapaxes(x, 1, 2) + 50 * np.eye(50)
    garbage = spd + np.triu(np.full((50, 50), 7.0), 1)     # TF reads the lower triangle only
    out = np.empty_like(spd)
    rt.cholesky_into(garbage, out)
    np.testing.assert_allclose(out, np.linalg.cholesky(spd), rtol=1e-12)
    bad = np.stack([spd[0], -spd[1]])
    rt.cholesky_into(bad, out)
    np.testing.assert_allclose(out[0], np.linalg.cholesky(spd[0]), rtol=1e-12)
    assert np.isnan(out[1][np.tril_indices(50)]).all() and not np.triu(out[1], 1).any()
    empty = np.empty((1, 0, 0))
    rt.cholesky_into(empty, empty.copy())
