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
