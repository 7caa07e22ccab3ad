"""Tiny hostile files that used to exhaust memory or time (issue 14), each written by hand.

Every case must raise one SavedModelError within 1 s of CPU time and 200 MiB more memory, in a
subprocess whose address space is capped (``hostile_runner.py``), so a regression fails the
test with a MemoryError instead of taking the machine.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
CAP_MB = 200
SECONDS = 1.0


def _aval(shape, dtype, i):
    return {"shape": shape, "dtype": dtype, "id": i}


def _graph(inputs, nodes, outputs):
    return {"version": 1, "inputs": inputs, "nodes": nodes, "outputs": outputs}


def _function_program(d, graph_text, n_out=1):
    """A saved function of one f32[None] argument whose graph file is ``graph_text``."""
    (d / "graphs").mkdir(parents=True)
    (d / "graphs" / "0.json").write_text(graph_text)
    manifest = {
        "format": "tapeflow-saved-program", "format_version": 1, "tapeflow_version": "0.1.0",
        "custom_gradients": True, "root": {"kind": "function", "function": 0}, "objects": [],
        "signatures": {}, "variables": [], "constants": [],
        "functions": [{"name": "f", "params": [{"name": "x", "keyword_only": False}],
                       "concrete": [{"graph": "graphs/0.json", "structure": ["leaf"],
                                     "leaves": [{"tensor": {"shape": [None], "dtype": "float32"}}],
                                     "sources": [{"arg": 0}], "outputs": {"out": 0},
                                     "n_out": n_out, "assigned": []}]}]}
    (d / "saved_program.json").write_text(json.dumps(manifest))
    return d


def _module_program(d, objects, variables, arrays):
    d.mkdir(parents=True)
    (d / "variables").mkdir()
    for name, a in arrays.items():
        np.save(d / "variables" / name, a)
    manifest = {
        "format": "tapeflow-saved-program", "format_version": 1, "tapeflow_version": "0.1.0",
        "custom_gradients": True, "root": {"kind": "module", "name": "m"}, "objects": objects,
        "signatures": {}, "variables": variables, "constants": [], "functions": []}
    (d / "saved_program.json").write_text(json.dumps(manifest, separators=(",", ":")))
    return d


def unpack(d, num):
    x = _aval([None], "float32", 0)
    outs = [_aval([], "float32", 1)]
    text = json.dumps(_graph([x], [{"op": "Unpack", "inputs": [0], "outputs": outs,
                                    "attrs": {"num": num, "axis": 0}}], [1]))
    return _function_program(d, text)


def padding_indices(d, n):
    var = {"name": "v", "trainable": True, "file": "variables/0.npy", "shape": [1], "dtype": "float32"}
    objects = [{"path": [{"attr": f"l{i}"}, {"index": 99_999}], "variable": 0} for i in range(n)]
    return _module_program(d, objects, [var], {"0.npy": np.zeros(1, np.float32)})


def shared_array(d):
    a = np.zeros((1024, 1024), np.float32)   # 4 MiB, named by 2 000 variables: 8 GiB
    variables = [{"name": f"v{i}", "trainable": True, "file": "variables/0.npy", "shape": [1024, 1024],
                  "dtype": "float32"} for i in range(2000)]
    return _module_program(d, [], variables, {"0.npy": a})


def empty_objects(d, mb):
    d.mkdir(parents=True)
    n = (mb << 20) // 3
    (d / "saved_program.json").write_bytes(b"[" + b"{}," * n + b"{}]")
    return d


def while_arity(d):
    x = _aval([None], "float32", 0)
    cond = _graph([_aval([None], "float32", 0)], [
        {"op": "Const", "inputs": [], "outputs": [_aval([], "bool", 1)],
         "attrs": {"value": {"array": "AQ==", "dtype": "bool", "shape": []}}}], [1])
    body = _graph([_aval([None], "float32", 0)], [], [0])
    node = {"op": "While", "inputs": [0], "outputs": [_aval([None], "float32", 1), _aval([], "int32", 2)],
            "attrs": {"cond_graph": {"graph": cond}, "body_graph": {"graph": body}, "n_vars": 2}}
    return _function_program(d, json.dumps(_graph([x], [node], [1])))


def nested_if(d, depth=16):
    """An If in each branch of an If, ``depth`` deep: 2**depth leaf graphs (~33 MB)."""
    ins = '[{"shape":[],"dtype":"bool","id":0},{"shape":[null],"dtype":"float32","id":1}]'
    inner = '{"version":1,"inputs":' + ins + ',"nodes":[],"outputs":[1]}'
    for _ in range(depth - 1):
        inner = ('{"version":1,"inputs":' + ins + ',"nodes":[{"op":"If","inputs":[0,0,1],'
                 '"outputs":[{"shape":[null],"dtype":"float32","id":2}],'
                 '"attrs":{"then_graph":{"graph":' + inner + '},"else_graph":{"graph":' + inner + '}}}],'
                 '"outputs":[2]}')
    top = ('{"version":1,"inputs":[{"shape":[null],"dtype":"float32","id":0}],"nodes":['
           '{"op":"Const","inputs":[],"outputs":[{"shape":[],"dtype":"bool","id":1}],'
           '"attrs":{"value":{"array":"AQ==","dtype":"bool","shape":[]}}},'
           '{"op":"If","inputs":[1,1,0],"outputs":[{"shape":[null],"dtype":"float32","id":2}],'
           '"attrs":{"then_graph":{"graph":' + inner + '},"else_graph":{"graph":' + inner + '}}}],'
           '"outputs":[2]}')
    return _function_program(d, top)


CASES = {
    "unpack_num_2_40": (lambda d: unpack(d, 2 ** 40), "attribute 'num'"),
    "unpack_num_3e7": (lambda d: unpack(d, 3 * 10 ** 7), "attribute 'num'"),
    "index_padding_99990": (lambda d: padding_indices(d, 99_990), "unsaved entries"),
    "index_padding_2000": (lambda d: padding_indices(d, 2_000), "unsaved entries"),
    "shared_array_2000": (shared_array, "memory budget"),
    "empty_objects_50mb": (lambda d: empty_objects(d, 50), "values"),
    "empty_objects_200mb": (lambda d: empty_objects(d, 200), "bytes, more than"),
    "while_n_vars": (while_arity, "loop variables"),
    "nested_if_16": (nested_if, "graphs/0.json"),
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    paths = [str(make(base / name)) for name, (make, _) in CASES.items()]
    r = subprocess.run([sys.executable, os.path.join(HERE, "hostile_runner.py"), str(CAP_MB), *paths],
                       capture_output=True, text=True, timeout=600, env=os.environ.copy())
    assert r.returncode == 0, r.stderr[-3000:]
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    return {os.path.basename(row["path"]): row for row in rows}


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_file_is_one_saved_model_error_within_a_second_and_200_mb(results, name):
    row = results[name]
    print(f"{name}: {row['kind']} in {row['cpu_seconds']:.3f} s CPU ({row['seconds']:.3f} s wall), "
          f"+{row['peak_mb']:.1f} MiB: {row['message'][:200]}")
    assert row["kind"] == "SavedModelError", row
    assert CASES[name][1] in row["message"], row
    assert row["cpu_seconds"] < SECONDS, row
    assert row["peak_mb"] < CAP_MB, row


def test_the_load_budget_is_overridable(tmp_path, monkeypatch):
    """A program over a small budget is refused naming the variable; a larger budget loads it."""
    a = np.ones((256, 1024), np.float32)   # 1 MiB
    var = {"name": "v", "trainable": True, "file": "variables/0.npy", "shape": [256, 1024], "dtype": "float32"}
    d = _module_program(tmp_path / "p", [{"path": [{"attr": "v"}], "variable": 0}], [var], {"0.npy": a})
    monkeypatch.setenv("TAPEFLOW_LOAD_BUDGET_MB", "0.5")
    with pytest.raises(tf.saved_model.SavedModelError, match="TAPEFLOW_LOAD_BUDGET_MB"):
        tf.saved_model.load(str(d))
    monkeypatch.setenv("TAPEFLOW_LOAD_BUDGET_MB", "2")
    assert float(tf.reduce_sum(tf.saved_model.load(str(d)).v)) == 256 * 1024


def test_json_depth_is_measured_before_parsing_and_ignores_brackets_in_strings():
    from tapeflow.saved_model import limits
    from tapeflow.saved_model.files import scan_json
    from tapeflow.saved_model.errors import SavedModelError
    deep = b"[" * (limits.MAX_JSON_DEPTH + 1) + b"]" * (limits.MAX_JSON_DEPTH + 1)
    with pytest.raises(SavedModelError, match="nests deeper"):
        scan_json(deep, "f.json")
    # brackets inside strings (escaped quotes too) are not nesting
    text = json.dumps({"k": ["[[[" * 200 + '\\"' + "{{{" * 200] * 2, "n": [[1]]}).encode()
    assert scan_json(text, "f.json") >= 7
    hidden = b'["' + b"]" * 300 + b'"' + b"[" * 300 + b"]" * 300 + b"]"
    with pytest.raises(SavedModelError, match="nests deeper"):
        scan_json(hidden, "f.json")
