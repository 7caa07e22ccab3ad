"""W10: full-batch gradients over rows x 32 float32 in 32 chunks, one process vs 2 workers.

Two models on the same data: logistic regression (33 parameters) and a small MLP
(32 -> 16 tanh -> 1, logistic loss; 545 parameters). For each, contenders interleaved as
usual (``harness.measure``):

- ``numpy (hand)``: the hand-written gradient in this process (the baseline);
- ``tapeflow compiled``: one ``tapeflow.function`` (tape inside) over all rows, this process;
- ``tapeflow distribute``: ``DaskStrategy.gradient`` on a LocalCluster of 2 worker processes
  (1 thread each), chunks persisted on the workers;
- ``dask.array (hand)``: the same gradient as hand-written ``dask.array`` expressions on the
  same cluster and the same persisted chunks (what a Dask user writes today);
- ``dask_glm``: logistic regression only, the gradient ``dask_ml.linear_model`` fits with
  (``dask_glm.families.Logistic.pointwise_gradient``, the intercept as a column of ones,
  divided by the rows), when ``dask_glm`` is importable; dask_ml has no MLP.

Each chunk is made by ``make_chunk(i, rows)`` on the workers (and on the client for the
one-process contenders), so no data crosses the network to build the cluster's copy.
Also measured, per model: where a distributed step's time goes (one step's task stream:
each worker's busy time against the step's wall time), one chunk's gradient on a worker
(tapeflow's chunk program against hand NumPy on the same chunk, same thread), and the bytes
one step sends and receives. Needs the ``distribute`` extra; not in the default suite (it
starts a cluster): ``python -m benchmarks --workloads W10``.
"""
import os
import statistics
import sys
import time

import numpy as np

from .. import harness

ID = "W10"
TITLE = "full-batch gradient, rows x 32 float32 in 32 chunks, 2 workers"
STRESSES = "distributed gradient: per-chunk programs, broadcast, tree reduction"
SPAWNS_PROCESSES = True        # no peers: the contenders are tapeflow and Dask
FEATURES, HIDDEN, CHUNKS, WORKERS = 32, 16, 32, 2
DISTRIBUTE = "tapeflow distribute (2 workers)"
DASK_HAND = "dask.array (hand, 2 workers)"
DASK_GLM = "dask_glm / dask_ml (2 workers)"
MODELS = ("logistic", "mlp")


def params(quick):
    return {"rows": 1 << 16, "features": FEATURES, "chunks": CHUNKS} if quick else \
        {"rows": 1 << 23, "features": FEATURES, "chunks": CHUNKS}


