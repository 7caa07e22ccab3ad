"""Users' programs as workloads (BENCHMARKS.md, issue 26): W14 (``model.fit``) and W15 (a
physics-informed network's second-order step), each run unchanged in fresh processes by
tapeflow and by TensorFlow, quiet and under load.

``python -m benchmarks.users [--workloads W14,W15] [--load N] [--tf-python PATH] [--quick]``

Every measurement is a fresh process. tapeflow runs with its defaults (tiers on) from a cold
compile cache and again from the warm one it left, and W15 also with ``TAPEFLOW_TIERED=0``
(the full compile waited for: its cold compile time). TensorFlow runs from ``--tf-python`` (a
Python that imports TensorFlow; default ``/work/tfvenv/bin/python`` where it exists, else
``python3``; skipped when it cannot import it). ``--load N`` times everything twice: quiet,
then while N busy processes and one multi-threaded NumPy job run (``benchmarks/load.py``:
bounded, ended by the suite), and reports each contender's loaded/quiet ratio. Results go
to ``benchmarks/results/<time>-users.json``.
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

from . import harness
from .load import busy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

IMPORT = textwrap.dedent("""
    import json, sys, time
    t_start = time.perf_counter()
    import numpy as np
    if sys.argv[1] == "tensorflow":
        import tensorflow as tf
    else:
        import tapeflow as tf
