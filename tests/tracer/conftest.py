"""tests/tracer run traced graphs on the NumPy interpreter (the reference backend).

The Numba backend is tested elsewhere; here every test uses ``numpy_backend``
(../conftest.py), which restores the previous backend afterwards, so the order in
which test directories run does not matter.
"""
import pytest

from tapeflow.runtime.registry import KERNELS


@pytest.fixture(autouse=True)
def numpy_backend(numpy_backend):
    """../conftest.py's fixture, for every test of this directory."""
    yield


@pytest.fixture
def sin_calls(monkeypatch):
    """How many times the Sin kernel ran: the loop-gradient tests' bodies evaluate one Sin
    each, so this counts body evaluations without timing anything."""
    count = [0]
    kernel = KERNELS["Sin"]

    def counting(*args, **attrs):
        count[0] += 1
        return kernel(*args, **attrs)
    monkeypatch.setitem(KERNELS, "Sin", counting)
    return count
