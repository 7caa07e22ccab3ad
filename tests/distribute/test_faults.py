"""A worker killed in the middle of a step: the nanny restarts it, Dask recomputes the lost
chunks, the new worker loads the program again, and the step gives the same bits.

This file has a cluster of its own (``own_client``), so the kill does not disturb the other
tests' workers."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import distribute
from tapeflow.distribute import worker

da = pytest.importorskip("dask.array")


def loss(w, x):
    return tf.reduce_mean(tf.square(tf.tanh(tf.matmul(x, w)) - 0.5))


def slow_data(x, chunk, delay):
    def slow(block):                  # pickled by value: the workers do not import this file
        import time as _time
        _time.sleep(delay)
        return block
    return da.from_array(x, chunks=(chunk, x.shape[1])).map_blocks(slow, dtype=x.dtype)


def test_a_worker_killed_mid_step_gives_the_same_result(own_client):
    client = own_client
    client.wait_for_workers(2)
    strategy = distribute.DaskStrategy(client)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 6)).astype(np.float32)
    w = rng.standard_normal((6, 2)).astype(np.float32)

    calm = strategy.value_and_grad(loss, w, strategy.experimental_distribute_dataset(
        da.from_array(x, chunks=(10, 6))))
    client.wait_for_workers(2)
    pids = client.run(os.getpid)

    # the chunks take 20 x 0.15 s to make, so the step is still running when a worker dies
    ds = strategy.experimental_distribute_dataset(slow_data(x, 10, 0.15))
    result = {}

    def step():
        try:
            result["value"] = strategy.value_and_grad(loss, w, ds)
        except BaseException as e:   # reported below
            result["error"] = e
    t = threading.Thread(target=step)
    t.start()
    time.sleep(0.8)
    assert t.is_alive(), "the step ended before the kill: make the chunks slower"
    victim = sorted(pids)[0]
    os.kill(pids[victim], signal.SIGKILL)
    t.join(timeout=120)
    assert not t.is_alive(), "the step never finished after the kill"
    assert "error" not in result, result.get("error")
    value, grad = result["value"]
    assert value.numpy().tobytes() == calm[0].numpy().tobytes()
    assert grad.numpy().tobytes() == calm[1].numpy().tobytes()

    client.wait_for_workers(2, timeout=60)
    now = client.run(os.getpid)
    assert pids[victim] not in now.values()          # the nanny started a new process
    # the restarted worker loaded the program from the bytes the cluster still holds
    again = strategy.value_and_grad(loss, w, ds)
    assert again[1].numpy().tobytes() == calm[1].numpy().tobytes()
    key = strategy.program(loss, w, ds)[0]
    after = client.run(worker.loaded_programs)
    assert all(n <= 2 for n, _ in after.values())
    assert sum(key in keys for _, keys in after.values()) >= 1
