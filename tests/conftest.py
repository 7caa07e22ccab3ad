import os
import sys

import numpy as np
import platformdirs
import pytest

sys.path.insert(0, os.path.dirname(__file__))

# The suite checks what the generated programs compute, not how fast they run: Numba compiles
# them at LLVM -O1 (a tenth to a fifth less compile time, which dominates the suite; at -O0
# Numba cannot cache a function that calls another, so -O1 is the floor), and
# keeps them and its own helpers' machine code in caches of the suite's own, never the user's
# (the program key includes the level, so such code could not serve a user anyway).
# `NUMBA_OPT=3 python -m pytest` checks the code users get; the benchmarks run at Numba's default.
os.environ.setdefault("NUMBA_OPT", "1")
_TEST_CACHE = os.path.join(platformdirs.user_cache_dir(), "tapeflow-tests", f"O{os.environ['NUMBA_OPT']}")
os.environ.setdefault("TAPEFLOW_CACHE_DIR", os.path.join(_TEST_CACHE, "programs"))
os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(_TEST_CACHE, "numba"))

# Calls wait for the compiled program, so tests that assert compiled behaviour run it
# (tiered execution would answer the first calls from the interpreter). Set before tapeflow
# is imported; subprocesses inherit it. tests/tracer/test_tiers.py turns tiers on per test.
os.environ.setdefault("TAPEFLOW_TIERED", "0")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def numpy_backend():
    """Traced graphs run on the NumPy interpreter (the reference; no compile time) for one test,
    then the backend is what it was, so test order never matters. Directories and modules that
    test semantics rather than codegen use it (tracer/conftest.py, seeds' in-function tests)."""
    import tapeflow
    from tapeflow.tracer import engine as backend
    old = backend.get_backend()
    tapeflow.set_backend("numpy")
    yield
    tapeflow.set_backend(old)


@pytest.fixture
def sources(monkeypatch):
    """{program name: generated source} of every program the test body would compile (the
    graphs run on the interpreter: generating is enough to measure the source)."""
    import tapeflow.tracer.engine as backend
    from tapeflow.codegen.generate import generate
    out = {}

    def fake_compile(graph, name="program", *args, **kwargs):
        graph = backend.optimize(graph)
        out[name] = generate(graph, name).source
        return backend.Interpreted(graph)
    monkeypatch.setattr(backend, "compile", fake_compile)
    monkeypatch.setattr(backend, "_backend", "numba")
    return out
