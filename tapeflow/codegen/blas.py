"""GEMM in compiled programs through NumPy's own OpenBLAS, not SciPy's.

Numba's ``np.dot`` calls SciPy's ``cython_blas``: a second OpenBLAS (another version, another
thread pool) beside the one NumPy links. Its GEMM is not the one NumPy's users get (slower
on our machines: figures in benchmarks/README.md, "Evidence behind codegen choices"), so a
compiled training step could not match hand-written NumPy doing the same products; and two
pools of spinning threads slow each other down when NumPy and compiled code alternate.

NumPy's wheels ship ``scipy_openblas64_`` (ILP64) and export ``scipy_cblas_sgemm64_`` /
``scipy_cblas_dgemm64_``. At import we look those up in the library NumPy loaded and
register them with LLVM under names of our own (``llvmlite.binding.add_symbol``); the
generated code calls them by name, so Numba's on-disk cache keeps working (the address is
resolved when the cached code is linked, in each process). Where NumPy has no such library
(another BLAS vendor, a source build), ``gemm`` is Numba's ``np.dot`` as before.

``gemm(a, b, out)``: ``out[...] = a @ b`` for 2-D float32/float64 arrays of any strides
(a row- or column-major operand is passed as is with its transpose flag, anything else is
copied first; an output whose rows are not contiguous gets the product through a temporary;
a product with one row or one column is a GEMV, as in NumPy's matmul); other dtypes and
ranks go to ``np.dot``.

Threads: each product runs on as many OpenBLAS threads as other processes leave cores free
(runtime/blas_threads.py, free_cores.py): the free-core count is read from memory by address
and, where it is lower than the pool, OpenBLAS is set to it for the call and back (two calls
of a few nanoseconds, by address like the GEMM), so on a busy machine products never wake the
pool whose threads spin. Where the count is not known, products below ``SMALL_GEMM_WORK``
multiply-adds run on one thread.
"""
import ctypes

import numpy as np
from llvmlite import binding as llb
from llvmlite import ir
import numba
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from ..runtime import blas_threads, free_cores

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
_SYMBOLS = {np.float32: ("scipy_cblas_sgemm64_", "tapeflow_numpy_sgemm"),
            np.float64: ("scipy_cblas_dgemm64_", "tapeflow_numpy_dgemm")}
# GEMV for a product with one row or one column (X @ w of a linear model): OpenBLAS's GEMM
# takes 4-6x longer there (NumPy's matmul calls GEMV too); registered only with the GEMM
_GEMV = {np.float32: ("scipy_cblas_sgemv64_", "tapeflow_numpy_sgemv"),
         np.float64: ("scipy_cblas_dgemv64_", "tapeflow_numpy_dgemv")}


def register_numpy_symbols(tables):
    """Our symbol names -> NumPy's entry points, for each ``{dtype: (NumPy's name, ours)}``
    of ``tables`` (lapack.py's too); the dtypes that have all of them."""
    lib = blas_threads.numpy_openblas()   # the library NumPy loaded
    found = set()
    if lib is None:
        return found
    for dtype in tables[0]:
        try:
            addrs = [(ours, ctypes.cast(getattr(lib, theirs), ctypes.c_void_p).value)
                     for theirs, ours in (table[dtype] for table in tables)]
        except AttributeError:
            continue
        for ours, addr in addrs:
            llb.add_symbol(ours, addr)
        found.add(dtype)
    return found


NUMPY_GEMM = frozenset(register_numpy_symbols([_SYMBOLS, _GEMV]))


def _register_threads():
    """Our names for OpenBLAS's thread-count functions (runtime/blas_threads.py) and the
    free-core count (free_cores.py, read by products and parallel loops); whether OpenBLAS's
    were found."""
    free_cores.start()
    llb.add_symbol("tapeflow_free_cores", free_cores.address())
    if not NUMPY_GEMM:
        return False
    found = blas_threads.addresses()
    if found is None:
        return False
    llb.add_symbol("tapeflow_blas_set_threads", found["set"])
    llb.add_symbol("tapeflow_blas_get_threads", found["get"])
    return True


STEER_THREADS = _register_threads()
# runtime/blas_threads.SMALL_GEMM_WORK, as a literal here: Numba's cache checks this file only
SMALL_GEMM_WORK = 1 << 26
blas_threads.apply_to_numba(numba)    # the user's intra-op setting, now that Numba is loaded


@intrinsic
def _get_threads(typingctx):
    """OpenBLAS's thread count."""
    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i32, []),
                                            "tapeflow_blas_get_threads")
        return builder.sext(builder.call(fn, []), ir.IntType(64))
    return types.int64(), codegen


