"""`tapeflow inspect PATH` and `tapeflow dump --saved PATH:NAME`."""
import json

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import cli

from programs import Seed003Clip


class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.ones((2, 3), np.float32), name="w")
        self.steps = tf.Variable(0, trainable=False, name="steps")

    @tf.function(input_signature=[tf.TensorSpec([None, 2])])
    def predict(self, x):
        return tf.nn.relu(x @ self.w)

    @tf.function
    def step(self, x, scale=1.0):
        self.steps.assign_add(1)
        return tf.reduce_sum(self.predict(x)) * scale


@pytest.fixture(scope="module")
def saved(tmp_path_factory, module_numpy_backend):
    base = tmp_path_factory.mktemp("cli")
    net = Net()
    net.step(tf.zeros([4, 2]))
    tf.saved_model.save(net, str(base / "net"))
    tf.saved_model.save(Seed003Clip(), str(base / "clip"),
                        options=tf.saved_model.SaveOptions(experimental_custom_gradients=False))
    return base


def test_inspect_lists_signatures_functions_variables_ops_and_version(saved, capsys):
    assert cli.main(["inspect", str(saved / "net")]) == 0
    out = capsys.readouterr().out
    assert "format: tapeflow-saved-program version 1" in out
    assert "serving_default -> predict" in out
    assert "(x: float32[?,2]) -> (f32[?,3]); " in out
    assert "(x: float32[4,2], scale: 1.0) -> (f32[]), writes 1 variable(s)" in out
    assert "w:0" in out and "f32[2,3]" in out and "non-trainable steps" in out
    assert "custom gradients: none" in out
    assert "MatMul x" in out and "Relu x" in out


def test_inspect_reports_custom_gradients_not_saved(saved, capsys):
    assert cli.main(["inspect", str(saved / "clip")]) == 0
    out = capsys.readouterr().out
    assert "custom gradients: 5 node(s); gradient graphs not saved" in out  # ranks 0..4
    assert "(x: float32[?,?]) -> (f32[?,?])" in out


def test_inspect_of_a_bad_program_is_one_line_on_stderr(saved, tmp_path, capsys):
    import shutil
    shutil.copytree(saved / "net", tmp_path / "bad")
    m = json.loads((tmp_path / "bad" / "saved_program.json").read_text())
    m["format_version"] = 99
    (tmp_path / "bad" / "saved_program.json").write_text(json.dumps(m))
    assert cli.main(["inspect", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert "saved_program.json: format version 99 is not supported" in err


def test_dump_a_loaded_function(saved, capsys):
    assert cli.main(["dump", "--saved", f"{saved / 'net'}:predict", "--spec", "f32[5,2]"]) == 0
    out = capsys.readouterr().out
    assert "== traced: predict" in out
    assert "a:f32[5,2] b:f32[2,3]" in out and "MatMul" in out and "Relu" in out
    assert cli.main(["dump", "--saved", f"{saved / 'net'}:step"]) == 0   # its saved trace's types
    assert "f32[4,2]" in capsys.readouterr().out
    assert cli.main(["dump", "--saved", f"{saved / 'net'}:serving_default", "--spec", "f32[1,2]"]) == 0


def test_dump_saved_errors_are_messages(saved, capsys):
    for argv, says in [([f"{saved / 'net'}:nope"], "no function 'nope'"),
                       ([f"{saved / 'net'}:predict", "--spec", "f32[5,3]"],
                        "Could not find matching concrete function"),
                       ([f"{saved / 'nothing'}:f"], "is not a directory")]:
        assert cli.main(["dump", "--saved", *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("tapeflow: ") and says in err and err.count("\n") == 1
