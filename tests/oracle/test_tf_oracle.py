"""tapeflow against TensorFlow 2.21's recorded results for 999 random GradientTape programs.

The oracle (``tf_oracle/``, copied from ``shared/tf-oracle``) runs each program
with ``tapeflow`` in place of ``tf`` and compares values, dtypes, shapes, Nones
and exception types, for every variant: ``eager``, ``inside`` (tape inside a
function), ``through`` (function under eager tapes) and ``mixed`` (second order
across the boundary). Graphs run on the NumPy interpreter here, which checks
tracing, autodiff and TensorFlow's None rules; ``tests/compiler`` checks the
Numba programs against the interpreter.
"""
import importlib.util
import pathlib

import pytest

import tapeflow
import tapeflow.tracer.engine

from oracle.none_dims import NoneDimsLib

ORACLE = pathlib.Path(__file__).resolve().parent / "tf_oracle"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"tf_oracle_{name}", ORACLE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def oracle():
    return _load("run"), _load("compare")


def _check(oracle, seeds, variants):
    run, compare = oracle
    results = run.run_programs(tapeflow, ORACLE, seeds=seeds, variants=variants)
    report = compare.compare(ORACLE, results, seeds=seeds, variants=variants)
    assert report.ok, str(report)


@pytest.fixture
def numpy_backend():
    previous = tapeflow.tracer.engine.get_backend()
    tapeflow.set_backend("numpy")
    yield
    tapeflow.set_backend(previous)


@pytest.mark.parametrize("block", range(1000, 2000, 100))
def test_every_variant_agrees_with_tensorflow(oracle, numpy_backend, block):
    _check(oracle, range(block, block + 100), None)


def _programs(seeds):
    files = {s: ORACLE / "programs" / f"{s:05d}.py" for s in seeds}
    return [s for s, f in files.items() if f.exists()]


def _check_none_dims(oracle, seeds):
    """Every function of the programs traced with None dims (none_dims.py) on the interpreter:
    the function variants give TensorFlow's results from graphs that know no size."""
    run, compare = oracle
    lib = NoneDimsLib()
    seeds = _programs(seeds)   # jacobians and reduce_prod included
    variants = ["inside", "through", "mixed"]
    results = run.run_programs(lib, ORACLE, seeds=seeds, variants=variants)
    report = compare.compare(ORACLE, results, seeds=seeds, variants=variants)
    assert report.ok, str(report)
    assert any(None in s.shape for sig in lib.traced for s in sig if s.shape)


def test_function_variants_traced_with_none_dims(oracle, numpy_backend):
    _check_none_dims(oracle, range(1000, 1150))


@pytest.mark.slow
@pytest.mark.parametrize("block", range(1150, 2000, 170))
def test_function_variants_traced_with_none_dims_all(oracle, numpy_backend, block):
    _check_none_dims(oracle, range(block, min(block + 170, 2000)))
