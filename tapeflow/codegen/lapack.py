"""Triangular solves and Cholesky factors in compiled programs on NumPy's own OpenBLAS.

The linear algebra templates (``templates/linalg.py``) call ``tri_solve_into`` and
``cholesky_into``. They reach ``cblas_?trsm`` and LAPACK's ``?potrf`` in the library NumPy
loaded, by symbols registered with LLVM under names of our own, as ``blas.py`` does for GEMM
(the same library, so one thread pool, and Numba's on-disk cache keeps working). Substitution
loops and Numba's ``np.linalg.cholesky`` (SciPy's LAPACK) remain where NumPy has no such
library or for dtypes BLAS has no routine for.

``tri_solve_into(a, b, out, lower, adjoint)``: ``out = inv(op(T)) b`` for the ``lower`` (or
upper) triangle ``T`` of ``a`` (``op``: transpose when ``adjoint``), one matrix or a batch
flattened to 3-D. Only that triangle is read; a zero pivot gives inf/nan, no error (TF's).
``cholesky_into(a, out)``: the lower factor of each matrix from its lower triangle; a matrix
that is not positive definite gets NaN in its whole lower triangle (TF 2.21's result).
Each call runs on the OpenBLAS threads the GEMMs would (``blas._fit_threads``: the cores
other processes leave free).
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from .blas import _data_pointer, _fit_threads, _restore, register_numpy_symbols

ROW_MAJOR, NO_TRANS, TRANS, UPPER, LOWER, NON_UNIT, LEFT, RIGHT = 101, 111, 112, 121, 122, 131, 141, 142
# NumPy's wheel (scipy_openblas64_, ILP64): its symbol -> the name generated code calls
_TRSM = {np.float32: ("scipy_cblas_strsm64_", "tapeflow_numpy_strsm"),
         np.float64: ("scipy_cblas_dtrsm64_", "tapeflow_numpy_dtrsm")}
_TRMM = {np.float32: ("scipy_cblas_strmm64_", "tapeflow_numpy_strmm"),
         np.float64: ("scipy_cblas_dtrmm64_", "tapeflow_numpy_dtrmm")}
_TRSV = {np.float32: ("scipy_cblas_strsv64_", "tapeflow_numpy_strsv"),
         np.float64: ("scipy_cblas_dtrsv64_", "tapeflow_numpy_dtrsv")}
_POTRF = {np.float32: ("scipy_spotrf_64_", "tapeflow_numpy_spotrf"),
          np.float64: ("scipy_dpotrf_64_", "tapeflow_numpy_dpotrf")}


NUMPY_LAPACK = frozenset(register_numpy_symbols([_TRSM, _TRMM, _TRSV, _POTRF]))


_TRSV_COLUMNS = 2   # right-hand sides up to this many: one trsv each


def _uses_numpy_lapack(*arys):
    return all(isinstance(x, types.Array) and str(x.dtype) in ("float32", "float64")
               and np.dtype(str(x.dtype)).type in NUMPY_LAPACK for x in arys) \
        and len({str(x.dtype) for x in arys}) == 1


@intrinsic
def _cblas_trsm(typingctx, uplo, trans, m, n, a, lda, b, ldb):
    """cblas_?trsm(RowMajor, Left, uplo, trans, NonUnit, m, n, 1, a, lda, b, ldb): b = inv(op(A)) b."""
    dtype = b.dtype
    name = _TRSM[np.dtype(str(dtype)).type][1]
    sig = types.void(types.int32, types.int32, types.int64, types.int64, a, types.int64, b, types.int64)

    def codegen(context, builder, signature, args):
        up, tr, m_, n_, a_, lda_, b_, ldb_ = args
        flt = context.get_value_type(dtype)
        i32, i64, ptr = ir.IntType(32), ir.IntType(64), ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i32, i32, i32, i32, i32, i64, i64, flt, ptr, i64,
                                               ptr, i64])
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        builder.call(fn, [i32(ROW_MAJOR), i32(LEFT), up, tr, i32(NON_UNIT), m_, n_, flt(1.0),
                          _data_pointer(context, builder, signature.args[4], a_), lda_,
                          _data_pointer(context, builder, signature.args[6], b_), ldb_])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _cblas_trsv(typingctx, uplo, trans, n, a, lda, x, incx):
    """cblas_?trsv(RowMajor, uplo, trans, NonUnit, n, a, lda, x, incx): x = inv(op(A)) x."""
    dtype = x.dtype
    name = _TRSV[np.dtype(str(dtype)).type][1]
    sig = types.void(types.int32, types.int32, types.int64, a, types.int64, x, types.int64)

    def codegen(context, builder, signature, args):
        up, tr, n_, a_, lda_, x_, inc_ = args
        i32, i64, ptr = ir.IntType(32), ir.IntType(64), ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i32, i32, i32, i32, i64, ptr, i64, ptr, i64])
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        builder.call(fn, [i32(ROW_MAJOR), up, tr, i32(NON_UNIT), n_,
                          _data_pointer(context, builder, signature.args[3], a_), lda_,
                          _data_pointer(context, builder, signature.args[5], x_), inc_])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _cblas_trmm(typingctx, side, uplo, trans, m, n, alpha, a, lda, b, ldb):
    """cblas_?trmm(RowMajor, side, uplo, trans, NonUnit, m, n, alpha, a, lda, b, ldb):
    b = alpha op(A) b (side Left) or alpha b op(A) (Right), A triangular."""
    dtype = b.dtype
    name = _TRMM[np.dtype(str(dtype)).type][1]
    sig = types.void(types.int32, types.int32, types.int32, types.int64, types.int64, types.float64,
                     a, types.int64, b, types.int64)

    def codegen(context, builder, signature, args):
        sd, up, tr, m_, n_, alpha_, a_, lda_, b_, ldb_ = args
        flt = context.get_value_type(dtype)
        i32, i64, ptr = ir.IntType(32), ir.IntType(64), ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i32, i32, i32, i32, i32, i64, i64, flt, ptr, i64,
                                               ptr, i64])
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        alpha_c = alpha_ if flt == ir.DoubleType() else builder.fptrunc(alpha_, flt)
        builder.call(fn, [i32(ROW_MAJOR), sd, up, tr, i32(NON_UNIT), m_, n_, alpha_c,
                          _data_pointer(context, builder, signature.args[6], a_), lda_,
                          _data_pointer(context, builder, signature.args[8], b_), ldb_])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _lapack_potrf_upper(typingctx, n, a, lda):
    """?potrf('U', n, a, lda, info) (column-major); returns info. A C array's lower triangle is
    the column-major upper one: its factor U (A = U^T U) is the row-major lower factor L."""
    dtype = a.dtype
    name = _POTRF[np.dtype(str(dtype)).type][1]
    sig = types.int64(types.int64, a, types.int64)

    def codegen(context, builder, signature, args):
        n_, a_, lda_ = args
        i8, i64 = ir.IntType(8), ir.IntType(64)
        ptr, i64p = i8.as_pointer(), i64.as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [ptr, i64p, ptr, i64p, i64p, i64])
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        uplo = cgutils.alloca_once_value(builder, i8(ord("U")))
        n_p = cgutils.alloca_once_value(builder, n_)
        lda_p = cgutils.alloca_once_value(builder, lda_)
        info = cgutils.alloca_once_value(builder, i64(0))
        builder.call(fn, [uplo, n_p, _data_pointer(context, builder, signature.args[1], a_), lda_p,
                          info, i64(1)])
        return builder.load(info)

    return sig, codegen


@njit(cache=True, nogil=True)
def _layout(x):
    """(is row-major, leading dimension) of a 2-D array BLAS can take as is; (-1, 0) if neither."""
    r, c = x.shape
    item = x.itemsize
    s0, s1 = x.strides
    if (s1 == item or c == 1) and s0 > 0 and s0 % item == 0 and s0 // item >= max(1, c):
        return 1, s0 // item
    if (s0 == item or r == 1) and s1 > 0 and s1 % item == 0 and s1 // item >= max(1, r):
        return 0, s1 // item
    return -1, 0


@njit(cache=True, nogil=True, error_model="numpy")
def _tri_solve_loops(a, b, out, lower, adjoint):
    """Substitution with the ``lower`` (or upper) triangle of ``a`` (transposed when ``adjoint``)."""
    n, k = b.shape
    forward = lower != adjoint     # solving with L^T is backward substitution on the upper triangle
    for step in range(n):
        i = step if forward else n - 1 - step
        for c in range(k):
            out[i, c] = b[i, c]
        for step2 in range(step):
            j = step2 if forward else n - 1 - step2
            f = a[j, i] if adjoint else a[i, j]
            for c in range(k):
                out[i, c] -= f * out[j, c]
        p = a[i, i]
        for c in range(k):
            out[i, c] = out[i, c] / p


def _tri_solve_one(a, b, out, lower, adjoint):
    """One matrix: the Python version (the compiled one is the overload below)."""
    _tri_solve_loops(a, b, out, lower, adjoint)


@overload(_tri_solve_one)
def _tri_solve_one_impl(a, b, out, lower, adjoint):
    if not (_uses_numpy_lapack(a, b, out) and out.layout == "C"):
        def loops(a, b, out, lower, adjoint):
            _tri_solve_loops(a, b, out, lower, adjoint)
        return loops

    def impl(a, b, out, lower, adjoint):
        n, k = b.shape
        for i in range(n):
            for c in range(k):
                out[i, c] = b[i, c]
        if n == 0 or k == 0:
            return
        row_major, lda = _layout(a)
        prev = _fit_threads(n * n * k // 2)
        if row_major < 0:   # strides BLAS cannot take: a row-major copy
            ac = np.empty((n, n), a.dtype)
            for i in range(n):
                for j in range(n):
                    ac[i, j] = a[i, j]
            _cblas_trsm(LOWER if lower else UPPER, TRANS if adjoint else NO_TRANS, n, k, ac, n,
                        out, k)
        else:
            # a column-major operand is its transpose stored row-major: the other triangle,
            # the other transpose flag
            up_low = LOWER if (lower if row_major else not lower) else UPPER
            flip = TRANS if (adjoint if row_major else not adjoint) else NO_TRANS
            if k <= _TRSV_COLUMNS:   # trsm packs the whole triangle first: slower for a vector
                for c in range(k):
                    _cblas_trsv(up_low, flip, n, a, lda, out[:, c], k)
            else:
                _cblas_trsm(up_low, flip, n, k, a, lda, out, k)
        _restore(prev)
    return impl


@njit(cache=True, nogil=True, error_model="numpy")
def tri_solve_into(a, b, out, lower, adjoint):
    """out = inv(op(T)) b, T the ``lower`` (or upper) triangle of ``a``; 2-D operands."""
    _tri_solve_one(a, b, out, lower, adjoint)


@njit(cache=True, nogil=True, error_model="numpy")
def cholesky_or_nan(a):
    """Numba's np.linalg.cholesky (SciPy's LAPACK), or NaN in the whole lower triangle where
    ``a`` is not positive definite."""
    n = a.shape[0]
    try:
        return np.ascontiguousarray(np.linalg.cholesky(a))
    except Exception:  # noqa: BLE001 - Numba catches only by class; LinAlgError is the one
        out = np.zeros((n, n), dtype=a.dtype)
        for i in range(n):
            for j in range(i + 1):
                out[i, j] = np.nan
        return out


def _cholesky_one(a, out):
    out[...] = cholesky_or_nan(a)


@overload(_cholesky_one)
def _cholesky_one_impl(a, out):
    if not (_uses_numpy_lapack(a, out) and out.layout == "C"):
        def fallback(a, out):
            out[...] = cholesky_or_nan(a)
        return fallback

    def impl(a, out):
        n = a.shape[0]
        for i in range(n):
            for j in range(i + 1):
                out[i, j] = a[i, j]
            for j in range(i + 1, n):
                out[i, j] = 0
        if n == 0:
            return
        prev = _fit_threads(n * n * n // 3)
        info = _lapack_potrf_upper(n, out, n)
        _restore(prev)
        if info != 0:   # not positive definite (a NaN pivot included)
            for i in range(n):
                for j in range(i + 1):
                    out[i, j] = np.nan
                for j in range(i + 1, n):
                    out[i, j] = 0
    return impl


@njit(cache=True, nogil=True, error_model="numpy")
def cholesky_into(a, out):
    """out[b] = the lower Cholesky factor of a[b] (read from its lower triangle), a [nb, n, n]."""
    for b in range(a.shape[0]):
        _cholesky_one(a[b], out[b])


# -- products with a triangular matrix, and its inverse ------------------------------------
@njit(cache=True, nogil=True)
def _copy2(src, dst):
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[i, j] = src[i, j]


@njit(cache=True, nogil=True, error_model="numpy")
def _tri_matmul_loops(t, other, out, left, lower, trans):
    """out = op(T) @ other (``left``) or other @ op(T), T the lower (upper) triangle of ``t``."""
    n = t.shape[0]
    rows, cols = out.shape
    for i in range(rows):
        for j in range(cols):
            acc = 0.0
            for k in range(n):
                r, c = (i, k) if left else (k, j)    # the element of op(T) the term reads
                tr_, tc = (c, r) if trans else (r, c)
                if (tr_ >= tc) if lower else (tr_ <= tc):
                    acc += t[tr_, tc] * (other[k, j] if left else other[i, k])
            out[i, j] = acc


def _tri_matmul(t, other, out, left, lower, trans):
    _tri_matmul_loops(t, other, out, left, lower, trans)


@overload(_tri_matmul)
def _tri_matmul_impl(t, other, out, left, lower, trans):
    if not (_uses_numpy_lapack(t, other, out) and out.layout == "C"):
        def loops(t, other, out, left, lower, trans):
            _tri_matmul_loops(t, other, out, left, lower, trans)
        return loops

    def impl(t, other, out, left, lower, trans):
        rows, cols = out.shape
        _copy2(other, out)
        if rows == 0 or cols == 0:
            return
        n = t.shape[0]
        row_major, ldt = _layout(t)
        prev = _fit_threads(n * n * (cols if left else rows) // 2)
        side = LEFT if left else RIGHT
        if row_major < 0:
            tc = np.empty((n, n), t.dtype)
            _copy2(t, tc)
            _cblas_trmm(side, LOWER if lower else UPPER, TRANS if trans else NO_TRANS, rows, cols,
                        1.0, tc, n, out, cols)
        else:
            up_low = lower if row_major else not lower
            flip = trans if row_major else not trans
            _cblas_trmm(side, LOWER if up_low else UPPER, TRANS if flip else NO_TRANS, rows, cols,
                        1.0, t, ldt, out, cols)
        _restore(prev)
    return impl


@njit(cache=True, nogil=True, error_model="numpy")
def tri_matmul_into(t, other, out, left, lower, trans):
    """out = op(T) @ other (``left``) or other @ op(T): a product with a triangular matrix (BLAS
    trmm, half a GEMM's work), T the ``lower`` (or upper) triangle of ``t``, op: transposed when
    ``trans``; the other triangle of ``t`` is never read."""
    _tri_matmul(t, other, out, left, lower, trans)


_BASE = 32   # blocks this small are inverted by substitution


@njit(cache=True, nogil=True, error_model="numpy")
def _lower_inverse_block(a, o, s):
    """a[o:o+s, o:o+s] (lower triangular) := its inverse, by substitution."""
    x = np.zeros((s, s), a.dtype)
    for j in range(s):
        x[j, j] = 1 / a[o + j, o + j]
        for i in range(j + 1, s):
            acc = 0.0
            for k in range(j, i):
                acc += a[o + i, o + k] * x[k, j]
            x[i, j] = -acc / a[o + i, o + i]
    for i in range(s):
        for j in range(i + 1):
            a[o + i, o + j] = x[i, j]


def _lower_inverse(a):
    """a (C-contiguous, lower triangular, zero above) := inv(a)."""
    _lower_inverse_loops(a)


@njit(cache=True, nogil=True, error_model="numpy")
def _lower_inverse_loops(a):
    _lower_inverse_block(a, 0, a.shape[0])


@overload(_lower_inverse)
def _lower_inverse_impl(a):
    if not (_uses_numpy_lapack(a) and a.layout == "C"):
        def loops(a):
            _lower_inverse_loops(a)
        return loops

    def impl(a):
        """Recursive halving, unrolled: [[A, 0], [B, C]]^-1 = [[A^-1, 0], [-C^-1 B A^-1, C^-1]],
        the blocks of a split processed after both halves (reverse breadth-first order), each
        off-diagonal block by two trmm (no trsm: OpenBLAS's is 2-3x slower than its trmm)."""
        n = a.shape[0]
        cap = 2 * (n // (_BASE // 2) + 1) + 1
        offs = np.empty(cap, np.int64)
        sizes = np.empty(cap, np.int64)
        offs[0], sizes[0], count, i = 0, n, 1, 0
        while i < count:
            if sizes[i] > _BASE:
                h = sizes[i] // 2
                offs[count], sizes[count] = offs[i], h
                offs[count + 1], sizes[count + 1] = offs[i] + h, sizes[i] - h
                count += 2
            i += 1
        prev = _fit_threads(n * n * n // 3)
        for i in range(count - 1, -1, -1):
            o, s = offs[i], sizes[i]
            if s <= _BASE:
                _lower_inverse_block(a, o, s)
                continue
            h = s // 2
            low = a[o + h:o + s, o:o + h]
            _cblas_trmm(RIGHT, LOWER, NO_TRANS, s - h, h, -1.0, a[o:o + h, o:o + h], n, low, n)
            _cblas_trmm(LEFT, LOWER, NO_TRANS, s - h, h, 1.0, a[o + h:o + s, o + h:o + s], n, low, n)
        _restore(prev)
    return impl


@njit(cache=True, nogil=True, error_model="numpy")
def tri_inverse_into(t, out, lower, adjoint):
    """out = inv(op(T)), T the ``lower`` (or upper) triangle of ``t`` (op: transposed when
    ``adjoint``): the triangular solve against the identity, done as an inversion (a third
    of the work). Triangular: the other triangle is exact zeros; a zero pivot gives inf/nan."""
    n = t.shape[0]
    for i in range(n):                # the lower matrix M = T, or T^T for an upper T
        for j in range(i + 1):
            out[i, j] = t[i, j] if lower else t[j, i]
        for j in range(i + 1, n):
            out[i, j] = 0
    _lower_inverse(out)
    if lower == adjoint:              # inv(L^T) = inv(L)^T, inv(U) = inv(U^T)^T
        for i in range(n):
            for j in range(i):
                out[j, i] = out[i, j]
                out[i, j] = 0
