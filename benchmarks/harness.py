"""How every contender is measured: the same way for all, interleaved within a process.

tapeflow's contenders and the hand-NumPy baseline share one process; each peer framework
gets a process of its own with its own baseline (``peers.py`` says why).

A workload (``workloads/wN.py``) says *what* runs: its inputs, its float64 reference and
its contenders. This module says *how* they are measured:

1. build each contender and time its first call (trace + compile for the compiled ones);
2. check that first result against the float64 reference (max relative error) — a
   contender that disagrees is still timed, but marked wrong and never counted as a win;
3. calibrate calls per sample so that one sample lasts ``sample_s`` (W1's hand NumPy
   takes ~0.4 µs a call: one call cannot be timed alone);
4. take samples round-robin, rotating the order every round, so drift and noise from the
   other tenants of a shared 2-core machine land on every contender alike;
5. report median and min per call, the ratio of medians to the hand-NumPy baseline from
   the same process, and compile seconds = first call - steady-state median.

The relative error of a result is ``max|got - ref| / max|ref|`` per output, the worst over
outputs: element-wise ratios blow up where the reference crosses zero.
"""
import datetime
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from . import peers
from .peers import PEERS

BASELINE = "numpy (hand)"
TAPEFLOW_COMPILED = "tapeflow compiled"
TAPEFLOW_EAGER = "tapeflow eager"
RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Options:
    """What the command line chose; ``quick`` is the smoke-test setting."""
    quick: bool = False
    samples: int = 41            # samples per contender (fewer if the budget runs out)
    min_samples: int = 7
    budget_s: float = 40.0       # rough time for one workload's timing loop
    sample_s: float = 0.01       # target duration of one sample
    peers: tuple = PEERS         # optional frameworks to try if importable
    isolate: bool = True         # each peer in a process of its own (see peers.py)
    tapeflow: bool = True        # False in a peer's process: baseline + that peer only

    @classmethod
    def for_mode(cls, quick, **overrides):
        base = cls(quick=True, samples=3, min_samples=2, budget_s=1.0, sample_s=0.002) if quick \
            else cls()
        for k, v in overrides.items():
            if v is not None:
                setattr(base, k, v)
        return base


@dataclass
class Contender:
    """One way of running a workload's gradient.

    ``build()`` returns ``step``, a zero-argument callable doing one complete gradient call
    (results ready: a JAX step blocks until ready). ``to_numpy(result)`` turns what ``step``
    returns into a list of arrays for the accuracy check; it is never timed.
    """
    name: str
    build: object
    kind: str = "tapeflow"       # "baseline" | "tapeflow" | "peer"
    compiled: bool = False
    to_numpy: object = None
    engine: object = None        # () -> str, after the first call: what actually ran


@dataclass
class Workload:
    id: str
    title: str
    stresses: str
    params: dict
    reference: list              # float64 arrays, one per gradient
    contenders: list
    tol: float = 1e-4
    skipped: list = field(default_factory=list)   # [(contender name, reason)]


# -- results of a call ---------------------------------------------------------------------
def flatten(result):
    """A (nested) list/tuple/dict of tensors -> list of leaves, dict values in key order."""
    if isinstance(result, dict):
        return [leaf for k in sorted(result) for leaf in flatten(result[k])]
    if isinstance(result, (list, tuple)):
        return [leaf for item in result for leaf in flatten(item)]
    return [result]


def to_numpy(result):
    """Leaves as NumPy arrays, whatever framework made them."""
    out = []
    for leaf in flatten(result):
        if hasattr(leaf, "detach"):            # torch
            leaf = leaf.detach().cpu().numpy()
        elif hasattr(leaf, "numpy"):           # tapeflow, TensorFlow
            leaf = leaf.numpy()
        out.append(np.asarray(leaf))
    return out


