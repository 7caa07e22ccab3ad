"""A LocalCluster of 2 worker processes on loopback, one per test module.

The workers must import this checkout's tapeflow: its directory goes first on their
PYTHONPATH. Nanny workers get OMP/OPENBLAS/MKL_NUM_THREADS=1 from Dask, so BLAS results do
not depend on the machine's load.
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
                           env={"PYTHONPATH": path})
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
