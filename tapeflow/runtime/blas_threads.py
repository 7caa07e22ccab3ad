"""How many threads NumPy's OpenBLAS uses: chosen per product from the free cores and its work.

On a shared machine a multi-threaded GEMM is as slow as its slowest thread: when one of
OpenBLAS's threads is descheduled the others spin until the scheduler runs it again (a tick,
~4 ms). A 32x784x128 product takes 0.4 ms on one thread and 5-9 ms on two on this 2-core
machine under load (benchmarks/README.md, W14); on a quiet machine two threads nearly halve
W2's products. So each product runs on as many threads as there are cores other processes
leave free (free_cores.py samples them in the background): on a quiet machine OpenBLAS's own
choice, on a busy one a single thread whose pool stays asleep. Where the free cores are not
known (no ``/proc/stat``), a product of fewer than ``SMALL_GEMM_WORK`` multiply-adds runs on
one thread and larger ones on the pool. Compiled programs do this per call (codegen/blas.py
reads ``get``/``set`` and the free-core count by address); ``fitting_threads`` does it around
a NumPy call.

The user's limits hold: OpenBLAS reads ``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS`` when it is
loaded, and ``set_intra_op_threads`` (``tf.config.threading.set_intra_op_parallelism_threads``,
or ``TF_NUM_INTRAOP_THREADS`` at import) sets OpenBLAS's and Numba's pools; the per-product
choice only ever lowers the count. Where NumPy has no OpenBLAS of its own (another vendor, a
source build), nothing here applies.
"""
import contextlib
import ctypes
import glob
import os
import sys

import numpy as np

from . import free_cores

SMALL_GEMM_WORK = 1 << 26     # multiply-adds (~2 ms on one core): below it one thread, if the
                              # free cores are not known
_SYMBOLS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_")
_intra_op = 0                 # the user's setting (0: not set)
_inter_op = 0


def numpy_openblas():
    """ctypes handle of the OpenBLAS NumPy's wheel loaded, or None."""
    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs, "libscipy_openblas64_*.so"))):
        try:
            return ctypes.CDLL(path)     # the same handle NumPy's dlopen got: same library
        except OSError:
            continue
    return None


def _functions():
    lib = numpy_openblas()
    if lib is None or not all(hasattr(lib, s) for s in _SYMBOLS):
        return None, None
    set_, get = (getattr(lib, s) for s in _SYMBOLS)
    set_.argtypes, set_.restype = [ctypes.c_int], None
    get.argtypes, get.restype = [], ctypes.c_int
    return set_, get


_set, _get = _functions()


def addresses():
    """{"set", "get"}: OpenBLAS's thread-count functions by address, or None."""
    if _set is None:
        return None
    return {"set": ctypes.cast(_set, ctypes.c_void_p).value,
            "get": ctypes.cast(_get, ctypes.c_void_p).value}


def blas_threads():
    """OpenBLAS's current thread count (1 where NumPy has none we can steer)."""
    return _get() if _get is not None else 1


def describe():
    """The policy in one line, with what it chooses now (for the dump's size classes)."""
    if _get is None:
        return "BLAS threads: NumPy has no OpenBLAS of its own here; its BLAS chooses"
    free_cores.measured()
    pool, free = _get(), free_cores.free.value
    if not free:
        return (f"BLAS threads: free cores not known here; products under {SMALL_GEMM_WORK:,} "
                f"multiply-adds on 1 thread, larger ones on the pool of {pool}")
    return (f"BLAS threads: chosen at each call from the cores other processes leave free "
            f"(now {free} of {len(free_cores._our_cpus())}): each product on "
            f"{threads_for(0, pool)} of the pool's {pool}")


def threads_for(work, pool):
    """The thread count a product of ``work`` multiply-adds runs with, out of ``pool``."""
    free = free_cores.free.value
    if not free:
        return 1 if work < SMALL_GEMM_WORK else pool
    return min(free, pool)


@contextlib.contextmanager
def fitting_threads(work):
    """Run the block's BLAS calls on as many threads as fit the machine now (``threads_for``)."""
    if _get is None:
        yield
        return
    free_cores.start()
    prev = _get()
    n = threads_for(work, prev)
    if n >= prev:
        yield
        return
    _set(n)
    try:
        yield
    finally:
        _set(prev)


def _thread_count(n, what):
    n = int(n)
    if n < 0:
        raise ValueError(f"{what} parallelism must be >= 0, got {n}")
    return n


def set_intra_op_threads(n):
    """The most threads one op may use (0: the machine's default): OpenBLAS's and Numba's pools."""
    global _intra_op
    n = _intra_op = _thread_count(n, "intra-op")
    count = n or os.cpu_count() or 1
    if _set is not None:
        _set(count)
    numba = sys.modules.get("numba")    # not imported here: Numba's import cost
    if numba is not None:
        apply_to_numba(numba, reset=not n)


def apply_to_numba(numba, reset=False):
    """Numba's pool follows the user's setting (called when codegen imports Numba, too);
    ``reset``: the setting went back to 0, so does Numba's pool to its default."""
    limit = numba.config.NUMBA_NUM_THREADS
    if _intra_op or reset:
        numba.set_num_threads(min(_intra_op or limit, limit))


def intra_op_threads():
    return _intra_op


def set_inter_op_threads(n):
    """Recorded for ``get_inter_op_parallelism_threads``: tapeflow runs one op at a time."""
    global _inter_op
    _inter_op = _thread_count(n, "inter-op")


def inter_op_threads():
    return _inter_op


if os.environ.get("TF_NUM_INTRAOP_THREADS", "").strip().isdigit():
    set_intra_op_threads(int(os.environ["TF_NUM_INTRAOP_THREADS"]))
if os.environ.get("TF_NUM_INTEROP_THREADS", "").strip().isdigit():
    set_inter_op_threads(int(os.environ["TF_NUM_INTEROP_THREADS"]))