def rel_err(got, ref):
    """max over outputs of max|got - ref| / max|ref| (inf on a shape or count mismatch)."""
    if len(got) != len(ref):
        return float("inf")
    worst = 0.0
    for g, r in zip(got, ref, strict=True):
        g = np.asarray(g, dtype=np.float64)
        if g.shape != r.shape:
            return float("inf")
        scale = float(np.max(np.abs(r))) if r.size else 0.0
        err = float(np.max(np.abs(g - r))) if r.size else 0.0
        if not np.isfinite(err):
            return float("inf")
        worst = max(worst, err / scale if scale > 0 else err)
    return worst


# -- timing --------------------------------------------------------------------------------
def _first_call(c, reference, tol):
    row = {"name": c.name, "kind": c.kind, "compiled": c.compiled, "ok": False, "error": None}
    try:
        t0 = time.perf_counter()
        step = c.build()
        result = step()
        row["first_call_s"] = time.perf_counter() - t0
    except Exception as e:  # a contender that cannot run is reported, not fatal
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
        return row, None
    err = rel_err((c.to_numpy or to_numpy)(result), reference)
    row["max_rel_err"] = err
    row["tol"] = tol
    row["ok"] = err <= tol
    if not row["ok"]:
        row["error"] = f"result differs from the float64 reference: max rel err {err:.3g} > {tol:g}"
    if c.engine is not None:
        try:
            row["engine"] = c.engine()
        except Exception as e:
            row["engine"] = f"unknown ({type(e).__name__})"
    return row, step


def _calibrate(step, sample_s):
    """Calls per sample so a sample lasts about ``sample_s``; and the per-call estimate."""
    est = []
    for _ in range(3):
        t0 = time.perf_counter()
        step()
        est.append(time.perf_counter() - t0)
    per_call = max(min(est), 1e-8)
    if per_call < sample_s / 10:   # refine on a batch: single calls of ~1 µs are mostly timer
        n = max(1, int(sample_s / 10 / per_call))
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        per_call = max((time.perf_counter() - t0) / n, 1e-9)
    return max(1, int(round(sample_s / per_call))), per_call


def measure(w, opts, keep_steps=False):
    """Run, check and time every contender of ``w``; returns the workload's result dict
    (and ``{name: step}`` of the contenders that ran, if ``keep_steps``)."""
    rows, live = [], []
    for c in w.contenders:
        row, step = _first_call(c, w.reference, w.tol)
        rows.append(row)
        if step is not None:
            n, per_call = _calibrate(step, opts.sample_s)
            live.append((row, step, n, per_call))
    round_s = sum(n * per_call for _, _, n, per_call in live) or 1e-9
    samples = max(opts.min_samples, min(opts.samples, int(opts.budget_s / round_s)))
    times = [[] for _ in live]
    perf = time.perf_counter
    for r in range(samples):
        for k in range(len(live)):
            j = (k + r) % len(live)          # rotate: nobody is always first after a collect
            row, step, n, _ = live[j]
            t0 = perf()
            for _ in range(n):
                step()
            times[j].append((perf() - t0) / n)
        gc.collect()
    for (row, _, n, _), ts in zip(live, times, strict=True):
        row.update(median_s=statistics.median(ts), min_s=min(ts), samples=len(ts),
                   calls_per_sample=n)
        if row["compiled"]:
            row["compile_s"] = max(0.0, row["first_call_s"] - row["median_s"])
    add_ratios(rows)
    result = {"id": w.id, "title": w.title, "stresses": w.stresses, "params": w.params,
              "tol": w.tol, "baseline": BASELINE, "contenders": rows,
              "skipped": [{"name": n, "reason": r} for n, r in w.skipped]}
    if keep_steps:
        return result, {row["name"]: step for row, step, _, _ in live}
    return result


def add_ratios(rows, key="median_s"):
    base = next((r for r in rows if r["name"] == BASELINE and r.get(key)), None)
    for r in rows:
        if base is not None and r.get(key) is not None:
            r["ratio"] = r[key] / base[key]
            if r.get("min_s") is not None and base.get("min_s"):
                r["ratio_min"] = r["min_s"] / base["min_s"]


def target(text, value, limit, unit=""):
    """One target line: ``value <= limit`` (None when it could not be measured)."""
    return {"text": text, "value": value, "limit": limit, "unit": unit,
            "met": None if value is None else bool(value <= limit)}


