"""Hostile and broken saved programs: each raises SavedModelError naming the file and the problem."""
import json
import os
import pickle
import shutil

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.saved_model import SavedModelError
from tapeflow.saved_model import limits

from programs import Seed003Clip


class Small(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")

    @tf.function(input_signature=[tf.TensorSpec([None, 2])])
    def f(self, x):
        return tf.reduce_sum(tf.tanh(x @ self.w)[..., 1:])


@pytest.fixture(scope="module")
def pristine(tmp_path_factory, module_numpy_backend):
    base = tmp_path_factory.mktemp("pristine")
    tf.saved_model.save(Small(), str(base / "small"))
    tf.saved_model.save(Seed003Clip(), str(base / "clip"))
    return base


@pytest.fixture
def saved(pristine, tmp_path):
    """A fresh copy of the small program, to break."""
    d = tmp_path / "p"
    shutil.copytree(pristine / "small", d)
    return d


def manifest(d):
    return json.loads((d / "saved_program.json").read_text())


def write_manifest(d, m):
    (d / "saved_program.json").write_text(json.dumps(m))


def graph(d, i=0):
    return json.loads((d / "graphs" / f"{i}.json").read_text())


def write_graph(d, g, i=0):
    (d / "graphs" / f"{i}.json").write_text(json.dumps(g))


def fails(d, *words):
    with pytest.raises(SavedModelError) as e:
        tf.saved_model.load(str(d))
    msg = str(e.value)
    assert isinstance(e.value, ValueError)
    for w in words:
        assert w in msg, msg
    return msg


def test_the_pristine_copy_loads(saved):
    x = np.array([[1.0, 0.5]], np.float32)
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(float(tf.saved_model.load(str(saved)).f(x)), np.tanh(x @ w)[:, 1:].sum(),
                               rtol=1e-6)


def test_not_a_directory_and_no_manifest(tmp_path):
    fails(tmp_path / "nope", "is not a directory")
    fails(tmp_path, "saved_program.json", "missing")


def test_wrong_format_and_version(saved):
    m = manifest(saved)
    write_manifest(saved, dict(m, format_version=2))
    fails(saved, "saved_program.json", "format version 2 is not supported", "reads version 1")
    write_manifest(saved, dict(m, format="tensorflow"))
    fails(saved, "not a tapeflow saved program")


def test_unknown_op_wrong_arity_and_bad_attributes(saved):
    g = graph(saved)
    names = [n["op"] for n in g["nodes"]]
    k = names.index("Tanh")
    write_graph(saved, dict(g, nodes=g["nodes"][:k] + [dict(g["nodes"][k], op="os.system")] + g["nodes"][k + 1:]))
    fails(saved, os.path.join("graphs", "0.json"), "unknown op 'os.system'")
    g2 = json.loads(json.dumps(g))
    g2["nodes"][k]["inputs"] = g2["nodes"][k]["inputs"] * 2
    write_graph(saved, g2)
    fails(saved, "2 inputs, the op takes 1")
    g3 = json.loads(json.dumps(g))
    s = names.index("Sum")
    g3["nodes"][s]["attrs"]["keepdims"] = "yes"
    write_graph(saved, g3)
    fails(saved, "attribute 'keepdims'", "not a valid bool")
    g4 = json.loads(json.dumps(g))
    g4["nodes"][s]["attrs"]["__reduce__"] = 1
    write_graph(saved, g4)
    fails(saved, "unknown attribute(s)")


def test_inconsistent_shapes_are_caught_by_the_ops_own_inference(saved):
    g = graph(saved)
    k = [n["op"] for n in g["nodes"]].index("MatMul")
    g["nodes"][k]["outputs"][0]["shape"] = [None, 4]
    write_graph(saved, g)
    fails(saved, "declared outputs", "infers")
    g = graph(saved)
    m = manifest(saved)
    m["variables"][0]["shape"] = [3, 2]
    write_manifest(saved, m)
    fails(saved, os.path.join("variables", "0.npy"), "shape [2, 3], the manifest says [3, 2]")


def test_a_variable_fed_to_an_input_of_another_type(saved, tmp_path):
    m = manifest(saved)
    np.save(saved / "variables" / "0.npy", np.zeros((3, 3), np.float32))
    m["variables"][0]["shape"] = [3, 3]
    write_manifest(saved, m)
    fails(saved, "variable 0 is float32[3, 3] but feeds a graph input of float32[2, 3]")


def test_absurd_sizes_are_refused_before_allocating(saved):
    good = manifest(saved)
    m = json.loads(json.dumps(good))
    m["variables"][0]["shape"] = [1 << 20, 1 << 20]
    write_manifest(saved, m)
    fails(saved, "variables", "more than the", "allowed")
    write_manifest(saved, good)
    g = graph(saved)
    g["inputs"][0]["shape"] = [1 << 40, 1 << 40]
    write_graph(saved, g)
    fails(saved, os.path.join("graphs", "0.json"), "input 0", "more than the", "allowed")


def test_huge_npy_header_shape(saved):
    path = saved / "variables" / "0.npy"
    raw = path.read_bytes().replace(b"(2, 3)", b"(9999999999, 3)".ljust(6))
    path.write_bytes(raw)
    fails(saved, "0.npy")


@pytest.mark.parametrize("name", ["../outside.npy", "/etc/passwd", "variables/../../x.npy",
                                  "./variables/0.npy", "variables//0.npy", ".hidden", "a\\b"])
def test_paths_outside_the_directory(saved, name):
    m = manifest(saved)
    m["variables"][0]["file"] = name
    write_manifest(saved, m)
    fails(saved, "not a plain relative name")


def test_symlinks_are_refused(saved, tmp_path):
    outside = tmp_path / "outside.npy"
    shutil.copy(saved / "variables" / "0.npy", outside)
    os.remove(saved / "variables" / "0.npy")
    os.symlink(outside, saved / "variables" / "0.npy")
    fails(saved, "symbolic link")
    os.remove(saved / "variables" / "0.npy")
    shutil.move(str(saved / "variables"), str(tmp_path / "vars"))
    os.symlink(tmp_path / "vars", saved / "variables")
    fails(saved, "symbolic link (variables)")


def test_a_fifo_does_not_hang(saved):
    os.remove(saved / "graphs" / "0.json")
    os.mkfifo(saved / "graphs" / "0.json")
    fails(saved, "not a regular file")


def test_pickled_object_arrays_are_never_unpickled(saved, tmp_path):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    arr = np.empty((2, 3), dtype=object)
    arr[...] = Evil()
    np.save(saved / "variables" / "0.npy", arr, allow_pickle=True)
    fails(saved, "0.npy", "no pickles")
    (saved / "variables" / "0.npy").write_bytes(pickle.dumps(Evil()))
    fails(saved, "not a valid .npy")
    assert not marker.exists()


def test_truncated_files(saved):
    raw = (saved / "variables" / "0.npy").read_bytes()
    (saved / "variables" / "0.npy").write_bytes(raw[:-5])
    fails(saved, "truncated or padded")
    text = (saved / "saved_program.json").read_text()
    (saved / "saved_program.json").write_text(text[: len(text) // 2])
    fails(saved, "saved_program.json", "not valid JSON")


def test_deep_nesting(saved):
    (saved / "graphs" / "0.json").write_text("[" * 100_000 + "]" * 100_000)
    fails(saved, "nests deeper than")
    m = manifest(saved)
    m["variables"][0]["name"] = {"a": m["variables"][0]["name"]}
    write_manifest(saved, m)
    fails(saved, "variables[0] name", "is not a name")


def test_custom_gradient_graphs_nested_too_deep(pristine, tmp_path):
    d = tmp_path / "clip"
    shutil.copytree(pristine / "clip", d)
    g = graph(d)
    node = g["nodes"][0]
    assert node["op"] == "CustomGradient"
    for _ in range(limits.MAX_GRAPH_NESTING + 1):   # a gradient graph holding the node again
        inner = json.loads(json.dumps(g))
        node["attrs"]["grad"] = {"graph": inner}
        g = json.loads(json.dumps(g))
        node = g["nodes"][0]
    write_graph(d, g)
    fails(d, "nest deeper than")


def test_custom_gradient_graph_that_does_not_fit_its_node(pristine, tmp_path):
    d = tmp_path / "clip"
    shutil.copytree(pristine / "clip", d)
    g = graph(d)
    g["nodes"][0]["attrs"]["grad"]["graph"]["outputs"] = []
    write_graph(d, g)
    fails(d, "returns 0 gradients, mask says 1")


def test_duplicate_keys_and_huge_integers(saved):
    text = (saved / "saved_program.json").read_text()
    (saved / "saved_program.json").write_text(text.replace('"format_version": 1', '"format_version": 1, "format_version": 1'))
    fails(saved, "duplicate key")
    (saved / "saved_program.json").write_text(text.replace('"format_version": 1', '"format_version": 1' + "0" * 5000))
    fails(saved, "saved_program.json")


def test_references_between_entries(saved):
    good = manifest(saved)
    m = json.loads(json.dumps(good))
    m["functions"][0]["concrete"][0]["sources"] = [{"variable": 7}, {"arg": 0}]
    write_manifest(saved, m)
    fails(saved, "is not an index below 1")
    m = json.loads(json.dumps(good))
    m["objects"].append({"path": [{"attr": "__class__"}], "variable": 0})
    write_manifest(saved, m)
    fails(saved, "cannot be an attribute of a loaded module")
