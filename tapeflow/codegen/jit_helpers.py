"""Small jitted helpers that generated programs call (the NumPy-kernel semantics, per element).

Generated code calls these as ``rt.name(...)`` rather than spelling the logic out, so the
source stays readable and the semantics live in one tested place. They are ordinary
``@njit(cache=True)`` functions: LLVM inlines them into the program's loops.
"""
import numpy as np
from numba import njit, types

from ..runtime.printing import print_values  # noqa: F401  (PrintV2's template calls it in objmode)
from .blas import dot, dot_into, fit_parallel, restore_parallel  # noqa: F401  (generated code calls rt.dot)
from .linalg_rt import *  # noqa: F401,F403  (the linear algebra templates' helpers)

_JIT = dict(cache=True, error_model="numpy", nogil=True)


class SizeCheck(ValueError):
    """A size only the run knows broke what the program assumed of it (codegen/shape_free.py,
    ``RunDim``): the caller runs the call on the interpreter instead (failures.py)."""


@njit(**_JIT)
def maximum(a, b):
    """np.maximum: nan wins, and on a tie the second argument is returned (as NumPy does)."""
    return a if (a > b or a != a) else b


@njit(**_JIT)
def minimum(a, b):
    return a if (a < b or a != a) else b


@njit(**_JIT)
def sign(x):
    """np.sign: -1, 0 or 1 in x's type; nan stays nan."""
    if x > 0:
        return 1
    if x < 0:
        return -1
    return 0 if x == 0 else x


@njit(**_JIT)
def floormod_float(x, y):
    """TensorFlow's float floormod: fmod, shifted by y when the signs differ."""
    r = np.fmod(x, y)
    return r + y if (r != 0 and ((y < 0) != (r < 0))) else r


@njit(**_JIT)
def floordiv_int(x, y):
    if y == 0:
        raise ValueError("Integer division by zero")
    return x // y


@njit(**_JIT)
def floormod_int(x, y):
    if y == 0:
        raise ValueError("Integer division by zero")
    return x % y


@njit(**_JIT)
def truncatediv_int(x, y):
    """C's integer division (toward zero), TensorFlow's TruncateDiv."""
    if y == 0:
        raise ValueError("Integer division by zero")
    q = x // y
    if q < 0 and q * y != x:
        q += 1
    return q


@njit(**_JIT)
def truncatemod_int(x, y):
    """C's remainder: the sign of x (TensorFlow's TruncateMod)."""
    if y == 0:
        raise ValueError("Integer division by zero")
    return x - truncatediv_int(x, y) * y


@njit(**_JIT)
def power_int(x, y):
    """np.power for integers: wraps like NumPy (the caller casts), refuses negative exponents."""
    if y < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")
    result = 1
    base = x
    e = y
    while e > 0:
        if e & 1:
            result = result * base
        base = base * base
        e >>= 1
    return result


@njit(**_JIT)
def mean_int(total, n):
    """Integer mean: truncate toward zero (TensorFlow's C division)."""
    q = total // n
    if total % n != 0 and total < 0:
        q += 1
    return q


@njit(**_JIT)
def matmul_loops(a, b, out):
    """out = a @ b for 2-D arrays of any layout (integers: Numba's np.dot is float-only)."""
    m, k = a.shape
    n = b.shape[1]
    for i in range(m):
        for j in range(n):
            out[i, j] = 0
        for p in range(k):
            aip = a[i, p]
            for j in range(n):
                out[i, j] += aip * b[p, j]


@njit(**_JIT)
def split_sizes(sizes, n):
    """SplitV's sizes at run time: at most one -1, filled in so they add up to ``n`` (the
    split axis); anything else the kernel refuses raises ValueError (failures.py)."""
    out = np.empty(sizes.size, np.int64)
    unknown, total = -1, 0
    for k in range(sizes.size):
        s = np.int64(sizes[k])
        if s == -1 and unknown < 0:
            unknown = k
        elif s < 0:
            raise ValueError("SplitV: a size is negative")
        else:
            total += s
        out[k] = s
    if unknown >= 0 and total <= n:
        out[unknown] = n - total
    elif total != n:
        raise ValueError("SplitV: the sizes do not add up to the dimension")
    return out


