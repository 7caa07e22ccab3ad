"""W6: a fresh process imports, builds W2 and takes its first gradient; cold and warm cache.

Each measurement is a new Python process (``python -m benchmarks.workloads.w6 --child
NAME``) that imports only what its contender needs, builds W2 from ``w2.py`` and calls
the gradient once. A contender with an on-disk compile cache runs twice per repetition:
*cold* with a fresh empty cache directory (for tapeflow both TAPEFLOW_CACHE_DIR and
NUMBA_CACHE_DIR, so no Numba helper is cached either), then *warm* with the same directory.

Reported per run: seconds from spawning the process to its first gradient (the headline,
interpreter start-up included), and inside the process: import, build, first call.
This module imports only the standard library at the top: the child's clock starts here.
"""
import time

_T0 = time.perf_counter()

import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

ID = "W6"
TITLE = "fresh process: import, build W2, first gradient (cold / warm on-disk cache)"
STRESSES = "trace + compile time, caching"
SPAWNS_PROCESSES = True   # every contender already runs in a fresh process of its own
_MARK = "W6RESULT "


def _cache_env_tapeflow(d):
    return {"TAPEFLOW_CACHE_DIR": os.path.join(d, "tapeflow"),
            "NUMBA_CACHE_DIR": os.path.join(d, "numba")}


def _cache_env_inductor(d):
    return {"TORCHINDUCTOR_CACHE_DIR": os.path.join(d, "inductor"),
            "TRITON_CACHE_DIR": os.path.join(d, "triton")}


# name -> (peer module needed or None, cache env builder or None)
CHILDREN = {
    "numpy (hand)": (None, None),
    "tapeflow eager": (None, None),
    "tapeflow compiled": (None, _cache_env_tapeflow),
    "jax jit(grad)": ("jax", None),
    "tf.function": ("tensorflow", None),
    "torch eager": ("torch", None),
    "torch.compile": ("torch", _cache_env_inductor),
}


# -- the child: one fresh process, one contender -------------------------------------------
def child(name):
    t_import = time.perf_counter()
    if name.startswith("tapeflow"):
        import tapeflow as fw
    elif name.startswith("jax"):
        import jax as fw
        import jax.numpy as jnp
    elif name.startswith("tf."):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow as fw
    elif name.startswith("torch"):
        import torch as fw
    else:
        import numpy as fw  # noqa: F401
    t_build = time.perf_counter()
    from benchmarks.workloads import w2
    inp = w2.inputs(w2.params(False))
    if name == "numpy (hand)":
        step = lambda: w2.numpy_grads(inp)  # noqa: E731
    elif name == "tapeflow eager":
        f, args = w2.tf_code(fw), w2.tf_args(fw, inp)
        step = lambda: f(*args)  # noqa: E731
    elif name in ("tapeflow compiled", "tf.function"):
        fn, args = fw.function(w2.tf_code(fw)), w2.tf_args(fw, inp)
        step = lambda: fn(*args)  # noqa: E731
    elif name.startswith("jax"):
        step = w2.jax_code(fw, jnp, inp)
    else:
        step = w2.torch_code(fw, inp, name == "torch.compile")
    t_first = time.perf_counter()
    result = step()
    t_done = time.perf_counter()
    epoch_done = time.time()
    from benchmarks import harness
    ref = w2.numpy_grads(harness.as_float64(inp))
    out = {"name": name, "import_s": t_build - t_import, "build_s": t_first - t_build,
           "first_call_s": t_done - t_first, "in_process_s": t_done - _T0,
           "epoch_done": epoch_done,
           "max_rel_err": harness.rel_err(harness.to_numpy(result), ref)}
    if name == "tapeflow compiled":
        from tapeflow.tracer.engine import Interpreted, get_backend
        prog = fn.get_concrete_function(*args).program
        out["engine"] = harness.describe_program(prog, get_backend(), Interpreted)
    print(_MARK + json.dumps(out), flush=True)


# -- the parent: spawn, collect, summarise ---------------------------------------------------
def _spawn(name, env_extra, timeout):
    from .. import harness
    return harness.spawn_child("benchmarks.workloads.w6", name, _MARK, env_extra, timeout,
                               peer=CHILDREN[name][0], late="no first gradient")


def _plan(opts):
    from .. import peers
    runs, skipped = [], []
    for name, (peer, cache_env) in CHILDREN.items():
        if peer is not None:
            if peer not in opts.peers:
                skipped.append((name, "not requested (--peers)"))
                continue
            if not peers.available(peer):
                skipped.append((name, f"{peer} not installed (pip install -e '.[bench]')"))
                continue
        runs.append((name, cache_env))
    return runs, skipped


def _summary(label, runs, tol):
    from .. import harness
    row, ok = harness.child_row(label, runs, ("process_s", "in_process_s", "import_s",
                                              "build_s", "first_call_s"))
    if not ok:
        return row
    row["max_rel_err"] = max(r["max_rel_err"] for r in ok)
    row["tol"] = tol
    row["ok"] = len(ok) == len(runs) and row["max_rel_err"] <= tol
    if row["max_rel_err"] > tol:
        row["error"] = (f"result differs from the float64 reference: max rel err "
                        f"{row['max_rel_err']:.3g} > {tol:g}")
    if "engine" in ok[0]:
        row["engine"] = ok[0]["engine"]
    return row


def run(opts):
    from .. import harness
    reps = 1 if opts.quick else 3
    timeout = 600
    plan, skipped = _plan(opts)
    collected = {}                      # label -> list of child results
    for _ in range(reps):               # interleaved: one of each per repetition
        for name, cache_env in plan:
            if cache_env is None:
                collected.setdefault(name, []).append(_spawn(name, {}, timeout))
                continue
            d = tempfile.mkdtemp(prefix="tapeflow-w6-")
            try:
                env = cache_env(d)
                collected.setdefault(f"{name} (cold)", []).append(_spawn(name, env, timeout))
                collected.setdefault(f"{name} (warm)", []).append(_spawn(name, env, timeout))
            finally:
                shutil.rmtree(d, ignore_errors=True)
    tol = 1e-4
    rows = [_summary(label, runs, tol) for label, runs in collected.items()]
    harness.add_ratios(rows)
    result = {"id": ID, "title": TITLE, "stresses": STRESSES, "tol": tol,
              "params": {"repetitions": reps, "workload": "W2"}, "baseline": harness.BASELINE,
              "contenders": rows, "skipped": [{"name": n, "reason": r} for n, r in skipped],
              "extra_columns": [("import s", "import_s", "s"), ("first grad s", "first_call_s", "s"),
                                ("in-process s", "in_process_s", "s")],
              "notes": ["median/min: seconds from spawning the process to its first W2 gradient "
                        "(interpreter start-up included); in-process: from the benchmark "
                        "module's first line"]}

    def secs(label):
        r = harness.row_of(result, label)
        return r["median_s"] if r and r.get("ok") else None

    result["targets"] = [
        harness.target("tapeflow compiled, warm cache, to first gradient <= 1.0 s",
                       secs("tapeflow compiled (warm)"), 1.0, " s"),
        harness.target("tapeflow compiled, cold cache, to first gradient <= 6 s",
                       secs("tapeflow compiled (cold)"), 6.0, " s")]
    return result


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        sys.exit("usage: python -m benchmarks.workloads.w6 --child NAME  (run W6 via python -m benchmarks)")
