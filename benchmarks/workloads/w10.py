"""W10: full-batch gradient of logistic regression over rows x 32 float32 in 32 chunks.

Contenders, interleaved as usual (``harness.measure``):

- ``numpy (hand)``: the hand-written gradient in this process (the baseline);
- ``tapeflow compiled``: one ``tapeflow.function`` (tape inside) over all rows, this process;
- ``tapeflow distribute``: ``DaskStrategy.value_and_grad`` on a LocalCluster of 2 worker
  processes (1 thread each), chunks persisted on the workers;
- ``dask.array (hand)``: the same gradient as hand-written ``dask.array`` expressions on the
  same cluster and the same persisted chunks (what a Dask user writes today).

Each chunk is made by ``make_chunk(i, rows)`` on the workers (and on the client for the
one-process contenders), so no data crosses the network to build the cluster's copy.
Also measured: one chunk's gradient in this process (the per-chunk compute of the scaling
estimate in docs/distribute.md) and the bytes one distributed step sends and receives.
Needs the ``distribute`` extra; not in the default suite (it starts a cluster): run it with
``python -m benchmarks --workloads W10``.
"""
import os
import statistics
import time

import numpy as np

from .. import harness

ID = "W10"
TITLE = "logistic regression full-batch gradient, rows x 32 float32 in 32 chunks, 2 workers"
STRESSES = "distributed gradient: per-chunk programs, broadcast, tree reduction"
SPAWNS_PROCESSES = True        # no peers: the contenders are tapeflow and Dask
FEATURES, CHUNKS, WORKERS = 32, 32, 2
DISTRIBUTE = "tapeflow distribute (2 workers)"
DASK_HAND = "dask.array (hand, 2 workers)"


def params(quick):
    return {"rows": 1 << 16, "features": FEATURES, "chunks": CHUNKS} if quick else \
        {"rows": 1 << 22, "features": FEATURES, "chunks": CHUNKS}


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


def inputs(p):
    parts = [make_chunk(i, r) for i, r in enumerate(chunk_rows(p))]
    rng = np.random.default_rng(0)
    return {"x": np.concatenate([a for a, _ in parts]), "y": np.concatenate([b for _, b in parts]),
            "w": (0.1 * rng.standard_normal((FEATURES, 1))).astype(np.float32),
            "b": np.array([0.05], np.float32)}


def loss(tf, w, b, x, y):
    z = tf.matmul(x, w) + b
    return tf.reduce_mean(tf.nn.softplus(z) - y * z)


def numpy_grads(inp):
    x, y, w, b = inp["x"], inp["y"], inp["w"], inp["b"]
    r = 1 / (1 + np.exp(-(x @ w + b))) - y
    return [x.T @ r / len(x), r.sum(axis=0) / len(x)]


def _tapeflow_one_process(inp):
    import tapeflow as tf

    @tf.function
    def grads(w, b, x, y):
        with tf.GradientTape() as tape:
            tape.watch([w, b])
            value = loss(tf, w, b, x, y)
        return tape.gradient(value, [w, b])
    args = [tf.constant(inp[k]) for k in ("w", "b", "x", "y")]
    return grads, args


def _cluster():
    from distributed import Client, LocalCluster
    path = os.pathsep.join(p for p in (harness.REPO_ROOT, os.environ.get("PYTHONPATH")) if p)
    cluster = LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True,
                           dashboard_address=None, host="127.0.0.1",
                           env={"PYTHONPATH": path, "NUMBA_NUM_THREADS": "1"})
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


