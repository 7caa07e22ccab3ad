"""Tiered execution (tracer/tiers.py) and visible compiles (tracer/compile_log.py).

The rest of the suite runs with ``TAPEFLOW_TIERED=0`` (tests/conftest.py) so compiled
behaviour is what it asserts; these tests turn tiers on and wait for the background
compile explicitly, so they stay deterministic. Each uses its own cache directory, so
every compile here is a real one (a cache miss) in the worker process.
"""
import json
import logging
import os
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.codegen.program import Program
from tapeflow.tracer import engine as backend, jacobian, tiers

WAIT = 600   # seconds: a loaded 2-core machine can take minutes for a cold compile


@pytest.fixture
def tiered(monkeypatch, tmp_path):
    monkeypatch.setenv("TAPEFLOW_TIERED", "1")
    monkeypatch.setenv("TAPEFLOW_CACHE_DIR", str(tmp_path / "cache"))
    old = backend.get_backend()
    backend.set_backend("numba")
    yield tmp_path / "cache"
    backend.set_backend(old)


def _elementwise(x):
    return tf.tanh(x), tf.exp(x), tf.sigmoid(x)


def _x(n=257):
    return tf.constant(np.linspace(-4, 4, n, dtype=np.float32))


def _close(a, b):
    """Within the fast-math functions' tested bound (tests/codegen/test_fastmath.py: 3 ulps)."""
    a, b = np.asarray(a), np.asarray(b)
    return np.all(np.abs(a - b) <= 3 * np.spacing(np.abs(b)) + 1e-37)


def test_first_calls_run_the_interpreter_then_the_compiled_program_takes_over(tiered):
    f = tf.function(_elementwise)
    x = _x()
    first = f(x)                          # returns without waiting for Numba
    cf = f.get_concrete_function(x)
    assert cf._tiered is not None
    assert isinstance(cf._program, backend.Interpreted) or cf._tiered.ready.is_set()
    assert cf.wait_compiled(WAIT), cf._tiered.error
    assert isinstance(cf._program, Program) and cf._program.fallback is None
    # loaded from the disk cache the worker filled, never compiled again here (issue 26.5)
    assert cf._program.stats()["cache_misses"] == 0, cf._program.stats()
    assert cf.fast.__globals__["run"] is cf._program     # the fast path calls it directly
    after = f(x)
    for a, b in zip(first, after, strict=True):
        assert _close(a.numpy(), b.numpy())
    assert os.listdir(tiered)                 # the worker wrote the shared disk cache
    # so the next process loads it in its compiler thread, starting no worker
    assert tiers._on_disk(cf._tiered.graph, cf.name)


def test_jit_compile_true_waits_and_false_never_compiles(tiered):
    x = _x(5)
    f = tf.function(_elementwise, jit_compile=True)
    f(x)
    cf = f.get_concrete_function(x)
    assert cf._tiered is None and isinstance(cf._program, Program)
    g = tf.function(_elementwise, jit_compile=False)
    for _ in range(3):
        g(x)
    cg = g.get_concrete_function(x)
    assert cg._tiered is None and isinstance(cg._program, backend.Interpreted)


def test_tiered_zero_waits(tiered, monkeypatch):
    monkeypatch.setenv("TAPEFLOW_TIERED", "0")
    f = tf.function(_elementwise)
    x = _x(6)
    f(x)
    assert isinstance(f.get_concrete_function(x)._program, Program)


def test_a_failed_background_compile_warns_once_and_stays_on_the_interpreter(tiered, monkeypatch):
    # the worker is sent a graph it cannot decode (an unwritable cache directory no longer
    # fails: the cache falls back to a private temporary one)
    monkeypatch.setattr(tiers, "_payload", lambda t, key=None: json.dumps(
        {"graph": {"not": "a graph"}, "name": t.name, "cache_dir": tiers._cache_dir()}))
    f = tf.function(lambda x: tf.sin(x) * 2.0)
    x = _x(7)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f(x)
        cf = f.get_concrete_function(x)
        assert not cf.wait_compiled(WAIT)
        for _ in range(3):
            y = f(x)
    mine = [w for w in caught if issubclass(w.category, tiers.TierWarning)]
    assert len(mine) == 1, [str(w.message) for w in caught]
    assert "keeps running on the NumPy interpreter" in str(mine[0].message)
    assert "Error" in str(mine[0].message)
    assert isinstance(cf._program, backend.Interpreted)
    np.testing.assert_allclose(y.numpy(), np.sin(x.numpy()) * 2, rtol=1e-6)