def row_of(result, name):
    return next((r for r in result["contenders"] if r["name"] == name), None)


def ratio_target(result, text, limit, name=TAPEFLOW_COMPILED):
    r = row_of(result, name)
    ok = r is not None and r.get("ok")
    return target(text, r.get("ratio") if ok else None, limit, "x")


# -- contenders shared by the workloads ----------------------------------------------------
def tapeflow_engine(fn, args):
    """What ran a tapeflow.function's plain call: Numba code (and whether Numba's on-disk
    cache supplied it), or the NumPy interpreter (and why)."""
    def engine():
        from tapeflow.tracer.engine import Interpreted, get_backend
        return describe_program(fn.get_concrete_function(*args).program, get_backend(), Interpreted)
    return engine


def describe_program(prog, backend, interpreted_cls):
    if isinstance(prog, interpreted_cls):
        if backend == "numpy":
            return "numpy interpreter"
        from tapeflow import env
        return ("numpy interpreter (first tier: Numba compiling in the background)"
                if env.get("TAPEFLOW_TIERED") else "numpy interpreter (codegen unavailable)")
    fallback = getattr(prog, "fallback", None)
    if fallback:
        return f"numpy interpreter (codegen fallback: {fallback})"
    stats = prog.stats() if hasattr(prog, "stats") else {}
    how = ", cache hit" if stats.get("cache_hits") else ""
    return f"numba{how}"


def standard_contenders(mod, inputs, opts):
    """Hand NumPy, tapeflow compiled and eager, and the requested peers that are importable.

    ``mod`` provides ``numpy_grads(inputs)``, ``tf_code(tf)`` (the workload written once
    as TensorFlow code, for any module with TensorFlow's API) and ``tf_args(tf, inputs)``;
    optionally ``jax_code(jax, jnp, inputs)`` and ``torch_code(torch, inputs, compile)``,
    each returning a zero-argument step. Returns (contenders, [(name, why not run)]).
    """
    contenders = [Contender(BASELINE, lambda: (lambda: mod.numpy_grads(inputs)), kind="baseline")]
    holder = {}   # the compiled function and its arguments, for the engine report

    def compiled():
        import tapeflow
        fn, args = tapeflow.function(mod.tf_code(tapeflow)), mod.tf_args(tapeflow, inputs)
        holder["compiled"] = (fn, args)
        fn(*args)   # tiered (the default): time the compiled program, not the interpreter tier
        fn.get_concrete_function(*args).wait_compiled()
        return lambda: fn(*args)

    def eager():
        import tapeflow
        f, args = mod.tf_code(tapeflow), mod.tf_args(tapeflow, inputs)
        return lambda: f(*args)

    if opts.tapeflow:
        contenders.append(Contender(TAPEFLOW_COMPILED, compiled, compiled=True,
                                    engine=lambda: tapeflow_engine(*holder["compiled"])()))
        contenders.append(Contender(TAPEFLOW_EAGER, eager))
    run, skipped = peers.runnable(mod, opts.peers)
    return contenders + peers.contenders(mod, inputs, run), skipped


def run_standard(mod, opts, tol):
    """Measure workload module ``mod`` with the standard contenders (see ``standard_contenders``).

    The float64 reference is ``mod.reference(inputs)`` if defined, else the hand-written
    gradient evaluated on the inputs widened to float64.
    """
    p = mod.params(opts.quick)
    inp = mod.inputs(p)
    ref = mod.reference(inp) if hasattr(mod, "reference") else mod.numpy_grads(as_float64(inp))
    ref = [np.asarray(r, np.float64) for r in ref]
    contenders, skipped = standard_contenders(mod, inp, opts)
    if hasattr(mod, "extra_contenders"):      # other forms of the same code (W8's TensorArray)
        contenders += mod.extra_contenders(inp, opts)
    w = Workload(mod.ID, mod.TITLE, mod.STRESSES, p, ref, contenders, tol=tol, skipped=skipped)
    return measure(w, opts)