# -- memory ------------------------------------------------------------------------------------

_madvise = types.ExternalFunction("madvise", types.intc(types.uintp, types.uintp, types.intc))
MADV_HUGEPAGE = 14


@njit(**_JIT)
def hugepages(a):
    """Ask Linux for transparent huge pages under a fresh array, as NumPy does for arrays of
    4 MB or more: a new buffer then faults in 2 MB pages, not one fault per 4 KB page, which
    is a visible part of a step that allocates large gradients on every call. Advice only:
    ignored where THP is off or not Linux. Arrays under 4 MB are left alone: a program whose
    sizes are read at run time asks for any array that may be that big."""
    if a.nbytes < 4 << 20:
        return
    data = a.ctypes.data
    start = data & ~np.uintp(4095)
    _madvise(start, data - start + np.uintp(a.nbytes), MADV_HUGEPAGE)


@njit(**_JIT)
def fresh_copy(a):
    """A C-contiguous copy of ``a`` in fresh memory that asks for huge pages before it is
    written (a loop's own copy of a list: ``.copy()`` would fault every 4 KB page)."""
    out = np.empty(a.shape, a.dtype)
    hugepages(out)
    out[...] = a
    return out


# -- BLAS/LAPACK, wrapped so their (heavy) compilation lands in Numba's disk
# cache once per signature instead of being redone inside every program that uses them.
# ``dot``/``dot_into`` live in blas.py: Numba's cache of a function is keyed by its own
# file's stamp, so a change to the GEMM calls must be in the same file to invalidate them.


@njit(**_JIT)
def solve(a, b):
    return np.ascontiguousarray(np.linalg.solve(a, b))


@njit(**_JIT)
def inv(a):
    return np.ascontiguousarray(np.linalg.inv(a))


@njit(**_JIT)
def det(a):
    return np.linalg.det(a)


@njit(**_JIT)
def cholesky(a):
    return cholesky_or_nan(a)  # noqa: F405


# -- special functions (their own module: special_math.py) ------------------------------------
from .special_math import (bessel_i0, bessel_i0e, bessel_i1, bessel_i1e, betainc, digamma,  # noqa: E402,F401
                           erfinv, igamma, igamma_grad_a, igammac, ndtri, polygamma, zeta)
from .scan_helpers import cumlogsumexp3, cumprod3, cumsum3  # noqa: E402,F401
from .index_helpers import gather_nd, scatter_nd  # noqa: E402,F401
from .index_helpers import in_top_k, top_k  # noqa: E402,F401

# -- TensorFlow's stateless random numbers (runtime/philox.py) ---------------------------------
from ..runtime.philox import full_int as philox_full_int, normal as philox_normal  # noqa: E402,F401
from ..runtime.philox import from_words as philox_from_words, uniform as philox_uniform  # noqa: E402,F401
from ..runtime.philox import key_counter as philox_key_counter  # noqa: E402,F401
from ..runtime.philox import truncated_normal as philox_truncated_normal  # noqa: E402,F401
from ..runtime.philox import uniform_int as philox_uniform_int  # noqa: E402,F401
from ..runtime.philox_samplers import binomial as philox_binomial  # noqa: E402,F401
from ..runtime.philox_samplers import binomial_plan as philox_binomial_plan  # noqa: E402,F401
from ..runtime.philox_samplers import gamma as philox_gamma  # noqa: E402,F401
from ..runtime.philox_samplers import index_shuffle as philox_index_shuffle  # noqa: E402,F401
from ..runtime.philox_samplers import multinomial as philox_multinomial  # noqa: E402,F401
from ..runtime.philox_samplers import poisson as philox_poisson  # noqa: E402,F401
from ..runtime.philox_samplers import (  # noqa: E402,F401
    parameterized_truncated_normal as philox_parameterized_truncated_normal)
from ..runtime.kernels.fractional_pool import pooling_sequence as fractional_sequence  # noqa: E402,F401
from .conv_loops import (conv_direct_filter, conv_direct_fwd, conv_direct_input,  # noqa: E402,F401
                         conv_filter_gemm, conv_gemm, conv_input_gemm, pool_avg, pool_max, pool_max_grad)  # (generated code calls rt.conv_*, rt.pool_*)