def chunk_rows(p):
    size = -(-p["rows"] // p["chunks"])
    return [min(size, p["rows"] - i * size) for i in range(p["chunks"])]


def make_chunk(i, rows):
    """Chunk i of the dataset: (x float32[rows, 32], y float32[rows, 1]), the same anywhere."""
    rng = np.random.default_rng([2026, i])
    x = rng.standard_normal((rows, FEATURES), dtype=np.float32)
    true_w = np.linspace(-1, 1, FEATURES, dtype=np.float32)
    y = (rng.random(rows, dtype=np.float32) < 1 / (1 + np.exp(-(x @ true_w)))).astype(np.float32)
    return x, y[:, None]


def initial(model):
    """The parameters the gradient is taken at, by name (float32)."""
    rng = np.random.default_rng(0)
    if model == "logistic":
        return {"w": (0.1 * rng.standard_normal((FEATURES, 1))).astype(np.float32),
                "b": np.array([0.05], np.float32)}
    return {"w1": (0.2 * rng.standard_normal((FEATURES, HIDDEN))).astype(np.float32),
            "b1": np.full(HIDDEN, 0.01, np.float32),
            "w2": (0.2 * rng.standard_normal((HIDDEN, 1))).astype(np.float32),
            "b2": np.array([0.05], np.float32)}


def inputs(p):
    parts = [make_chunk(i, r) for i, r in enumerate(chunk_rows(p))]
    return {"x": np.concatenate([a for a, _ in parts]), "y": np.concatenate([b for _, b in parts])}


def loss(tf, model, ps, x, y):
    """Mean logistic loss of the model's logits (``ps``: the parameters in ``initial``'s order)."""
    if model == "logistic":
        z = tf.matmul(x, ps[0]) + ps[1]
    else:
        z = tf.matmul(tf.tanh(tf.matmul(x, ps[0]) + ps[1]), ps[2]) + ps[3]
    return tf.reduce_mean(tf.nn.softplus(z) - y * z)


def hand_grads(xp, model, ps, x, y, n):
    """The gradient written by hand, for NumPy arrays or Dask arrays alike (``xp``: the
    module with ``exp`` and ``tanh``): what ``loss``'s tape computes."""
    if model == "logistic":
        r = (1 / (1 + xp.exp(-(x @ ps[0] + ps[1]))) - y) / n
        return [x.T @ r, r.sum(axis=0)]
    h = xp.tanh(x @ ps[0] + ps[1])
    r = (1 / (1 + xp.exp(-(h @ ps[2] + ps[3]))) - y) / n
    dh = (r @ ps[2].T) * (1 - h * h)
    return [x.T @ dh, dh.sum(axis=0), h.T @ r, r.sum(axis=0)]


def _tapeflow_one_process(model, ps, x, y):
    import tapeflow as tf

    @tf.function(jit_compile=True)        # wait for the compiled program (no interpreter tier)
    def grads(ps, x, y):
        with tf.GradientTape() as tape:
            tape.watch(ps)
            value = loss(tf, model, ps, x, y)
        return tape.gradient(value, ps)
    args = ([tf.constant(p) for p in ps], tf.constant(x), tf.constant(y))
    return grads, args


def _cluster():
    from distributed import Client, LocalCluster
    path = os.pathsep.join(p for p in (harness.REPO_ROOT, os.environ.get("PYTHONPATH")) if p)
    cluster = LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True,
                           dashboard_address=None, host="127.0.0.1",
                           env={"PYTHONPATH": path, "NUMBA_NUM_THREADS": "1",
                                "TAPEFLOW_TIERED": "0"})
    return cluster, Client(cluster)


def _dask_data(client, p):
    import dask
    import dask.array as da
    import distributed
    xs, ys = [], []
    for i, r in enumerate(chunk_rows(p)):
        d = dask.delayed(make_chunk, pure=True)(i, r)
        xs.append(da.from_delayed(d[0], (r, FEATURES), np.float32))
        ys.append(da.from_delayed(d[1], (r, 1), np.float32))
    x, y = client.persist([da.concatenate(xs), da.concatenate(ys)])
    distributed.wait([x, y])
    return x, y


def _dask_glm_step(client, x, y, ps):
    """dask_ml's logistic gradient (``dask_glm``): the intercept is a column of ones, added
    once and persisted, as ``LogisticRegression.fit`` does."""
    import dask.array as da
    import distributed
    from dask_glm.families import Logistic
    xi = da.concatenate([x, da.ones((x.shape[0], 1), chunks=(x.chunks[0], 1),
                                    dtype=np.float32)], axis=1)
    xi, y1 = client.persist([xi, y[:, 0]])
    distributed.wait([xi, y1])
    beta = np.concatenate([ps[0].ravel(), ps[1]])
    n = x.shape[0]

    def step():
        g = client.compute(Logistic.pointwise_gradient(beta, xi, y1) / n, sync=True)
        return [g[:-1, None], g[-1:]]
    return step


def chunk_profile(program, params, meta, model, repeats, *arrays):
    """On a worker: one chunk's gradient by tapeflow's chunk program and by hand NumPy, the
    same thread, median seconds each (what a worker's time goes to)."""
    from tapeflow.distribute import worker

    def median(f):
        f()
        ts = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)
    x, y = arrays
    return {"tapeflow": median(lambda: worker.chunk("gradient", program, params, None, meta,
                                                    1.0, *arrays)),
            "numpy": median(lambda: hand_grads(np, model, params, x, y, len(x)))}


