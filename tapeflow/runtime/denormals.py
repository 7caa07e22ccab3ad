"""Denormal floats flushed to zero around a training step, as TensorFlow's CPU kernels run.

TensorFlow sets the SSE flags FTZ (results that would be denormal become 0) and DAZ
(denormal inputs read as 0) on the threads that run its kernels (``port::ScopedFlushDenormal``),
so a Keras step never computes with denormals. Without them, a step is several times slower
once values decay into the denormal range: Adam's first moments of weights whose gradients
are 0 (a dead ReLU unit's) shrink by ``beta_1`` a step and are denormal after ~800 steps; in
one epoch of W14 most of the first layer's moments get there. ``flush_denormals()`` sets
both flags on the calling thread for a ``with`` block and restores the caller's; ``fit``,
``evaluate`` and ``predict`` run each step inside it (only the step: user code and callbacks
between steps see the thread as they left it).

The flags are read and written through the C library's ``fegetenv``/``fesetenv`` (the MXCSR
word of glibc's x86-64 ``fenv_t``); elsewhere ``flush_denormals()`` does nothing.
"""
import ctypes
import ctypes.util
import platform
import sys

FTZ_DAZ = 0x8040    # MXCSR bit 15 (flush to zero) and bit 6 (denormals are zero)


class _Env(ctypes.Structure):
    """glibc's x86-64 ``fenv_t``: the x87 environment (28 bytes), then MXCSR."""
    _fields_ = [("x87", ctypes.c_ubyte * 28), ("mxcsr", ctypes.c_uint32)]


def _functions():
    if sys.platform != "linux" or platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    try:
        libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        get, put = libm.fegetenv, libm.fesetenv
    except (OSError, AttributeError):
        return None
    get.argtypes = put.argtypes = [ctypes.POINTER(_Env)]
    get.restype = put.restype = ctypes.c_int
    return get, put


_FUNCTIONS = _functions()


class flush_denormals:  # noqa: N801 - used like a function: ``with flush_denormals():``
    """Within the block the calling thread flushes denormals to zero (FTZ and DAZ); the
    caller's flags come back after it. Not re-entrant per object: make one per block."""

    __slots__ = ("_saved",)

    def __init__(self):
        self._saved = None

    def __enter__(self):
        if _FUNCTIONS is None:
            return self
        env = _Env()
        _FUNCTIONS[0](env)
        if env.mxcsr & FTZ_DAZ != FTZ_DAZ:
            self._saved = env.mxcsr
            env.mxcsr |= FTZ_DAZ
            _FUNCTIONS[1](env)
        return self

    def __exit__(self, *exc):
        if self._saved is not None:
            env = _Env()
            _FUNCTIONS[0](env)
            env.mxcsr = (env.mxcsr & ~FTZ_DAZ) | (self._saved & FTZ_DAZ)
            _FUNCTIONS[1](env)
            self._saved = None
        return False


def flushing():
    """Whether the calling thread flushes denormals now (False where the flags are not read)."""
    if _FUNCTIONS is None:
        return False
    env = _Env()
    _FUNCTIONS[0](env)
    return env.mxcsr & FTZ_DAZ == FTZ_DAZ


__all__ = ["flush_denormals", "flushing", "FTZ_DAZ"]
