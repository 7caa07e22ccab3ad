"""Where a prange loop starts to pay on this machine (not a test: `python bench_parallel.py`).

For an add (cost 1) and an exp (cost ~8) over n float32 elements, compile the one-op program
serial and parallel and time both, interleaved; prints the ratio. ``emitter.PARALLEL_WORK`` is
set where parallel wins for both ops: n x cost per element.
"""
import sys
import time

import numpy as np

from tapeflow.codegen import compile_graph, emitter
from tapeflow.ir import dtypes as D
from tapeflow.ir.graph import Graph, Value
from tapeflow.ir.opdef import OPS, AVal


def program(op, n, parallel):
    g = Graph()
    x = Value(AVal((n,), D.float32))
    g.inputs = [x]
    ins = [x, x] if op == "Add" else [x]
    out = OPS[op].infer([v.aval for v in ins])
    g.outputs = g.add(op, ins, {}, [out]).outputs
    saved = emitter.PARALLEL_WORK
    emitter.PARALLEL_WORK = 0 if parallel else float("inf")
    try:
        return compile_graph(g, f"bench_{op}_{n}_{int(parallel)}")
    finally:
        emitter.PARALLEL_WORK = saved


def timeit(f, x, reps):
    best = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(reps):
            f(x)
        best.append((time.perf_counter() - t) / reps)
    return min(best), float(np.median(best))


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 4000, 8000, 16000, 32000, 64000, 128000, 512000]
    for op in ("Add", "Exp"):
        for n in sizes:
            x = np.random.default_rng(0).uniform(-5, 5, n).astype(np.float32)
            ser, par = program(op, n, False), program(op, n, True)
            reps = max(20, 2_000_000 // n)
            s, p = timeit(ser, x, reps), timeit(par, x, reps)
            print(f"{op:4s} n={n:8d} serial {s[0] * 1e6:9.1f} us  parallel {p[0] * 1e6:9.1f} us  "
                  f"parallel/serial {p[0] / s[0]:.2f}")


if __name__ == "__main__":
    main()
