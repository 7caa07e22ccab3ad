"""codegen.blas: compiled GEMM on NumPy's OpenBLAS, checked against NumPy for every layout.

(The generated programs' C/F-typed calls are covered by the compiled-vs-eager tests.)

Layouts: C, transposed (F), sliced with gaps between rows, reversed (negative strides,
which must be copied), empty and k = 0 products, outputs with non-contiguous rows.
"""
import numpy as np
import pytest
from numba import njit

from tapeflow.codegen import blas, jit_helpers as rt


def _compiled_on_first_call(signatures):
    """``njit(signatures)``, compiled when first called, not when pytest collects this file
    (every xdist worker imports every test file; only the one running it should compile)."""
    def wrap(fn):
        jitted = []

        def call(*args):
            if not jitted:
                jitted.append(njit(signatures)(fn))
            return jitted[0](*args)
        return call
    return wrap


# one compile per signature: arrays of any layout ("A"), so strides are decided at run time
@_compiled_on_first_call(["float32[:, ::1](float32[:, :], float32[:, :])",
                          "float64[:, ::1](float64[:, :], float64[:, :])"])
def _dot(a, b):
    return rt.dot(a, b)


# what generated programs pass: a C array times the .T of one (flags fixed when compiling)
@_compiled_on_first_call("float32[:, ::1](float32[:, ::1], float32[::1, :])")
def _dot_cf(a, b):
    return rt.dot(a, b)


@_compiled_on_first_call("void(float32[:, :], float32[:, :], float32[:, :])")
def _dot_into(a, b, out):
    rt.dot_into(a, b, out)


def _operands(rng, m, k, n, dtype):
    return (rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layouts_match_numpy(dtype):
    rng = np.random.default_rng(0)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    a, b = _operands(rng, 7, 5, 3, dtype)
    big_a = rng.standard_normal((14, 12)).astype(dtype)
    big_b = rng.standard_normal((10, 9)).astype(dtype)
    cases = [
        (a, b),                                      # C, C
        (np.ascontiguousarray(a.T).T, b),            # F, C
        (a, np.ascontiguousarray(b.T).T),            # C, F
        (big_a[::2, 1:6], big_b[:5, ::3]),           # row gaps / column steps
        (a[::-1], b[:, ::-1]),                       # negative strides: copied
        (big_a[1:8, 2:7].T.copy().T, b),             # F with offset
    ]
    for x, y in cases:
        np.testing.assert_allclose(_dot(x, y), x.astype(np.float64) @ y, rtol=tol, atol=tol)
        assert _dot(x, y).dtype == dtype


def test_degenerate_sizes():
    rng = np.random.default_rng(1)
    for m, k, n in [(0, 3, 2), (3, 0, 2), (3, 2, 0), (1, 1, 1), (1, 4, 1), (4, 1, 5), (6, 5, 4)]:
        a, b = _operands(rng, m, k, n, np.float32)
        bf = np.asfortranarray(b)
        both = bf.flags.c_contiguous      # Numba types such an array as C, not F
        for got in (_dot(a, b),) + (() if both else (_dot_cf(a, bf),)):
            assert got.shape == (m, n)
            np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-6)


def test_into_outputs_with_gaps_between_rows_and_strided_columns():
    rng = np.random.default_rng(2)
    a, b = _operands(rng, 4, 6, 3, np.float32)
    buf = np.full((4, 8), 7.0, np.float32)
    _dot_into(a, b, buf[:, 2:5])                      # rows with gaps: written in place
    np.testing.assert_allclose(buf[:, 2:5], a @ b, rtol=1e-5, atol=1e-6)
    assert (buf[:, :2] == 7).all() and (buf[:, 5:] == 7).all()
    buf = np.full((4, 6), 7.0, np.float32)
    _dot_into(a, b, buf[:, ::2])                      # strided columns: through a temporary
    np.testing.assert_allclose(buf[:, ::2], a @ b, rtol=1e-5, atol=1e-6)
    assert (buf[:, 1::2] == 7).all()


def test_numpy_gemm_is_found_in_numpy_wheels():
    # NumPy's wheels ship scipy_openblas64_: the compiled products use the same BLAS as NumPy
    cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    if cfg.get("name") != "scipy-openblas":
        pytest.skip(f"NumPy built against {cfg.get('name')}: np.dot fallback in use")
    assert blas.NUMPY_GEMM == {np.float32, np.float64}


# the generated programs' C/F-typed products, one operand a row or a column (GEMV)
@njit
def _products(a, b, at, bt):
    """a @ b with each operand as C or as the .T of a C array (F), in all four pairings."""
    return rt.dot(a, b), rt.dot(at.T, b), rt.dot(a, bt.T), rt.dot(at.T, bt.T)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", [(9, 5, 1), (1, 5, 7), (1, 1, 6), (6, 1, 1), (1, 4, 1)])
def test_one_row_or_one_column_every_layout(dtype, m, k, n):
    rng = np.random.default_rng(m * 100 + n)
    a, b = _operands(rng, m, k, n, dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    want = a.astype(np.float64) @ b
    for got in _products(a, b, np.ascontiguousarray(a.T), np.ascontiguousarray(b.T)):
        assert got.shape == (m, n) and got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
