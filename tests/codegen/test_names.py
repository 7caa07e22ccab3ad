"""Any function name compiles: generated identifiers and file names are sanitized, bounded and hashed."""
import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.codegen import compile_graph
from tapeflow.ir import dtypes as D
from tapeflow.ir.graph import Graph, Value
from tapeflow.ir.opdef import AVal

from codegen.samples import add_node

NAMES = ["f" * 230, "函数" * 38, "Ⅷx", "r", "consts", "make_call", "v0", "lambda_", "_part1"]


def _graph():
    g = Graph()
    x = Value(AVal((3,), D.float32))
    g.inputs = [x]
    g.outputs = [add_node(g, "Exp", [x])]
    return g


@pytest.mark.parametrize("name", NAMES + ["f²", "", "def", "1x", "a b/c\\d\n"])
def test_any_name_compiles_to_a_short_ascii_file(tmp_path, name):
    prog = compile_graph(_graph(), name, cache_dir=str(tmp_path))
    np.testing.assert_allclose(prog(np.zeros(3, np.float32))[0], np.ones(3))
    stem = os.path.basename(prog.cache_path)
    assert stem.isascii() and len(stem) <= 80, stem
    assert stem[:-3].replace("_", "a").isalnum()


@pytest.mark.parametrize("name", NAMES)
def test_a_function_with_a_long_or_non_ascii_name_compiles(name, monkeypatch, tmp_path):
    monkeypatch.setenv("TAPEFLOW_CACHE_DIR", str(tmp_path))
    scope = {"tf": tf}
    exec(f"def {name}(x):\n    return tf.exp(x) * 2.0\n", scope)   # any legal Python name
    fn = scope[name] if name in scope else next(v for k, v in scope.items() if k != "tf" and callable(v))
    f = tf.function(fn)
    x = np.ones(3, np.float32)
    for _ in range(2):
        np.testing.assert_allclose(f(x).numpy(), 2 * np.e * x, rtol=1e-6)
