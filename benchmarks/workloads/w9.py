"""W9: a fresh process trains a small MLP over changing batch shapes, then evaluates.

784-128-10 relu MLP, softmax cross-entropy, one SGD step per call of one function; 5 epochs
over 1000 rows in batches of 128 (the last batch of each epoch has 104 rows), then the loss
at batch sizes 1, 7 and 1000. Each measurement is a new process (``python -m
benchmarks.workloads.w9 --child NAME``) with, for tapeflow, an empty compile cache.
Reported: seconds from spawning the process to the end, to the first step's result, and
for tapeflow the traces and the Numba compiles (cache misses) counted from its compile log.
This module imports only the standard library at the top: the child's clock starts here.
"""
import time

_T0 = time.perf_counter()

import json  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

ID = "W9"
TITLE = "fresh process: MLP training over batches of 128 and 104, evaluation at 1, 7, 1000"
STRESSES = "compile count and latency across changing shapes"
SPAWNS_PROCESSES = True
_MARK = "W9RESULT "
ROWS, BATCH, EPOCHS, EVAL = 1000, 128, 5, (1, 7, 1000)
LR = 0.1

# name -> peer module needed (None: always runs)
CHILDREN = {"numpy (hand)": None, "tapeflow compiled": None, "tapeflow jit_compile=True": None,
            "jax jit": "jax", "tf.function": "tensorflow"}


def _data():
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.standard_normal((ROWS, 784)).astype(np.float32)
    labels = rng.integers(0, 10, ROWS)
    y = np.eye(10, dtype=np.float32)[labels]
    w1 = (rng.standard_normal((784, 128)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((128, 10)) * 0.05).astype(np.float32)
    return x, y, [w1, np.zeros(128, np.float32), w2, np.zeros(10, np.float32)]


def _batches():
    for _ in range(EPOCHS):
        for s in range(0, ROWS, BATCH):
            yield s, min(s + BATCH, ROWS)


def _numpy(x, y, params):
    import numpy as np
    w1, b1, w2, b2 = params

    def loss_grads(xb, yb, grads=True):
        h = np.maximum(xb @ w1 + b1, 0)
        z = h @ w2 + b2
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        loss = -(yb * logp).sum(axis=1).mean()
        if not grads:
            return loss
        dz = (np.exp(logp) - yb) / len(xb)
        dh = (dz @ w2.T) * (h > 0)
        return loss, [xb.T @ dh, dh.sum(0), h.T @ dz, dz.sum(0)]

    def step(xb, yb):
        loss, g = loss_grads(xb, yb)
        for p, gp in zip(params, g):
            p -= LR * gp
        return loss
    return step, lambda xb, yb: loss_grads(xb, yb, False)


def _tf_code(tf, params, jit=None):
    """The training step and evaluation written once with TensorFlow's API: run by tapeflow
    and by TensorFlow. -> (step, evaluate, {"traces": Python body runs})."""
    vs = [tf.Variable(p) for p in params]
    w1, b1, w2, b2 = vs
    counts = {"traces": 0}

    def loss_of(xb, yb):
        counts["traces"] += 1
        h = tf.nn.relu(xb @ w1 + b1)
        return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=yb, logits=h @ w2 + b2))

    @tf.function(jit_compile=jit)
    def step(xb, yb):
        with tf.GradientTape() as tape:
            loss = loss_of(xb, yb)
        for v, g in zip(vs, tape.gradient(loss, vs)):
            v.assign_sub(LR * g)
        return loss

    evaluate = tf.function(loss_of, jit_compile=jit)
    return step, evaluate, counts


def _jax(x, y, params):
    import jax
    import jax.numpy as jnp
    state = [jnp.asarray(p) for p in params]

    def loss_of(ps, xb, yb):
        w1, b1, w2, b2 = ps
        h = jax.nn.relu(xb @ w1 + b1)
        return -jnp.mean(jnp.sum(yb * jax.nn.log_softmax(h @ w2 + b2), axis=1))

    @jax.jit
    def update(ps, xb, yb):
        loss, g = jax.value_and_grad(loss_of)(ps, xb, yb)
        return loss, [p - LR * gp for p, gp in zip(ps, g)]

    def step(xb, yb):
        loss, state[:] = update(list(state), xb, yb)
        return float(loss)
    ev = jax.jit(loss_of)
    return step, lambda xb, yb: float(ev(list(state), xb, yb))


