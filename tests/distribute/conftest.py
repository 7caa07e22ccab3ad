"""A LocalCluster of 2 worker processes on loopback, one per test module.

The workers must import this checkout's tapeflow: its directory goes first on their
PYTHONPATH. Nanny workers get OMP/OPENBLAS/MKL_NUM_THREADS=1 from Dask; NUMBA_NUM_THREADS=1
does the same for parallel compiled loops, so one worker process uses one core, as its one
thread promises (two workers with two Numba threads each would oversubscribe two cores).
"""
import os

import pytest

pytest.importorskip("distributed")

import tapeflow  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(tapeflow.__file__)))


def start_cluster():
    from distributed import Client, LocalCluster
    path = os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p)
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None, host="127.0.0.1",
                           env={"PYTHONPATH": path, "NUMBA_NUM_THREADS": "1"})
    return cluster, Client(cluster)


@pytest.fixture(scope="module")
def client():
    cluster, client = start_cluster()
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.fixture(scope="module")
def strategy(client):
    from tapeflow import distribute
    return distribute.DaskStrategy(client)
