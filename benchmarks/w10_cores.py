"""How many cores one tapeflow process keeps busy on W10's full-batch gradients.

``python -m benchmarks.w10_cores`` times the one-process gradient of each W10 model (the
median of 7 calls) and divides the process's CPU seconds by the wall seconds: 2.0 means both
cores busy throughout. Run it again with ``NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1`` for
one core: the ratio of the two walls is what a second core gives, the bound on what two
single-threaded workers on the same machine can gain (docs/distribute.md).
"""
import os
import resource
import time

import numpy as np

from .workloads import w10


def _cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    inp = w10.inputs(w10.params(False))
    for model in w10.MODELS:
        fn, args = w10._tapeflow_one_process(model, list(w10.initial(model).values()),
                                             inp["x"], inp["y"])
        fn(*args)
        rows = []
        for _ in range(7):
            c0, t0 = _cpu(), time.perf_counter()
            fn(*args)
            rows.append((time.perf_counter() - t0, _cpu() - c0))
        wall, cpu = sorted(rows)[len(rows) // 2]
        print(f"{model}: wall {wall * 1e3:.0f} ms, cpu {cpu * 1e3:.0f} ms, cores busy "
              f"{cpu / wall:.2f} (NUMBA_NUM_THREADS={os.environ.get('NUMBA_NUM_THREADS', 'default')}, "
              f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'default')})", flush=True)


if __name__ == "__main__":
    main()
