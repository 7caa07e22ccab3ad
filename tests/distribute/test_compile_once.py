"""Uneven chunks compile a worker's gradient program once, not once per chunk size: the
worker traces with unknown rows (TensorSpec([None, ...])) and the generated source reads sizes
from its arguments, so every chunk size is one Numba compile; later sizes reuse it."""
import numpy as np
import pytest

import tapeflow as tf

da = pytest.importorskip("dask.array")


def test_uneven_chunks_compile_the_gradient_once_per_worker(strategy, client):
    def install():                      # pickled by value: the workers do not import this file
        import logging

        class Count(logging.Handler):
            def __init__(self):
                super().__init__()
                self.events = []

            def emit(self, record):
                d = getattr(record, "tapeflow", None)
                if d and d["event"] == "compile":
                    self.events.append((d["function"], d["signature"], d["cache"]))
        log = logging.getLogger("tapeflow")
        log._count_compiles = Count()
        log.addHandler(log._count_compiles)
        log.setLevel(logging.INFO)

    def compiles():
        import logging
        return list(logging.getLogger("tapeflow")._count_compiles.events)

    def loss(w, x):                     # a program no other test compiles
        return tf.reduce_mean(tf.square(tf.matmul(x, w) - 0.25))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((60, 3)).astype(np.float32)
    w = rng.standard_normal((3, 1)).astype(np.float32)
    sizes = (13, 7, 13, 5, 9, 13)       # four sizes, spread over both workers
    client.run(install)
    ds = strategy.experimental_distribute_dataset(da.from_array(x, chunks=(sizes, 3)))
    for _ in range(2):
        strategy.gradient(loss, w, ds)
    per_worker = client.run(compiles)
    seen = [e for events in per_worker.values() for e in events if e[0] == "gradient"]
    assert len({e[1] for e in seen}) >= 2, seen     # the workers did see several chunk sizes
    for addr, events in per_worker.items():
        misses = [e for e in events if e[0] == "gradient" and e[2] == "miss"]
        assert len(misses) <= 1, f"{addr} compiled the gradient {len(misses)} times: {misses}"
