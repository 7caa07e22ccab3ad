"""A LocalCluster of 2 worker processes on loopback, shared by the test modules (starting one
takes seconds; test_faults.py has its own, since it kills a worker).

The workers must import this checkout's tapeflow: its directory goes first on their
PYTHONPATH. Nanny workers get OMP/OPENBLAS/MKL_NUM_THREADS=1 from Dask; NUMBA_NUM_THREADS=1
does the same for parallel compiled loops, so one worker process uses one core, as its one
thread promises (two workers with two Numba threads each would oversubscribe two cores).
The backend is pinned to Numba whatever the test session's environment holds: the bitwise and
compile-count tests are about compiled programs.
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
                           env={"PYTHONPATH": path, "NUMBA_NUM_THREADS": "1",
                                "TAPEFLOW_BACKEND": "numba", "TAPEFLOW_TIERED": "0"})
    return cluster, Client(cluster)


def _running_cluster():
    cluster, client = start_cluster()
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.fixture(scope="session")
def client():
    yield from _running_cluster()


@pytest.fixture(scope="module")
def own_client():
    """A cluster for one module alone (a test that kills its workers)."""
    yield from _running_cluster()


@pytest.fixture(scope="session")
def strategy(client):
    from tapeflow import distribute
    return distribute.DaskStrategy(client)