def as_float64(inputs):
    """The same inputs with floating arrays widened to float64 (labels stay int64)."""
    return {k: v.astype(np.float64) if np.asarray(v).dtype.kind == "f" else v
            for k, v in inputs.items()}


# -- memory ----------------------------------------------------------------------------------
def _proc_status_kib(field_name):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak_rss():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")             # resets VmHWM (Linux >= 4.0)
        return True
    except OSError:
        return False


def _malloc_trim():
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def peak_extra_memory(step):
    """Peak memory above the starting point during one ``step()``, two ways.

    ``tracemalloc_bytes``: allocations tracemalloc sees (NumPy's and Python's; not Numba's
    runtime allocator nor other frameworks'). ``rss_bytes``: peak resident set minus the
    resident set before (everything, at page granularity, after returning free heap to the
    OS so reused free memory does not hide growth); None where /proc cannot reset the peak.
    """
    import tracemalloc
    gc.collect()
    _malloc_trim()
    rss = None
    if _reset_peak_rss():
        before = _proc_status_kib("VmRSS")
        result = step()
        peak = _proc_status_kib("VmHWM")
        del result
        if before is not None and peak is not None:
            rss = max(0, peak - before) * 1024
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = step()
        traced = tracemalloc.get_traced_memory()[1] - base
        del result
    finally:
        tracemalloc.stop()
    return {"tracemalloc_bytes": traced, "rss_bytes": rss}


