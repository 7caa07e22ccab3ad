"""Random programs over assignments, control flow, custom gradients, stop_recording/reset,
float64 and Dense (random_programs.py): every variant (eager; the tape inside a function;
the function under a tape) on the interpreter and on Numba agrees with eager, and eager
agrees with central finite differences where the gradient is the plain derivative.

Through and inside a function, TensorFlow's rule gives zeros where eager gives None. The
Numba run draws few programs and shares each one's compiled programs across several inputs;
``-m slow`` runs many more.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tapeflow.tracer.engine as backend
from random_programs import generate, inputs, load, run, value

SETTINGS = dict(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
RTOL = {"float64": 1e-9, "float32": 2e-4}


@st.composite
def programs(draw, max_steps=7):
    """A program drawn by hypothesis (see ``random_programs.generate``)."""
    return generate(lambda lo, hi: draw(st.integers(lo, hi)), max_steps)


def _same(want, got, rtol, zeros_for_none, what):
    for k, (a, b) in enumerate(zip(want, got, strict=True)):
        if a is None:
            assert b is None or (zeros_for_none and not np.any(b)), f"{what}[{k}]: {b} for None"
            continue
        assert b is not None, f"{what}[{k}]: None where eager has {a}"
        assert a.dtype == b.dtype and a.shape == b.shape, f"{what}[{k}]"
        np.testing.assert_allclose(b, a, rtol=rtol, atol=rtol, err_msg=f"{what}[{k}]")


def check(program, dtype, backends, tmp_path, n_inputs=1):
    lines, exact, flags = program
    mod = load(lines, flags, dtype, tmp_path)
    for x in inputs(flags["seed"], dtype, n_inputs):
        want, want_state = run(mod, "eager", x, flags["k"], dtype)
        if exact and dtype == "float64":
            _finite_differences(mod, x, flags["k"], want[1])
        for name in backends:
            backend.set_backend(name)
            try:
                for variant in ("through", "inside") + (("mixed",) if flags["order"] == 2 else ()):
                    got, state = run(mod, variant, x, flags["k"], dtype)
                    what = f"{variant} on {name}:\n{mod.source}"
                    _same(want, got, RTOL[dtype], True, what)
                    _same(want_state, state, RTOL[dtype], False, what + " (variables after)")
            finally:
                backend.set_backend("numba")


def _finite_differences(mod, x, k, gx, eps=1e-6):
    fd = np.zeros(3)
    for j in range(3):
        d = np.zeros(3)
        d[j] = eps
        fd[j] = (value(mod, x + d, k, "float64") - value(mod, x - d, k, "float64")) / (2 * eps)
    got = np.zeros(3) if gx is None else gx
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-5, err_msg=mod.source)


@settings(max_examples=40, **SETTINGS)
@given(programs(), st.sampled_from(["float64", "float32"]))
def test_interpreted_variants_match_eager(tmp_path, program, dtype):
    check(program, dtype, ["numpy"], tmp_path)


@settings(max_examples=4, **SETTINGS)
@given(programs(max_steps=5))
def test_compiled_variants_match_eager(tmp_path, program):
    check(program, "float64", ["numba"], tmp_path, n_inputs=3)


@pytest.mark.slow
@settings(max_examples=500, **SETTINGS)
@given(programs(max_steps=10), st.sampled_from(["float64", "float32"]))
def test_many_random_programs_match_eager(tmp_path, program, dtype):
    check(program, dtype, ["numpy", "numba"], tmp_path, n_inputs=2)