def test_killing_the_worker_mid_compile_leaves_no_broken_cache_entry(tiered):
    f = tf.function(lambda x, y: tf.reduce_sum(tf.tanh(x) * y))
    x, y = _x(9), _x(9)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        f(x, y)
        cf = f.get_concrete_function(x, y)
        deadline = time.monotonic() + 60
        while tiers.worker_pid() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.5)                     # inside the worker's import or compile
        if not cf._tiered.ready.is_set():
            os.kill(tiers.worker_pid(), signal.SIGKILL)
        cf._tiered.ready.wait(WAIT)
    # whatever the cache holds now, a compile of the same program reads or redoes it
    g = tf.function(lambda x, y: tf.reduce_sum(tf.tanh(x) * y), jit_compile=True)
    got = g(x, y)
    assert isinstance(g.get_concrete_function(x, y)._program, Program)
    np.testing.assert_allclose(got.numpy(), np.sum(np.tanh(x.numpy()) * y.numpy()), rtol=1e-5)
    # and a new worker takes the next background compile
    h = tf.function(lambda x: tf.cos(x) + 1.0)
    h(x)
    assert h.get_concrete_function(x).wait_compiled(WAIT)


def test_an_eager_tape_never_waits_for_its_compile(tiered):
    x = tf.constant(np.linspace(0.1, 1, 4, dtype=np.float32))

    def jac():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.sin(x) * x
        return tape.jacobian(y, x)

    want = jac().numpy()
    for _ in range(4):
        got = jac()
        assert _close(got.numpy(), want)
    program = [c.program for c in jacobian._PROGRAMS.values() if c.program is not None][-1]
    assert isinstance(program, tiers.Tiered)
    assert program.wait(WAIT) is not program.interpreted, program.error
    assert _close(jac().numpy(), want)


def test_set_log_compiles_logs_trace_compile_and_switch(tiered, caplog):
    f = tf.function(lambda x: tf.exp(x) - 1.0)
    x = _x(11)
    tf.config.set_log_compiles(True)
    try:
        with caplog.at_level(logging.INFO, logger="tapeflow"):
            f(x)
            assert f.get_concrete_function(x).wait_compiled(WAIT)
            deadline = time.monotonic() + 10  # the switch record follows the compile's
            while len(caplog.records) < 3 and time.monotonic() < deadline:
                time.sleep(0.01)
    finally:
        tf.config.set_log_compiles(False)
    events = [r.tapeflow["event"] for r in caplog.records if hasattr(r, "tapeflow")]
    assert events == ["trace", "compile", "tier"], caplog.text
    compile_rec = [r for r in caplog.records if r.tapeflow["event"] == "compile"][0]
    assert compile_rec.tapeflow["signature"] == "f32[11]"
    assert compile_rec.tapeflow["cache"] == "miss"
    assert "<lambda>(f32[11])" in compile_rec.getMessage()


def test_log_compiles_environment_variable_prints_to_stderr(tmp_path):
    code = ("import tapeflow as tf\n"
            "f = tf.function(lambda x: x * 2.0, jit_compile=True)\n"
            "f(tf.constant([1.0, 2.0]))\n")
    env = dict(os.environ, TAPEFLOW_LOG_COMPILES="1", TAPEFLOW_CACHE_DIR=str(tmp_path),
               TAPEFLOW_BACKEND="numba")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=WAIT)
    assert out.returncode == 0, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("tapeflow: ")]
    assert lines[0].startswith("tapeflow: trace <lambda>(f32[2])"), out.stderr
    assert lines[1].startswith("tapeflow: compile <lambda>(f32[2])") and "cache miss" in lines[1]