# -- machine and results ---------------------------------------------------------------------
def _version(mod):
    try:
        import importlib.metadata
        return importlib.metadata.version(mod)
    except Exception:
        return None


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _git(*args):
    try:
        return subprocess.run(["git", "-C", REPO_ROOT, *args], capture_output=True, text=True,
                              timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def machine():
    """What the figures were measured on."""
    info = {
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu_model": _cpu_model(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "mem_total_kib": _meminfo("MemTotal"),
        "versions": {m: _version(m) for m in ("numpy", "numba", "llvmlite", "scipy", "tapeflow",
                                             "jax", "jaxlib", "tensorflow", "tensorflow-cpu",
                                             "torch")},
        "env": {k: os.environ[k] for k in ("TAPEFLOW_BACKEND", "TAPEFLOW_CACHE_DIR",
                                           "NUMBA_NUM_THREADS", "NUMBA_CACHE_DIR",
                                           "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                           "MKL_NUM_THREADS") if k in os.environ},
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
    }
    info["versions"]["numpy"] = np.__version__
    if "tapeflow" in sys.modules:   # run from a checkout: no installed metadata
        info["versions"]["tapeflow"] = getattr(sys.modules["tapeflow"], "__version__", None)
    try:
        import numba
        info["versions"]["numba"] = numba.__version__
        info["numba_threads"] = numba.config.NUMBA_NUM_THREADS
    except ImportError:
        pass
    try:
        cfg = np.show_config(mode="dicts")
        info["blas"] = cfg.get("Build Dependencies", {}).get("blas", {}).get("name")
    except Exception:
        info["blas"] = None
    return info


def _meminfo(key):
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def write_results(report, out_dir=RESULTS_DIR):
    """One JSON file per run: ``<UTC time>-<backend>[-quick].json``; returns its path."""
    os.makedirs(out_dir, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    stem = f"{stamp}-{report['config']['backend']}" + ("-quick" if report["config"]["quick"] else "")
    path, k = os.path.join(out_dir, stem + ".json"), 1
    while os.path.exists(path):
        k += 1
        path = os.path.join(out_dir, f"{stem}-{k}.json")
    with open(path, "w") as f:
        json.dump(report, f, indent=1, default=_json_default)
        f.write("\n")
    return path


def _json_default(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


# -- printing ----------------------------------------------------------------------------------
def fmt_time(s):
    if s is None:
        return "–"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def fmt_bytes(b):
    if b is None:
        return "–"
    return f"{b / 2**20:.2f} MiB" if b >= 2**17 else f"{b / 1024:.1f} KiB"


def _fmt(v, how):
    if v is None:
        return "–"
    return {"time": fmt_time, "bytes": fmt_bytes, "ratio": lambda x: f"{x:.3g} x",
            "err": lambda x: f"{x:.2e}", "s": lambda x: f"{x:.3f}", "count": lambda x: f"{x:g}"}[how](v)


COLUMNS = [("contender", "name", None), ("median", "median_s", "time"), ("min", "min_s", "time"),
           ("ratio", "ratio", "ratio"), ("compile s", "compile_s", "s"),
           ("max rel err", "max_rel_err", "err")]


def table(result):
    """The workload's table: contender, median, min, ratio, compile s, max rel err (+ extras)."""
    cols = COLUMNS + [tuple(c) for c in result.get("extra_columns", [])]
    head = [c[0] for c in cols]
    body = []
    for r in result["contenders"]:
        name = r["name"] + (f" [{r['engine']}]" if r.get("engine") else "")
        cells = [name] + [_fmt(r.get(key), how) for _, key, how in cols[1:]]
        if r.get("error"):
            cells[-1 - len(result.get("extra_columns", []))] += "  WRONG" if "differs" in r["error"] \
                else ""
        body.append(cells)
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
    params = ", ".join(f"{k}={v}" for k, v in result.get("params", {}).items())
    out = [f"{result['id']}: {result['title']}" + (f"  ({params})" if params else ""),
           line(head), line(["-" * w for w in widths])]
    out += [line(b) for b in body]
    for r in result["contenders"]:
        if r.get("error"):
            out.append(f"  ! {r['name']}: {r['error']}")
    by_reason = {}
    for s in result.get("skipped", []):
        by_reason.setdefault(s["reason"], []).append(s["name"])
    for reason, names in by_reason.items():
        out.append(f"  - not run ({reason}): {', '.join(names)}")
    for t in result.get("targets", []):
        mark = {True: "met", False: "NOT met", None: "not measured"}[t["met"]]
        val = "–" if t["value"] is None else f"{t['value']:.3g}{t['unit']}"
        out.append(f"  target {t['text']}: {val} (limit {t['limit']:.3g}{t['unit']}) {mark}")
    for note in result.get("notes", []):
        out.append(f"  note: {note}")
    return "\n".join(out)


def spawn_child(module, name, mark, env_extra, timeout, peer=None, late="not done"):
    """Run ``python -m module --child name`` in a fresh process (the peer's own interpreter
    for a peer: peers.peer_python) and return the JSON it printed after ``mark``, with
    ``process_s``: seconds from spawning to the child's ``epoch_done``; or {"name", "error"}."""
    import json
    import subprocess
    import sys
    import time
    from . import peers
    env = dict(os.environ)
    env.update(env_extra)
    env["PYTHONPATH"] = REPO_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    python = peers.peer_python(peer) if peer else sys.executable
    t0 = time.time()
    try:
        proc = subprocess.run([python, "-m", module, "--child", name], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"name": name, "error": f"{late} within {timeout} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(mark)]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"name": name, "error": f"child exited {proc.returncode}: {tail}"[:300]}
    out = json.loads(lines[-1][len(mark):])
    out["process_s"] = out.pop("epoch_done") - t0
    return out


def child_row(name, runs, keys):
    """(row, ok runs) of a fresh-process contender: the medians of ``keys`` over its runs that
    worked, ``median_s``/``min_s`` of ``process_s``, the first error; ``row["ok"]`` is set
    here only when no run worked (the caller checks results)."""
    from statistics import median
    ok = [r for r in runs if "error" not in r]
    row = {"name": name, "kind": "baseline" if name == BASELINE else
           "tapeflow" if name.startswith("tapeflow") else "peer", "compiled": False,
           "runs": runs, "samples": len(ok)}
    bad = [r for r in runs if "error" in r]
    if bad:
        row["error"] = bad[0]["error"]
    if not ok:
        row["ok"] = False
        return row, ok
    for key in keys:
        if key in ok[0]:
            row[key] = median(r[key] for r in ok)
    row["median_s"], row["min_s"] = row["process_s"], min(r["process_s"] for r in ok)
    return row, ok