class _Compiles(logging.Handler):
    """Counts tapeflow's compile-log records: traces (and compiles that missed the cache)."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.traces = self.misses = 0

    def emit(self, record):
        info = getattr(record, "tapeflow", None) or {}
        if info.get("event") == "trace":
            self.traces += 1
        elif info.get("event") == "compile" and info.get("cache") == "miss":
            self.misses += 1


def child(name):
    if name.startswith("jax"):
        os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
    if name.startswith("tf."):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    x, y, params = _data()
    counter = None
    if name.startswith("tapeflow"):
        counter = _Compiles()
        lg = logging.getLogger("tapeflow")
        lg.addHandler(counter)
        lg.setLevel(logging.INFO)
        import tapeflow as tf
        step, evaluate, counts = _tf_code(tf, params, True if "jit_compile=True" in name else None)
    elif name.startswith("jax"):
        step, evaluate = _jax(x, y, params)
    elif name.startswith("tf."):
        import tensorflow as tf
        step, evaluate, _ = _tf_code(tf, params)
    else:
        step, evaluate = _numpy(x, y, params)
    first = None
    losses = []
    for s, e in _batches():
        losses.append(float(step(x[s:e], y[s:e])))
        if first is None:
            first = time.perf_counter() - _T0
    evals = [float(evaluate(x[:n], y[:n])) for n in EVAL]
    out = {"name": name, "in_process_s": time.perf_counter() - _T0, "first_step_s": first,
           "epoch_done": time.time(), "last_loss": losses[-1], "evals": evals}
    if counter is not None:
        out["traces"] = counts["traces"]
        out["program_traces"] = counter.traces
        # each distinct program source compiled is one file in the (fresh) cache; in the
        # default tiered mode, compiles still running in the background are not counted
        d = os.environ.get("TAPEFLOW_CACHE_DIR")
        out["numba_compiles"] = (sum(f.endswith(".py") for _, _, fs in os.walk(d) for f in fs)
                                 if d and os.path.isdir(d) else counter.misses)
    print(_MARK + json.dumps(out), flush=True)


def _spawn(name, env_extra, timeout):
    from .. import harness
    return harness.spawn_child("benchmarks.workloads.w9", name, _MARK, env_extra, timeout,
                               peer=CHILDREN.get(name), late="not done")


def _summary(name, runs, reference):
    from .. import harness
    row, ok = harness.child_row(name, runs, ("process_s", "in_process_s", "first_step_s",
                                             "traces", "numba_compiles", "program_traces"))
    if not ok:
        return row
    err = 0.0
    if reference is not None:
        err = max(abs(a - b) / max(abs(b), 1e-6) for r in ok
                  for a, b in zip(r["evals"], reference["evals"]))
    row["max_rel_err"], row["tol"] = err, 1e-3
    row["ok"] = len(ok) == len(runs) and err <= 1e-3
    if err > 1e-3:
        row["error"] = f"evaluation losses differ from hand NumPy's: max rel err {err:.3g}"
    return row


def run(opts):
    from .. import harness, peers
    reps = 1 if opts.quick else 3
    plan, skipped = [], []
    for name, peer in CHILDREN.items():
        if peer is not None and (peer not in opts.peers or not peers.available(peer)):
            skipped.append((name, f"{peer} not installed or not requested"))
            continue
        plan.append(name)
    collected = {}
    for _ in range(reps):               # interleaved: one of each per repetition
        for name in plan:
            d = tempfile.mkdtemp(prefix="tapeflow-w9-")
            env = {"TAPEFLOW_CACHE_DIR": os.path.join(d, "tapeflow"),
                   "NUMBA_CACHE_DIR": os.path.join(d, "numba")}
            try:
                collected.setdefault(name, []).append(_spawn(name, env, 900))
            finally:
                shutil.rmtree(d, ignore_errors=True)
    base = [r for r in collected.get("numpy (hand)", []) if "error" not in r]
    rows = [_summary(n, runs, base[0] if base else None) for n, runs in collected.items()]
    harness.add_ratios(rows)
    result = {"id": ID, "title": TITLE, "stresses": STRESSES, "tol": 1e-3,
              "params": {"repetitions": reps, "rows": ROWS, "batch": BATCH, "epochs": EPOCHS,
                         "eval_batches": list(EVAL)},
              "baseline": harness.BASELINE, "contenders": rows,
              "skipped": [{"name": n, "reason": r} for n, r in skipped],
              "extra_columns": [("first step s", "first_step_s", "s"),
                                ("traces", "traces", "count"), ("Numba compiles", "numba_compiles", "count")],
              "notes": ["median/min: seconds from spawning the process to the end of the "
                        "evaluation, with empty compile caches; traces: Python body runs "
                        "(training step and evaluation); Numba compiles: compile-log cache misses"]}
    compiled = harness.row_of(result, "tapeflow compiled")
    result["targets"] = [harness.target(
        "tapeflow: at most 2 Numba compiles (one training step, one evaluation program)",
        compiled.get("numba_compiles") if compiled and compiled.get("ok") else None, 2, "")]
    return result


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        sys.exit("usage: python -m benchmarks.workloads.w9 --child NAME  (run W9 via python -m benchmarks)")