""")

W14 = IMPORT + textwrap.dedent("""
    n = int(sys.argv[2])
    rng = np.random.default_rng(0)
    x = rng.random((n, 784), dtype=np.float32)
    y = rng.integers(0, 10, n)
    model = tf.keras.Sequential([tf.keras.Input((784,)),
                                 tf.keras.layers.Dense(128, activation="relu"),
                                 tf.keras.layers.Dense(10)])
    model.compile(optimizer=tf.keras.optimizers.Adam(),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    t1 = time.perf_counter()
    model.fit(x, y, batch_size=32, epochs=1, shuffle=True, verbose=0)
    t2 = time.perf_counter()
    model.evaluate(x[:10000], y[:10000], verbose=0)
    t3 = time.perf_counter()
    print(json.dumps({"fit_s": t2 - t1, "evaluate_s": t3 - t2, "setup_s": t1 - t_start}))
""")

W15 = IMPORT + textwrap.dedent("""
    steps = int(sys.argv[2])
    rng = np.random.default_rng(0)
    tf.random.set_seed(0)
    layers = [tf.keras.Input((2,))] + [tf.keras.layers.Dense(20, activation="tanh")
                                       for _ in range(8)] + [tf.keras.layers.Dense(1)]
    model = tf.keras.Sequential(layers)
    opt = tf.keras.optimizers.Adam(1e-3)
    tx = tf.constant(rng.uniform([0, -1], [1, 1], (10000, 2)).astype(np.float32))
    x0 = rng.uniform(-1, 1, (50, 1)).astype(np.float32)
    ic = tf.constant(np.concatenate([np.zeros_like(x0), x0], 1))
    u0 = tf.constant(-np.sin(np.pi * x0))
    tb = rng.uniform(0, 1, (50, 1)).astype(np.float32)
    bc = tf.constant(np.concatenate([tb, np.where(np.arange(50)[:, None] % 2, 1, -1)
                                     .astype(np.float32)], 1))
    nu = 0.01 / np.pi

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            t, x = tx[:, :1], tx[:, 1:]
            with tf.GradientTape(persistent=True) as outer:
                outer.watch(x)
                with tf.GradientTape(persistent=True) as inner:
                    inner.watch(t)
                    inner.watch(x)
                    u = model(tf.concat([t, x], 1))
                u_t = inner.gradient(u, t)
                u_x = inner.gradient(u, x)
            u_xx = outer.gradient(u_x, x)
            residual = u_t + u * u_x - nu * u_xx
            loss = (tf.reduce_mean(residual ** 2) + tf.reduce_mean((model(ic) - u0) ** 2)
                    + tf.reduce_mean(model(bc) ** 2))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    t1 = time.perf_counter()
    first = float(step())
    t2 = time.perf_counter()
    times = []
    for _ in range(steps):
        s = time.perf_counter()
        step()
        times.append(time.perf_counter() - s)
    t3 = time.perf_counter()
    times.sort()
    print(json.dumps({"first_step_s": t2 - t1, "step_median_ms": 1e3 * times[len(times) // 2],
                      "step_mean_ms": 1e3 * (t3 - t2) / steps, "first_loss": first,
                      "setup_s": t1 - t_start}))
""")

WORKLOADS = {
    "W14": {"code": W14, "arg": {False: 60000, True: 6400}, "key": "fit_s",
            "title": "one epoch of model.fit (784-128-10, Adam, batch 32), fresh process"},
    "W15": {"code": W15, "arg": {False: 60, True: 10}, "key": "step_median_ms",
            "title": "PINN (Burgers) second-order step: 8 x Dense(20, tanh), 10,000 points"},
}


def _tf_python(given):
    for cand in ([given] if given else ["/work/tfvenv/bin/python", "python3"]):
        if cand and shutil.which(cand) or (cand and os.path.exists(cand)):
            ok = subprocess.run([cand, "-c", "import tensorflow"], capture_output=True,
                                timeout=300).returncode == 0
            if ok:
                return cand
    return None


def _run(python, code, who, arg, env, timeout):
    r = subprocess.run([python, "-c", code, who, str(arg)], capture_output=True, text=True,
                       env=env, timeout=timeout, cwd=ROOT)
    if r.returncode != 0:
        return {"error": r.stderr.strip().splitlines()[-1:] or ["failed"]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def contenders(wid, tf_python):
    """(label, python, who, extra environment, fresh cache?) in the order run."""
    rows = [("tapeflow defaults, cold cache", sys.executable, "tapeflow", {}, True),
            ("tapeflow defaults, warm cache", sys.executable, "tapeflow", {}, False)]
    if wid == "W15":
        rows.append(("tapeflow TAPEFLOW_TIERED=0, cold cache", sys.executable, "tapeflow",
                     {"TAPEFLOW_TIERED": "0"}, True))
    if tf_python:
        rows.append(("TensorFlow", tf_python, "tensorflow", {}, False))
    return rows


def measure(wid, quick, tf_python, timeout):
    spec = WORKLOADS[wid]
    out = {}
    cache = tempfile.mkdtemp(prefix="tapeflow-users-cache-")
    try:
        for label, python, who, extra, cold in contenders(wid, tf_python):
            if cold:
                shutil.rmtree(cache, ignore_errors=True)
            env = dict(os.environ, TAPEFLOW_CACHE_DIR=os.path.join(cache, "tapeflow"),
                       NUMBA_CACHE_DIR=os.path.join(cache, "numba"),
                       PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p),
                       TF_CPP_MIN_LOG_LEVEL="3", **extra)
            out[label] = _run(python, spec["code"], who, spec["arg"][quick], env, timeout)
            print(f"  {wid} {label}: {out[label]}", flush=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.users", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="W14,W15")
    ap.add_argument("--load", type=int, default=0,
                    help="also time everything while N busy processes and a NumPy job run")
    ap.add_argument("--tf-python", default=None)
    ap.add_argument("--quick", action="store_true", help="a tenth of W14's rows, 10 W15 steps")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per process")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    tf_python = _tf_python(args.tf_python)
    report = {"suite": "tapeflow-users", "schema": 1, "argv": list(argv or sys.argv[1:]),
              "config": {"backend": "users", "quick": args.quick, "load": args.load},
              "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": harness.machine(), "tf_python": tf_python, "workloads": {}}
    print(f"load average {os.getloadavg()}; TensorFlow from {tf_python or 'nowhere (skipped)'}",
          flush=True)
    for wid in [w.strip() for w in args.workloads.split(",") if w.strip()]:
        spec = WORKLOADS[wid]
        print(f"{wid}: {spec['title']}", flush=True)
        res = {"quiet": measure(wid, args.quick, tf_python, args.timeout)}
        if args.load:
            with busy(args.load, seconds=args.timeout * 6):
                res["loaded"] = measure(wid, args.quick, tf_python, args.timeout)
            res["loaded/quiet"] = {k: _ratio(res["loaded"][k], res["quiet"].get(k), spec["key"])
                                   for k in res["loaded"]}
        report["workloads"][wid] = res
        print(table(wid, res, spec["key"]), flush=True)
    if not args.no_write:
        path = harness.write_results(report, harness.RESULTS_DIR)
        print(f"results: {os.path.relpath(path)}")
    return 0


def _ratio(loaded, quiet, key):
    if not quiet or key not in loaded or key not in quiet:
        return None
    return loaded[key] / quiet[key]


def table(wid, res, key):
    rows = [f"{wid}: {key}"]
    tf_row = {k: v for k, v in res["quiet"].items() if k == "TensorFlow"}
    for label, r in res["quiet"].items():
        cells = [f"{label:42s}", f"quiet {r.get(key, float('nan')):9.3f}"]
        if "TensorFlow" in tf_row and key in r and key in tf_row["TensorFlow"]:
            cells.append(f"/TF {r[key] / tf_row['TensorFlow'][key]:5.2f}")
        if "loaded" in res:
            lr = res["loaded"].get(label, {})
            cells.append(f"loaded {lr.get(key, float('nan')):9.3f}")
            ratio = res["loaded/quiet"].get(label)
            cells.append(f"loaded/quiet {ratio:5.2f}" if ratio else "")
        rows.append("  " + "  ".join(cells))
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