@intrinsic
def _set_threads(typingctx, n):
    """Set OpenBLAS's thread count."""
    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i32]),
                                            "tapeflow_blas_set_threads")
        builder.call(fn, [builder.trunc(args[0], i32)])
        return context.get_dummy_value()
    return types.void(types.int64), codegen


@intrinsic
def _free_cores(typingctx):
    """The free-core count runtime/free_cores.py keeps (0: not known), read from its address."""
    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        gv = builder.module.globals.get("tapeflow_free_cores")
        if gv is None:
            gv = ir.GlobalVariable(builder.module, i64, "tapeflow_free_cores")
            gv.linkage = "external"
        return builder.load_atomic(gv, "monotonic", 8)
    return types.int64(), codegen


if STEER_THREADS:
    @njit(cache=True, nogil=True)
    def _fit_threads(work):
        """Before a product: its thread count fits the free cores (blas_threads.threads_for);
        the count to restore after it (0: none)."""
        prev = _get_threads()
        free = _free_cores()
        if free == 0:
            n = 1 if work < SMALL_GEMM_WORK else prev
        else:
            n = min(free, prev)
        if n < prev:
            _set_threads(n)
            return prev
        return 0

    @njit(cache=True, nogil=True)
    def _restore(prev):
        if prev:
            _set_threads(prev)
else:
    @njit(cache=True, nogil=True)
    def _fit_threads(work):
        return 0

    @njit(cache=True, nogil=True)
    def _restore(prev):
        pass


def fit_parallel():
    """Before a program with parallel loops runs (its Python caller calls this): Numba's pool,
    for this thread, limited to the cores other processes leave free, as products are (a
    worker without a core stalls the whole parallel region); the count to restore (0: none).
    Python, not jitted: Numba's own jitted thread-count calls would make programs uncachable."""
    free = free_cores.free.value
    if not free:
        return 0
    prev = numba.get_num_threads()
    if free < prev:
        numba.set_num_threads(free)
        return prev
    return 0


def restore_parallel(prev):
    if prev:
        numba.set_num_threads(prev)


def _data_pointer(context, builder, aryty, val):
    """An array argument's data as the ``i8*`` the CBLAS calls take."""
    ptr = ir.IntType(8).as_pointer()
    return builder.bitcast(context.make_array(aryty)(context, builder, val).data, ptr)


