"""``python -m benchmarks [--workloads W1,W2] [--quick] ...``: run, print one table per workload,
write ``benchmarks/results/<time>-<backend>.json``.

Run from a checkout (the repository root on ``sys.path``). ``--backend`` sets
TAPEFLOW_BACKEND before tapeflow is imported, so W6's fresh processes use it too.
"""
import argparse
import dataclasses
import datetime
import os
import shutil
import sys
import tempfile
import time


def _parse(argv):
    from .workloads import ORDER
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default=None,
                    help=f"comma-separated ids (default: all available of {','.join(ORDER)})")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: few samples, smaller W3/W7, one W6 process each")
    ap.add_argument("--backend", choices=("numba", "numpy"), default=None,
                    help="tapeflow backend for the compiled contender (default: TAPEFLOW_BACKEND "
                         "or numba)")
    ap.add_argument("--peers", default="jax,tensorflow,torch",
                    help="optional frameworks to try when importable, comma-separated, or 'none'")
    ap.add_argument("--no-isolate", action="store_true",
                    help="measure the peers in this process too (their idle thread pools then "
                         "slow the others down; see benchmarks/peers.py)")
    ap.add_argument("--peer-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--samples", type=int, default=None, help="samples per contender (max)")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds of timing per workload (bounds the samples; min samples still run)")
    ap.add_argument("--cache", choices=("cold", "keep"), default="cold",
                    help="cold (default): tapeflow and Numba caches in a fresh temporary directory, "
                         "so 'compile s' is a full compile; keep: use TAPEFLOW_CACHE_DIR as set")
    ap.add_argument("--blas-threads", type=int, default=None,
                    help="set OPENBLAS/OMP/MKL_NUM_THREADS (only effective before NumPy is imported, "
                         "i.e. with python -m benchmarks)")
    ap.add_argument("--out", default=None, help="results directory (default: benchmarks/results)")
    ap.add_argument("--no-write", action="store_true", help="do not write a results file")
    return ap.parse_args(argv)


def main(argv=None):
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.backend:
        os.environ["TAPEFLOW_BACKEND"] = args.backend
    if args.blas_threads is not None:
        if "numpy" in sys.modules:
            print("warning: --blas-threads ignored: NumPy is already imported (set "
                  "OPENBLAS_NUM_THREADS in the environment instead)", file=sys.stderr)
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.blas_threads)
    cache_root = None
    if args.cache == "cold":
        cache_root = tempfile.mkdtemp(prefix="tapeflow-bench-cache-")
        os.environ["TAPEFLOW_CACHE_DIR"] = os.path.join(cache_root, "tapeflow")
        os.environ["NUMBA_CACHE_DIR"] = os.path.join(cache_root, "numba")
        if "numba" in sys.modules:
            sys.modules["numba"].config.reload_config()
    try:
        return _run(args, argv)
    finally:
        if cache_root:
            shutil.rmtree(cache_root, ignore_errors=True)


def _run(args, argv):
    from . import harness, workloads

    wanted = workloads.available() if args.workloads is None else \
        [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = [w for w in wanted if w not in workloads.MODULES]
    if unknown:
        known = ", ".join(workloads.available())
        planned = [w for w in unknown if w in workloads.PLANNED]
        raise SystemExit(f"benchmarks: unknown workload(s) {', '.join(unknown)}; available: {known}"
                         + (f" ({', '.join(planned)} not written yet)" if planned else ""))
    peers = () if args.peers.strip() == "none" else tuple(p.strip() for p in args.peers.split(","))
    bad = [p for p in peers if p not in harness.PEERS]
    if bad:
        raise SystemExit(f"benchmarks: unknown peer(s) {', '.join(bad)}; known: {', '.join(harness.PEERS)}")
    opts = harness.Options.for_mode(args.quick, samples=args.samples, budget_s=args.budget,
                                    peers=peers, isolate=not args.no_isolate)
    if args.peer_child:   # one peer's own process (peers.run_isolated): one result, as JSON
        from . import peers as peer_mod
        opts.tapeflow, opts.isolate = False, False
        peer_mod.emit(workloads.load(wanted[0]).run(opts))
        return 0

    import tapeflow
    backend = os.environ.get("TAPEFLOW_BACKEND", "numba")
    tapeflow.set_backend(backend)
    codegen = _codegen_status()
    mach = harness.machine()
    print(f"tapeflow bench: backend={backend} (codegen: {codegen}), quick={opts.quick}, "
          f"{mach['cpus_usable']} usable CPUs of {mach['cpu_count']}, {mach['cpu_model']}, "
          f"numpy {mach['versions']['numpy']}, numba {mach['versions'].get('numba')}, "
          f"load {', '.join(f'{x:.2f}' for x in mach['load_average'] or [])}", flush=True)
    load = (mach["load_average"] or [0])[0]
    if mach["cpus_usable"] and load > 0.5 * mach["cpus_usable"]:
        print(f"warning: the machine is busy (load {load:.2f} on {mach['cpus_usable']} CPUs): "
              f"multi-threaded BLAS (W2, W7) and parallel loops (W3) suffer most; ratios still "
              f"compare contenders measured side by side", flush=True)
    report = {
        "suite": "tapeflow-benchmarks", "schema": 1,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "argv": list(sys.argv[1:] if argv is None else argv),
        "config": {"backend": backend, "codegen": codegen, "quick": opts.quick, "cache": args.cache,
                   "blas_threads": args.blas_threads,
                   "samples": opts.samples, "min_samples": opts.min_samples,
                   "budget_s": opts.budget_s, "sample_s": opts.sample_s, "peers": list(peers),
                   "isolate_peers": opts.isolate},
        "machine": mach,
        "workloads": {},
        "not_measured": [{"id": w, "reason": "workload not in the suite yet"}
                         for w in workloads.PLANNED if args.workloads is None],
    }
    t_all = time.perf_counter()
    for wid in wanted:
        t0, load0 = time.perf_counter(), _load()
        result = _run_workload(workloads.load(wid), opts)
        result["wall_s"] = time.perf_counter() - t0
        result["load_average"] = {"before": load0, "after": _load()}
        report["workloads"][wid] = result
        print("\n" + harness.table(result), flush=True)
    report["wall_s"] = time.perf_counter() - t_all
    if not args.no_write:
        path = harness.write_results(report, args.out or harness.RESULTS_DIR)
        print(f"\nresults: {os.path.relpath(path)}  ({report['wall_s']:.1f} s)")
    return 0


def _run_workload(mod, opts):
    """tapeflow and the baseline here; each requested, importable peer in its own process."""
    from . import peers
    if not opts.isolate or getattr(mod, "SPAWNS_PROCESSES", False):
        return mod.run(opts)
    result = mod.run(dataclasses.replace(opts, peers=()))
    run, skipped = peers.runnable(mod, opts.peers)
    result["skipped"] = [{"name": n, "reason": r} for n, r in skipped]
    for peer in run:
        peers.merge(result, peer, peers.run_isolated(mod.ID, peer, opts), peers.labels(mod)[peer])
    if hasattr(mod, "peer_targets"):   # targets that compare with the peers' rows (W11)
        result["targets"] = result.get("targets", []) + mod.peer_targets(result)
    return result


def _load():
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def _codegen_status():
    """'available', or why tapeflow.function falls back to the NumPy interpreter."""
    try:
        from tapeflow.codegen import compile_graph  # noqa: F401
    except ImportError as e:
        return f"unavailable ({e})"
    return "available"


if __name__ == "__main__":
    sys.exit(main())
