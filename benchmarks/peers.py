"""The optional peers (JAX, TensorFlow, PyTorch): their contenders, and a process each.

Each peer framework is measured in a process of its own, interleaved there with its own
hand-NumPy baseline; its ratio is against that baseline. In one shared process their
thread pools keep spinning after a call returns and steal the 2 cores from whoever runs
next (measured: tapeflow's compiled W2 step, 1.3 ms alone, took 17 ms interleaved with
JAX, TensorFlow and PyTorch in one process). ``--no-isolate`` measures them in-process.
"""
import importlib.util
import json
import os
import subprocess
import sys

PEERS = ("jax", "tensorflow", "torch")
_MARK = "BENCHRESULT "


def peer_python(name):
    """The interpreter that measures peer ``name``: ``BENCH_PYTHON_<NAME>`` (a venv's python
    with the peer installed, e.g. TensorFlow in its own venv), else this one."""
    return os.environ.get(f"BENCH_PYTHON_{name.upper()}") or sys.executable


def available(name):
    other = peer_python(name)
    if other != sys.executable:
        return os.path.exists(other)
    return importlib.util.find_spec(name) is not None


def labels(mod):
    """{peer: [contender names]} for the peers workload ``mod`` has code for."""
    out = {"tensorflow": ["tf.function", "tf.function(jit_compile=True)"]}
    if hasattr(mod, "jax_code"):
        out["jax"] = ["jax jit(grad)"]
    if hasattr(mod, "torch_code"):
        out["torch"] = ["torch eager", "torch.compile"]
    return {p: out[p] for p in PEERS if p in out}


def runnable(mod, requested):
    """(peers to run, [(contender name, why not run)])."""
    run, skipped = [], []
    for peer, names in labels(mod).items():
        reason = ("not requested (--peers)" if peer not in requested else
                  None if available(peer) else f"{peer} not installed (pip install -e '.[bench]')")
        if reason is None:
            run.append(peer)
        else:
            skipped += [(n, reason) for n in names]
    return run, skipped


def contenders(mod, inputs, peers):
    """Contenders for ``peers`` (assumed importable): each builds its step when first called."""
    from .harness import Contender
    out = []
    if "jax" in peers and hasattr(mod, "jax_code"):
        def jax_step():
            import jax
            import jax.numpy as jnp
            return mod.jax_code(jax, jnp, inputs)
        out.append(Contender("jax jit(grad)", jax_step, kind="peer", compiled=True))
    if "tensorflow" in peers:
        for jit in (False, True):
            def tf_step(jit=jit):
                os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
                import tensorflow
                fn = tensorflow.function(mod.tf_code(tensorflow), jit_compile=jit)
                args = mod.tf_args(tensorflow, inputs)
                return lambda: fn(*args)
            name = "tf.function(jit_compile=True)" if jit else "tf.function"
            out.append(Contender(name, tf_step, kind="peer", compiled=True))
    if "torch" in peers and hasattr(mod, "torch_code"):
        for comp in (False, True):
            def torch_step(comp=comp):
                import torch
                return mod.torch_code(torch, inputs, comp)
            out.append(Contender("torch.compile" if comp else "torch eager", torch_step,
                                 kind="peer", compiled=comp))
    return out


# -- a process per peer --------------------------------------------------------------------
def child_args(wid, peer, opts):
    """The command line of the process measuring ``peer`` on workload ``wid``."""
    args = [peer_python(peer), "-m", "benchmarks", "--workloads", wid, "--peers", peer,
            "--peer-child", "--cache", "keep", "--no-write",
            "--samples", str(opts.samples), "--budget", str(opts.budget_s)]
    return args + (["--quick"] if opts.quick else [])


def run_isolated(wid, peer, opts, timeout=1800):
    """The result dict of ``peer`` (plus its own baseline) on ``wid``, or {"error": why}."""
    from .harness import REPO_ROOT
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        proc = subprocess.run(child_args(wid, peer, opts), cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"{peer} process did not finish within {timeout} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(_MARK)]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"error": f"{peer} process exited {proc.returncode}: {tail}"[:300]}
    return json.loads(lines[-1][len(_MARK):])


def emit(result):
    """What a peer child prints for its parent."""
    from .harness import _json_default
    print(_MARK + json.dumps(result, default=_json_default), flush=True)


def merge(result, peer, child, names):
    """Append the peer rows of ``child`` to ``result``; their ratios stay against the child's
    own baseline, kept in ``result['peer_baselines'][peer]``."""
    from .harness import BASELINE
    if "error" in child:
        result.setdefault("skipped", []).extend({"name": n, "reason": child["error"]} for n in names)
        return
    for row in child["contenders"]:
        if row["name"] == BASELINE:
            result.setdefault("peer_baselines", {})[peer] = row
        elif row.get("kind") == "peer":
            row["process"] = peer
            result["contenders"].append(row)
    note = ("peers ran in a process each, interleaved there with their own hand-NumPy baseline; "
            "their ratio is against that baseline")
    if note not in result.setdefault("notes", []):
        result["notes"].append(note)
