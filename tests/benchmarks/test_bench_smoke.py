"""The benchmark suite runs: every workload in --quick mode on the NumPy backend.

No timing assertions (BENCHMARKS.md): only that each contender ran, agreed with the
float64 reference, and that the results file holds what the report promises.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from benchmarks import harness, workloads  # noqa: E402

TAPEFLOW_ROWS = {harness.BASELINE, harness.TAPEFLOW_COMPILED, harness.TAPEFLOW_EAGER}
W6_ROWS = {harness.BASELINE, harness.TAPEFLOW_EAGER, "tapeflow compiled (cold)",
           "tapeflow compiled (warm)"}


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["OPENBLAS_NUM_THREADS"] = "1"   # a busy shared machine makes threaded BLAS crawl
    env.update(extra)
    return env


def _bench(args, **env):
    proc = subprocess.run([sys.executable, "-m", "benchmarks", *args], cwd=REPO, env=_env(**env),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("results")
    stdout = _bench(["--quick", "--backend", "numpy", "--peers", "none", "--out", str(out)])
    files = list(out.glob("*.json"))
    assert len(files) == 1, files
    with open(files[0]) as f:
        return stdout, json.load(f), files[0].name


def test_results_file_describes_the_run(quick_run):
    _, report, name = quick_run
    assert name.endswith("-numpy-quick.json")
    assert report["config"]["backend"] == "numpy" and report["config"]["quick"] is True
    m = report["machine"]
    for key in ("cpu_count", "platform", "python", "versions", "load_average"):
        assert m[key] is not None, key
    assert m["versions"]["numpy"] == np.__version__ and m["versions"]["numba"]
    assert set(report["workloads"]) == set(workloads.available())
    assert {x["id"] for x in report["not_measured"]} == set(workloads.PLANNED) == set()


@pytest.mark.parametrize("wid", [w for w in workloads.available() if w != "W6"])
def test_every_contender_ran_and_matched_the_reference(quick_run, wid):
    stdout, report, _ = quick_run
    result = report["workloads"][wid]
    rows = {r["name"]: r for r in result["contenders"]}
    extra = {"W8": {"tapeflow compiled (TensorArray)"},    # other forms of the code
             "W12": {"tapeflow compiled (tf.while_loop)",
                     "tapeflow compiled (keras.layers.LSTM)"}}.get(wid, set())
    assert set(rows) == TAPEFLOW_ROWS | extra
    for r in rows.values():
        assert r["ok"] and r["error"] is None, r
        assert 0 <= r["max_rel_err"] <= result["tol"], r
        assert 0 < r["min_s"] <= r["median_s"] and r["samples"] >= 2 and r["calls_per_sample"] >= 1
        assert r["ratio"] > 0
    assert rows[harness.BASELINE]["ratio"] == 1.0
    assert rows[harness.TAPEFLOW_COMPILED]["compile_s"] >= 0
    assert rows[harness.TAPEFLOW_COMPILED]["engine"] == "numpy interpreter"
    assert f"{wid}: " in stdout and "max rel err" in stdout
    assert all(t["met"] is not None for t in result["targets"]), result["targets"]


def test_w6_fresh_processes(quick_run):
    _, report, _ = quick_run
    rows = {r["name"]: r for r in report["workloads"]["W6"]["contenders"]}
    assert set(rows) == W6_ROWS
    for r in rows.values():
        assert r["ok"], r
        assert 0 < r["in_process_s"] <= r["process_s"] and r["import_s"] > 0
    assert all(t["met"] is not None for t in report["workloads"]["W6"]["targets"])


def test_w7_bytes_and_peak_memory(quick_run):
    _, report, _ = quick_run
    w7 = report["workloads"]["W7"]
    rows = {r["name"]: r for r in w7["contenders"]}
    minimum = w7["memory"]["min_saved_bytes"]
    assert rows[harness.BASELINE]["saved_bytes"] == minimum
    for r in rows.values():
        assert r["saved_bytes"] > 0 and r["peak_extra_bytes"] > 0, r
        assert r["peak_tracemalloc_bytes"] > 0
    assert rows[harness.TAPEFLOW_COMPILED]["planned_peak_bytes"] > 0
    assert rows[harness.TAPEFLOW_COMPILED]["saved"]["residual_bytes"] > 0


def test_tapeflow_bench_command_runs_the_suite():
    proc = subprocess.run([sys.executable, "-m", "tapeflow.cli", "bench", "--", "--workloads", "W1",
                           "--quick", "--backend", "numpy", "--peers", "none", "--no-write"],
                          cwd=REPO, env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "W1: " in proc.stdout and harness.TAPEFLOW_COMPILED in proc.stdout


def test_unknown_workload_is_refused():
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--workloads", "W99"], cwd=REPO,
                          env=_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "unknown workload(s) W99" in proc.stderr


# -- the harness itself, without tapeflow ---------------------------------------------------
def test_rel_err_is_normwise_and_strict_about_shapes():
    ref = [np.array([1.0, -2.0, 0.0])]
    assert harness.rel_err([np.array([1.0, -2.0, 1e-3], np.float32)], ref) == pytest.approx(5e-4)
    assert harness.rel_err([np.zeros(2)], ref) == float("inf")
    assert harness.rel_err([np.array([np.nan, 0, 0])], ref) == float("inf")
    assert harness.rel_err([], ref) == float("inf")


def test_a_wrong_contender_is_timed_but_flagged():
    ref = [np.array(2.0)]
    right = harness.Contender("numpy (hand)", lambda: (lambda: [np.float32(2.0)]), kind="baseline")
    wrong = harness.Contender("wrong", lambda: (lambda: [np.float32(2.5)]))
    broken = harness.Contender("broken", lambda: (lambda: 1 / 0))
    w = harness.Workload("WX", "test", "test", {}, ref, [right, wrong, broken], tol=1e-6)
    opts = harness.Options.for_mode(True, sample_s=1e-4)
    result = harness.measure(w, opts)
    rows = {r["name"]: r for r in result["contenders"]}
    assert rows["numpy (hand)"]["ok"] and rows["numpy (hand)"]["ratio"] == 1.0
    assert not rows["wrong"]["ok"] and rows["wrong"]["median_s"] > 0
    assert "differs" in rows["wrong"]["error"]
    assert rows["broken"]["error"].startswith("ZeroDivisionError") and "median_s" not in rows["broken"]
    text = harness.table(result)
    assert "WRONG" in text and "broken: ZeroDivisionError" in text


def test_planned_peak_frees_values_after_their_last_use():
    from benchmarks.workloads.w7 import planned_peak_bytes

    import tapeflow as tf

    @tf.function
    def f(x):
        a = x * 2.0          # 16 bytes, dead after b
        b = a + 1.0          # 16 bytes, output
        return b

    graph = f.get_concrete_function(tf.constant(np.ones(4, np.float32))).graph
    assert planned_peak_bytes(graph) == 32


@pytest.mark.slow
@pytest.mark.parametrize("peer", harness.PEERS)
def test_peer_contenders_agree_when_installed(peer, tmp_path):
    pytest.importorskip(peer)
    _bench(["--workloads", "W1,W2", "--quick", "--backend", "numpy", "--peers", peer,
            "--out", str(tmp_path)])
    report = json.loads(next(tmp_path.glob("*.json")).read_text())
    for wid in ("W1", "W2"):
        peers = [r for r in report["workloads"][wid]["contenders"] if r["kind"] == "peer"]
        assert peers and all(r["ok"] for r in peers), peers


def test_w9_child_counts_traces_and_agrees_with_numpy(tmp_path):
    """W9's fresh processes (python -m benchmarks --workloads W9): the tapeflow child traces the
    step for 128 and 104 rows and the evaluation for 1, 7 and 1000, and its losses are NumPy's."""
    out = {}
    for name in ("numpy (hand)", "tapeflow jit_compile=True"):
        proc = subprocess.run([sys.executable, "-m", "benchmarks.workloads.w9", "--child", name],
                              cwd=REPO, capture_output=True, text=True, timeout=600,
                              env=_env(TAPEFLOW_BACKEND="numpy", TAPEFLOW_CACHE_DIR=str(tmp_path)))
        assert proc.returncode == 0, proc.stderr[-3000:]
        line = [ln for ln in proc.stdout.splitlines() if ln.startswith("W9RESULT ")][-1]
        out[name] = json.loads(line[len("W9RESULT "):])
    tf_run = out["tapeflow jit_compile=True"]
    assert tf_run["traces"] == 5 and tf_run["first_step_s"] > 0
    np.testing.assert_allclose(tf_run["evals"], out["numpy (hand)"]["evals"], rtol=1e-4)
