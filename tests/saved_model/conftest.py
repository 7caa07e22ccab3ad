"""tests/saved_model run traced graphs on the NumPy interpreter unless a test says otherwise."""
import os
import sys

import pytest

import tapeflow
from tapeflow.tracer import engine as _backend

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # programs.py


@pytest.fixture(autouse=True)
def numpy_backend():
    old = _backend.get_backend()
    tapeflow.set_backend("numpy")
    yield
    tapeflow.set_backend(old)


@pytest.fixture(scope="module")
def module_numpy_backend():
    """The interpreter for a module-scoped fixture's saves, and the backend as it was after the
    module (setting it in such a fixture outlived the module: later files ran uncompiled)."""
    old = _backend.get_backend()
    tapeflow.set_backend("numpy")
    yield
    tapeflow.set_backend(old)