def _per_chunk_seconds(inp, p, repeats=15):
    """One chunk's gradient, compiled, in this process: the per-chunk compute."""
    fn, args = _tapeflow_one_process({**inp, "x": inp["x"][:chunk_rows(p)[0]],
                                      "y": inp["y"][:chunk_rows(p)[0]]})
    fn(*args)
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(*args)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def run(opts):
    p = params(opts.quick)
    inp = inputs(p)
    ref = [np.asarray(r, np.float64) for r in numpy_grads(harness.as_float64(inp))]
    contenders = [harness.Contender(harness.BASELINE, lambda: (lambda: numpy_grads(inp)),
                                    kind="baseline")]
    holder = {}

    def compiled():
        fn, args = _tapeflow_one_process(inp)
        holder["compiled"] = (fn, args)
        return lambda: fn(*args)
    contenders.append(harness.Contender(
        harness.TAPEFLOW_COMPILED, compiled, compiled=True,
        engine=lambda: harness.tapeflow_engine(*holder["compiled"])()))
    skipped, cluster, client, notes = [], None, None, []
    try:
        import dask.array  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as e:
        skipped = [(DISTRIBUTE, f"needs the distribute extra: {e}"), (DASK_HAND, "same")]
    if not skipped:
        import dask.array as da
        import tapeflow as tf
        from tapeflow import distribute
        cluster, client = _cluster()
        x, y = _dask_data(client, p)
        strategy = distribute.DaskStrategy(client)
        dataset = strategy.experimental_distribute_dataset((x, y), names=("x", "y"))
        params_ = [inp["w"], inp["b"]]

        def loss_fn(w, b, x, y):
            return loss(tf, w, b, x, y)

        def dist():
            return lambda: strategy.value_and_grad(loss_fn, params_, dataset)[1]

        def dask_hand():
            n = x.shape[0]

            def step():
                r = 1 / (1 + da.exp(-(x @ inp["w"] + inp["b"]))) - y
                return client.compute([x.T @ r / n, r.sum(axis=0) / n], sync=True)
            return step
        contenders += [harness.Contender(DISTRIBUTE, dist, compiled=True),
                       harness.Contender(DASK_HAND, dask_hand, kind="peer")]
    try:
        w = harness.Workload(ID, TITLE, STRESSES, p, ref, contenders, tol=1e-4, skipped=skipped)
        result = harness.measure(w, opts)
        if client is not None:
            rows = {r["name"]: r for r in result["contenders"]}
            chunk_s = _per_chunk_seconds(inp, p)
            step = dict(strategy.last_step)
            result["distributed"] = {
                "workers": WORKERS, "chunks": p["chunks"], "per_chunk_s": chunk_s,
                "param_bytes": step["param_bytes"], "result_bytes": step["result_bytes"],
                "program_bytes": step["program_bytes"],
                "reduction_bytes": step["reduction_bytes"],
                "data_bytes": int(inp["x"].nbytes + inp["y"].nbytes)}
            notes.append(f"one chunk ({chunk_rows(p)[0]} rows) compiled in this process: "
                         f"{chunk_s * 1e3:.2f} ms; per step: parameters {step['param_bytes']} B "
                         f"broadcast to {WORKERS} workers, one gradient of "
                         f"{step['result_bytes']} B ({step['reduction_bytes']} B of subtrees "
                         f"left the workers' tasks: {p['chunks']} leaves, fan-in "
                         f"{strategy.split_every}); program {step['program_bytes']} B sent once")
            d, c, h = (rows.get(k, {}) for k in (DISTRIBUTE, harness.TAPEFLOW_COMPILED, DASK_HAND))
            if d.get("ok") and c.get("ok"):
                notes.append(f"speed-up of 2 workers over one tapeflow process: "
                             f"{c['median_s'] / d['median_s']:.2f}x")
            result["targets"] = [
                harness.target("tapeflow distribute / dask.array (hand), same cluster",
                               d["median_s"] / h["median_s"] if d.get("ok") and h.get("ok")
                               else None, 1.0, "x"),
                harness.target("one tapeflow process / tapeflow distribute >= 1.6 "
                               "(as distribute / one process <= 0.625)",
                               d["median_s"] / c["median_s"] if d.get("ok") and c.get("ok")
                               else None, 0.625, "x")]
        result["notes"] = notes
        return result
    finally:
        if client is not None:
            client.close()
            cluster.close()