def _step_profile(client, strategy, fn, ps, dataset):
    """One distributed step under Dask's task stream: wall time, each worker's busy time and
    tasks, and the client's share (wall minus the busiest worker)."""
    from distributed import get_task_stream
    with get_task_stream(client) as ts:
        t0 = time.perf_counter()
        strategy.gradient(fn, ps, dataset)
        wall = time.perf_counter() - t0
    busy = {}
    for task in ts.data:
        for part in task.get("startstops", ()):
            if part.get("action") == "compute":
                w = busy.setdefault(task["worker"], [0.0, 0])
                w[0] += part["stop"] - part["start"]
                w[1] += 1
    return {"wall_s": wall, "workers": {w: {"busy_s": b, "tasks": n}
                                        for w, (b, n) in sorted(busy.items())}}


def _measure_model(model, p, inp, opts, cluster_parts):
    ps = list(initial(model).values())
    ref = [np.asarray(r, np.float64) for r in hand_grads(
        np, model, [p_.astype(np.float64) for p_ in ps], inp["x"].astype(np.float64),
        inp["y"].astype(np.float64), len(inp["x"]))]
    x, y = inp["x"], inp["y"]
    contenders = [harness.Contender(
        harness.BASELINE, lambda: (lambda: hand_grads(np, model, ps, x, y, len(x))),
        kind="baseline")]
    holder = {}

    def compiled():
        fn, args = _tapeflow_one_process(model, ps, x, y)
        holder["compiled"] = (fn, args)
        return lambda: fn(*args)
    contenders.append(harness.Contender(
        harness.TAPEFLOW_COMPILED, compiled, compiled=True,
        engine=lambda: harness.tapeflow_engine(*holder["compiled"])()))
    skipped = list(cluster_parts["skipped"])
    if cluster_parts["client"] is not None:
        import dask.array as da
        import tapeflow as tf
        client, strategy, dataset = (cluster_parts[k] for k in ("client", "strategy", "dataset"))
        dx, dy = cluster_parts["xy"]

        def loss_fn(*args):
            return loss(tf, model, args[:-2], *args[-2:])
        cluster_parts["loss_fn"] = loss_fn

        def dist():
            return lambda: strategy.gradient(loss_fn, ps, dataset)

        def dask_hand():
            return lambda: client.compute(hand_grads(da, model, ps, dx, dy, dx.shape[0]),
                                          sync=True)
        contenders += [harness.Contender(DISTRIBUTE, dist, compiled=True),
                       harness.Contender(DASK_HAND, dask_hand, kind="peer")]
        if model == "logistic":
            try:
                import dask_glm  # noqa: F401
            except ImportError as e:
                skipped.append((DASK_GLM, f"dask_glm is not installed ({e})"))
            else:
                contenders.append(harness.Contender(
                    DASK_GLM, lambda: _dask_glm_step(client, dx, dy, ps), kind="peer"))
        else:
            skipped.append((DASK_GLM, "dask_ml / dask_glm have no MLP gradient"))
    w = harness.Workload(ID if model == "logistic" else f"{ID} mlp",
                         f"{model}: {TITLE}", STRESSES, {**p, "model": model}, ref, contenders,
                         tol=1e-4, skipped=skipped)
    return harness.measure(w, opts), ps