@intrinsic
def _cblas_gemm(typingctx, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc):
    """cblas_?gemm(RowMajor, ta, tb, m, n, k, 1, a, lda, b, ldb, 0, c, ldc) on NumPy's BLAS."""
    dtype = c.dtype
    name = _SYMBOLS[np.dtype(str(dtype)).type][1]
    sig = types.void(types.int32, types.int32, types.int64, types.int64, types.int64,
                     a, types.int64, b, types.int64, c, types.int64)

    def codegen(context, builder, signature, args):
        ta, tb, m_, n_, k_, a_, lda_, b_, ldb_, c_, ldc_ = args
        flt = context.get_value_type(dtype)
        i32, i64, ptr = ir.IntType(32), ir.IntType(64), ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i32, i32, i32, i64, i64, i64, flt, ptr, i64,
                                               ptr, i64, flt, ptr, i64])
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)

        def data(k, val):
            return _data_pointer(context, builder, signature.args[k], val)

        builder.call(fn, [i32(ROW_MAJOR), ta, tb, m_, n_, k_, flt(1.0), data(5, a_), lda_,
                          data(7, b_), ldb_, flt(0.0), data(9, c_), ldc_])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _cblas_gemv(typingctx, trans, m, n, a, lda, x, y):
    """cblas_?gemv(RowMajor, trans, m, n, 1, a, lda, x, 1, 0, y, 1) on NumPy's BLAS: ``y =
    op(a) @ x`` for ``a`` stored row-major as m x n, ``x`` and ``y`` contiguous."""
    dtype = y.dtype
    name = _GEMV[np.dtype(str(dtype)).type][1]
    sig = types.void(types.int32, types.int64, types.int64, a, types.int64, x, y)

    def codegen(context, builder, signature, args):
        t, m_, n_, a_, lda_, x_, y_ = args
        flt = context.get_value_type(dtype)
        i32, i64, ptr = ir.IntType(32), ir.IntType(64), ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i32, i32, i64, i64, flt, ptr, i64, ptr, i64,
                                               flt, ptr, i64])
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)

        def data(k, val):
            return _data_pointer(context, builder, signature.args[k], val)

        builder.call(fn, [i32(ROW_MAJOR), t, m_, n_, flt(1.0), data(3, a_), lda_, data(5, x_),
                          i64(1), flt(0.0), data(6, y_), i64(1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True)
def _layout(x):
    """(transpose flag, leading dimension) passing ``x`` to row-major GEMM as is; (0, 0) if
    its strides fit neither (then it is copied)."""
    r, c = x.shape
    item = x.itemsize
    s0, s1 = x.strides
    if (s1 == item or c == 1) and s0 > 0 and s0 % item == 0 and s0 // item >= max(1, c):
        return NO_TRANS, s0 // item
    if (s0 == item or r == 1) and s1 > 0 and s1 % item == 0 and s1 // item >= max(1, r):
        return TRANS, s1 // item
    return 0, 0


@njit(cache=True, nogil=True)
def _copy(src, dst):
    """dst[:, :] = src as plain loops (slice assignment costs far more to compile)."""
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[i, j] = src[i, j]


@njit(cache=True, nogil=True)
def _gemm_copied(a, b, out):
    """The rare case (strides BLAS cannot take): C-contiguous copies in, the product through a
    temporary; ``out`` of zero depth gets zeros."""
    m, k = a.shape
    n = b.shape[1]
    ac = np.empty((m, k), a.dtype)
    bc = np.empty((k, n), b.dtype)
    tmp = np.zeros((m, n), out.dtype)
    _copy(a, ac)
    _copy(b, bc)
    if m and n and k:
        _cblas_gemm(NO_TRANS, NO_TRANS, m, n, k, ac, k, bc, n, tmp, n)
    _copy(tmp, out)


def gemm(a, b, out):
    """out = a @ b (the Python version: tests compare the compiled one against it)."""
    np.dot(a, b, out)


@overload(gemm)
def _gemm_impl(a, b, out):
    ok = (isinstance(a, types.Array) and isinstance(b, types.Array) and isinstance(out, types.Array)
          and a.ndim == b.ndim == out.ndim == 2 and a.dtype == b.dtype == out.dtype
          and str(a.dtype) in ("float32", "float64")
          and np.dtype(str(a.dtype)).type in NUMPY_GEMM)
    if not ok:
        def impl(a, b, out):
            np.dot(a, b, out)
        return impl

    if a.layout in "CF" and b.layout in "CF" and out.layout == "C":
        # what generated programs pass (C arrays and their .T): flags known when compiling,
        # nothing to check at run time, and nothing more to compile
        ta = NO_TRANS if a.layout == "C" else TRANS
        tb = NO_TRANS if b.layout == "C" else TRANS

        def impl(a, b, out):
            m, k = a.shape
            n = b.shape[1]
            if m and n and k:
                prev = _fit_threads(m * n * k)
                lda = k if ta == NO_TRANS else m
                ldb = n if tb == NO_TRANS else k
                # one column or one row: GEMV on the stored matrix (a C array's or an F
                # array's elements are contiguous when it has one row or column)
                if n == 1 and m > 1:
                    if ta == NO_TRANS:
                        _cblas_gemv(NO_TRANS, m, k, a, lda, b, out)
                    else:
                        _cblas_gemv(TRANS, k, m, a, lda, b, out)
                elif m == 1 and n > 1:
                    if tb == NO_TRANS:
                        _cblas_gemv(TRANS, k, n, b, ldb, a, out)
                    else:
                        _cblas_gemv(NO_TRANS, n, k, b, ldb, a, out)
                else:
                    _cblas_gemm(ta, tb, m, n, k, a, lda, b, ldb, out, n)
                _restore(prev)
            else:
                for i in range(m):
                    for j in range(n):
                        out[i, j] = 0
        return impl

    def impl(a, b, out):
        m, k = a.shape
        n = b.shape[1]
        ta, lda = _layout(a)
        tb, ldb = _layout(b)
        tc, ldc = _layout(out)
        prev = _fit_threads(m * n * k)
        if ta and tb and tc == NO_TRANS and m and n and k:
            _cblas_gemm(ta, tb, m, n, k, a, lda, b, ldb, out, ldc)
        else:
            _gemm_copied(a, b, out)
        _restore(prev)
    return impl


@njit(cache=True, error_model="numpy", nogil=True)
def dot(a, b):
    """a @ b for 2-D float arrays (any strides), on NumPy's BLAS where it has one."""
    out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    gemm(a, b, out)
    return out


@njit(cache=True, error_model="numpy", nogil=True)
def dot_into(a, b, out):
    """out[...] = a @ b."""
    gemm(a, b, out)
