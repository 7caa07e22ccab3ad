"""Logistic regression trained on a Dask dataset: the gradient on the cluster, the step here.

    pip install -e '.[distribute]'
    python examples/distributed_training.py --rows 200000 --chunks 16 --steps 30

Starts a LocalCluster of 2 worker processes (or connects to ``--scheduler ADDRESS``), makes
a synthetic dataset as Dask arrays (generated on the workers, never on the client),
trains with ``tf.keras.optimizers.Adam`` on the client, and checks the result against the
same training in this one process.
"""
import argparse
import os
import sys
import time

import numpy as np

import tapeflow as tf
from tapeflow import distribute

FEATURES = 32


def loss_fn(w, b, x, y):
    """Mean logistic loss of the chunk's rows (MEAN over rows reduces it exactly)."""
    z = tf.matmul(x, w) + b
    return tf.reduce_mean(tf.nn.softplus(z) - y * z)


def make_data(rows, chunks, seed=0):
    """(x, y) as Dask arrays in ``chunks`` row chunks (the last one may be shorter)."""
    import dask.array as da
    size = -(-rows // chunks)
    rs = da.random.RandomState(seed)
    x = rs.standard_normal((rows, FEATURES), chunks=(size, FEATURES)).astype(np.float32)
    true_w = np.linspace(-1, 1, FEATURES, dtype=np.float32)[:, None]
    logits = x @ true_w + 0.25
    y = (rs.random_sample((rows, 1), chunks=(size, 1)) < 1 / (1 + da.exp(-logits)))
    return x, y.astype(np.float32)


def init_params():
    return [tf.Variable(np.zeros((FEATURES, 1), np.float32), name="w"),
            tf.Variable(np.zeros((1,), np.float32), name="b")]


class _Bar:
    """The progress bar: tqdm when installed, else one rewritten line."""

    def __init__(self, total):
        try:
            from tqdm import tqdm
            self._bar = tqdm(total=total, desc="training", unit="step")
        except ImportError:
            self._bar, self._n, self._total = None, 0, total

    def update(self, loss):
        if self._bar is not None:
            self._bar.set_postfix(loss=f"{loss:.5f}")
            self._bar.update(1)
            return
        self._n += 1
        done = int(30 * self._n / self._total)
        sys.stderr.write(f"\rtraining [{'#' * done}{'.' * (30 - done)}] "
                         f"{self._n}/{self._total} loss {loss:.5f}")
        sys.stderr.flush()

    def close(self):
        if self._bar is not None:
            self._bar.close()
        else:
            sys.stderr.write("\n")


def train(strategy, dataset, steps, learning_rate=0.1, progress=True):
    """Adam on the client, gradients on the cluster; returns (params, losses)."""
    params = init_params()
    opt = tf.keras.optimizers.Adam(learning_rate)
    bar = _Bar(steps) if progress else None
    losses = []
    for _ in range(steps):
        loss, grads = strategy.value_and_grad(loss_fn, params, dataset,
                                              reduce_op=distribute.ReduceOp.MEAN)
        opt.apply_gradients(zip(grads, params))
        losses.append(float(loss))
        if bar:
            bar.update(losses[-1])
    if bar:
        bar.close()
    return params, losses


def train_one_process(x, y, steps, learning_rate=0.1):
    """The same training on NumPy arrays in this process (the reference)."""
    params = init_params()
    opt = tf.keras.optimizers.Adam(learning_rate)
    x, y = tf.constant(x), tf.constant(y)

    @tf.function
    def step(w, b):
        with tf.GradientTape() as tape:
            loss = loss_fn(w, b, x, y)
        return loss, tape.gradient(loss, [w, b])
    losses = []
    for _ in range(steps):
        loss, grads = step(*params)
        opt.apply_gradients(zip(grads, params))
        losses.append(float(loss))
    return params, losses


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--chunks", type=int, default=16)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--scheduler", default=None, help="address of a running scheduler")
    ap.add_argument("--no-check", action="store_true", help="skip the one-process reference")
    args = ap.parse_args(argv)

    from dask.distributed import Client, LocalCluster
    cluster = None
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        here = os.path.dirname(os.path.dirname(os.path.abspath(tf.__file__)))
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None, host="127.0.0.1",
                               env={"PYTHONPATH": os.pathsep.join(
                                   p for p in (here, os.environ.get("PYTHONPATH")) if p),
                                   "NUMBA_NUM_THREADS": "1"})
        client = Client(cluster)
    try:
        strategy = distribute.DaskStrategy(client)
        x, y = make_data(args.rows, args.chunks)
        dataset = strategy.experimental_distribute_dataset((x, y), names=("x", "y"))
        print(f"{args.rows} rows x {FEATURES} features in {dataset.num_chunks} chunks "
              f"on {strategy.num_replicas_in_sync} workers")
        t0 = time.perf_counter()
        params, losses = train(strategy, dataset, args.steps)
        took = time.perf_counter() - t0
        print(f"loss {losses[0]:.5f} -> {losses[-1]:.5f} in {took:.2f} s "
              f"({took / args.steps * 1e3:.1f} ms/step incl. first compile); per step sent "
              f"{strategy.last_step['param_bytes']} B of parameters to each worker, received "
              f"{strategy.last_step['result_bytes']} B")
        if not args.no_check:
            xs, ys = dataset.gather()          # the very rows the cluster trained on
            ref, ref_losses = train_one_process(xs, ys, args.steps)
            err = max(float(np.max(np.abs(p.numpy() - r.numpy()))) for p, r in
                      zip(params, ref, strict=True))
            print(f"one process: loss {ref_losses[-1]:.5f}; max |param difference| {err:.2e}")
            if err > 1e-3:
                raise SystemExit("distributed training differs from one process")
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    main()