def _report(result, model, p, ps, parts):
    """The distributed figures, notes and targets of one model's result."""
    strategy, dataset, client = parts["strategy"], parts["dataset"], parts["client"]
    rows = {r["name"]: r for r in result["contenders"]}
    step = dict(strategy.last_step)
    prof = _step_profile(client, strategy, parts["loss_fn"], ps, dataset)
    placement = strategy._placement(dataset)
    addr, idx = sorted(placement.items())[0]
    prog = strategy.program(parts["loss_fn"], ps, dataset).future
    chunk = client.submit(chunk_profile, prog, ps, dataset.meta(idx[0]), model, 5,
                          *dataset.chunks[idx[0]], workers=[addr], pure=False).result()
    busiest = max(w["busy_s"] for w in prof["workers"].values())
    ideal = chunk["tapeflow"] * p["chunks"] / WORKERS
    result["distributed"] = {
        "workers": WORKERS, "chunks": p["chunks"], "rows_per_chunk": chunk_rows(p)[0],
        "chunk_s": chunk, "step_profile": prof,
        "param_bytes": step["param_bytes"], "result_bytes": step["result_bytes"],
        "program_bytes": step["program_bytes"], "reduction_bytes": step["reduction_bytes"],
        "data_bytes": int(dataset.num_rows * 4 * (FEATURES + 1))}
    notes = [
        f"one chunk ({chunk_rows(p)[0]} rows) on a worker, 1 thread: tapeflow "
        f"{harness.fmt_time(chunk['tapeflow'])}, hand NumPy {harness.fmt_time(chunk['numpy'])} "
        f"({chunk['tapeflow'] / chunk['numpy']:.2f}x)",
        f"one step's task stream: wall {prof['wall_s'] * 1e3:.0f} ms; " + "; ".join(
            f"worker {i} busy {w['busy_s'] * 1e3:.0f} ms in {w['tasks']} tasks"
            for i, w in enumerate(prof["workers"].values()))
        + f"; not computing on the busiest worker: {(prof['wall_s'] - busiest) * 1e3:.0f} ms "
        f"(scheduling, broadcast, client); ideal {p['chunks']} chunks / {WORKERS} workers: "
        f"{harness.fmt_time(ideal)}",
        f"per step: parameters {step['param_bytes']} B broadcast to {WORKERS} workers, one "
        f"gradient of {step['result_bytes']} B ({step['reduction_bytes']} B of subtrees left the "
        f"workers' tasks: {p['chunks']} leaves, fan-in {strategy.split_every}); program "
        f"{step['program_bytes']} B sent once"]
    d, c, h = (rows.get(k, {}) for k in (DISTRIBUTE, harness.TAPEFLOW_COMPILED, DASK_HAND))
    if d.get("ok") and c.get("ok"):
        notes.append(f"speed-up of 2 workers over one tapeflow process: "
                     f"{c['median_s'] / d['median_s']:.2f}x")
    result["notes"] = notes
    result["targets"] = [
        harness.target("tapeflow distribute / dask.array (hand), same cluster",
                       d["median_s"] / h["median_s"] if d.get("ok") and h.get("ok") else None,
                       1.0, "x"),
        harness.target("one tapeflow process / tapeflow distribute >= 1.6 "
                       "(as distribute / one process <= 0.625)",
                       d["median_s"] / c["median_s"] if d.get("ok") and c.get("ok") else None,
                       0.625, "x")]


def run(opts):
    """Both models; the logistic result is W10's, the MLP's is under ``variants`` (its
    table is printed here)."""
    p = params(opts.quick)
    inp = inputs(p)
    parts = {"client": None, "skipped": []}
    cluster = None
    try:
        import dask.array  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as e:
        parts["skipped"] = [(DISTRIBUTE, f"needs the distribute extra: {e}"),
                            (DASK_HAND, "same"), (DASK_GLM, "same")]
    try:
        if not parts["skipped"]:
            from tapeflow import distribute
            cluster, client = _cluster()
            x, y = _dask_data(client, p)
            strategy = distribute.DaskStrategy(client)
            parts.update(client=client, xy=(x, y), strategy=strategy,
                         dataset=strategy.experimental_distribute_dataset((x, y),
                                                                          names=("x", "y")))
        results = {}
        for model in MODELS:
            print(f"W10: measuring {model} ...", file=sys.stderr, flush=True)
            result, ps = _measure_model(model, p, inp, opts, parts)
            if parts["client"] is not None:
                _report(result, model, p, ps, parts)
            results[model] = result
        main = results["logistic"]
        main["variants"] = {"mlp": results["mlp"]}
        print("\n" + harness.table(results["mlp"]), flush=True)
        return main
    finally:
        if parts["client"] is not None:
            parts["client"].close()
            cluster.close()
