"""Synthetic load for timing under a busy machine (``--load N``, BENCHMARKS.md).

``busy(n)`` keeps ``n`` single-threaded busy-loop processes and one multi-threaded NumPy job
(a loop of 512x512 products on NumPy's default thread count) running for the block: the
shared-machine conditions of issue 26. Each process ends on its own after ``seconds`` at
most, and the block ends them all (by pid) when it exits.
"""
import contextlib
import subprocess
import sys

SPIN = "import time\nend = time.time() + {s}\nwhile time.time() < end:\n    pass\n"
NUMPY_JOB = ("import time, numpy as np\nend = time.time() + {s}\na = np.random.rand(512, 512)\n"
             "while time.time() < end:\n    a @ a\n")


@contextlib.contextmanager
def busy(n, seconds=3600, numpy_job=True):
    """``n`` busy processes (and the NumPy job) running inside the block."""
    procs = []
    try:
        for _ in range(n):
            procs.append(subprocess.Popen([sys.executable, "-c", SPIN.format(s=seconds)]))
        if numpy_job and n:
            procs.append(subprocess.Popen([sys.executable, "-c", NUMPY_JOB.format(s=seconds)]))
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()
