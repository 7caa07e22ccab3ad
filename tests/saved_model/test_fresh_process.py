"""Save here, load in a fresh process: outputs and gradients (custom ones included) equal.

One subprocess (``fresh_checks.py``) runs every check, to pay Python's and Numba's start-up
once: the seed programs' round trips (numpy backend), the LookupError TensorFlow documents
for a custom gradient saved without its graph, and a program compiled here that the other
process must get from the warm Numba cache (no compilation) and run compiled.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.tracer import engine as _backend

from programs import PROGRAMS, Seed003Clip, assert_same, run_program

HERE = os.path.dirname(os.path.abspath(__file__))


class Compiled(tf.Module):
    @tf.function
    def f(self, x):
        return tf.reduce_sum(tf.tanh(x) * x)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """(what this process computed, what the fresh process reported)."""
    base = tmp_path_factory.mktemp("saved")
    cache = tmp_path_factory.mktemp("numba_cache")
    old_backend, old_cache = _backend.get_backend(), os.environ.get("TAPEFLOW_CACHE_DIR")
    os.environ["TAPEFLOW_CACHE_DIR"] = str(cache)
    try:
        tf.set_backend("numpy")
        expected = {}
        for name, (make, _) in PROGRAMS.items():
            module = make()
            run_program(module, name)                 # trace (and move any state) first
            tf.saved_model.save(module, str(base / name))
            expected[name] = run_program(module, name)  # the loaded module starts from this state
        tf.saved_model.save(Seed003Clip(), str(base / "clip_without_custom_gradients"),
                            options=tf.saved_model.SaveOptions(experimental_custom_gradients=False))
        tf.set_backend("numba")
        compiled, x = Compiled(), np.array([0.5, -1.0, 2.0], np.float32)
        want_out = float(compiled.f(tf.constant(x)))
        tf.saved_model.save(compiled, str(base / "compiled"))
        plan = {"roundtrip": list(PROGRAMS), "no_custom_gradients": "clip_without_custom_gradients",
                "compiled": {"dir": "compiled", "x": x.tolist()}}
        (base / "plan.json").write_text(json.dumps(plan))
        env = dict(os.environ, TAPEFLOW_CACHE_DIR=str(cache))
        r = subprocess.run([sys.executable, os.path.join(HERE, "fresh_checks.py"), str(base)],
                           capture_output=True, text=True, env=env, timeout=600)
    finally:
        tf.set_backend(old_backend)
        if old_cache is None:
            os.environ.pop("TAPEFLOW_CACHE_DIR", None)
        else:
            os.environ["TAPEFLOW_CACHE_DIR"] = old_cache
    assert r.returncode == 0, r.stderr[-4000:]
    report = json.loads(r.stdout.strip().splitlines()[-1])
    return {"programs": expected, "compiled_out": want_out, "x": x}, report


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_outputs_and_gradients_equal_in_a_fresh_process(fresh, name):
    mine, report = fresh
    assert_same(report["roundtrip"][name], mine["programs"][name])


def test_seed_003_custom_gradient_clips_in_a_fresh_process(fresh):
    """TF's documented result: the clipped gradient 2.0 (not 4.0) after loading elsewhere."""
    report = fresh[1]["roundtrip"]["seed003_clip"]
    assert report[0]["out"] == [4.0] and report[0]["grad"] == [0.5]   # dy=1 clipped to 0.5
    np.testing.assert_allclose(report[1]["grad"][0], [0.5 / np.sqrt(2)] * 2, rtol=1e-6)


def test_without_custom_gradients_a_fresh_process_raises_tf_lookup_error(fresh):
    lookup = fresh[1]["lookup"]
    assert lookup["error"].startswith("LookupError: No gradient defined for operation ")
    assert lookup["forward"] == 3.0


def test_a_program_compiled_before_loads_from_the_warm_cache_and_runs_compiled(fresh):
    mine, report = fresh
    compiled = report["compiled"]
    assert compiled["kind"] == "Program" and compiled["fallback"] is None
    assert compiled["cache_misses"] == 0 and compiled["cache_hits"] >= 1
    np.testing.assert_allclose(compiled["out"], mine["compiled_out"], rtol=1e-6)
    x = mine["x"].astype(np.float64)
    np.testing.assert_allclose(compiled["grad"], np.tanh(x) + x * (1 - np.tanh(x) ** 2), rtol=1e-5)
