"""tests/tracer run traced graphs on the NumPy interpreter (the reference backend).

The Numba backend is tested elsewhere; here every test uses ``numpy_backend``
(../conftest.py), which restores the previous backend afterwards, so the order in
which test directories run does not matter.
"""
import pytest


@pytest.fixture(autouse=True)
def numpy_backend(numpy_backend):
    """../conftest.py's fixture, for every test of this directory."""
    yield
