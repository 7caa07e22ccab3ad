"""Graphs rebuilt from a traced one (the joint by replaying it under a tape, the forward and
backward split of that, the min-cut) keep each op's user line, and gradient ops carry the
line of the forward op they differentiate (as TensorFlow names gradient ops after their
forward op): not the line of whoever rebuilt the graph."""
import pathlib
import re

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import cli
from tapeflow.errors import InvalidArgumentError

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mlp_step.py"
SPECS = ["--spec", "f32[4,3]", "--spec", "f32[3,2]"]
GRAPH_STAGES = ["traced", "passes", "program", "joint", "min-cut", "forward", "backward"]
NODE = re.compile(r"^\s+\w+:\S+ = (\w+)")


def line_of(text):
    """The line number of the line of this file containing ``text``."""
    src = pathlib.Path(__file__).read_text().splitlines()
    return next(k + 1 for k, ln in enumerate(src) if text in ln and "line_of" not in ln)


def code_lines(path):
    """Line numbers of ``path`` that hold code (not blank, a comment or the docstring)."""
    text = path.read_text().splitlines()
    return {k + 1 for k, ln in enumerate(text) if ln.startswith("    ") and not ln.strip().startswith("#")}


@pytest.mark.parametrize("specs", [SPECS, ["--spec", "f32[?,3]", "--spec", "f32[3,2]"]],
                         ids=["known", "unknown-rows"])
def test_every_node_of_every_stage_names_a_line_of_the_readme_example(capsys, specs):
    # with unknown rows a tape adds a Shape node for the mean's size: it takes the mean's line
    stages = [a for s in GRAPH_STAGES for a in ("--stage", s)]
    assert cli.main(["dump", f"{EXAMPLE}:loss", *specs, *stages, "--lines"]) == 0
    out = capsys.readouterr().out
    allowed = code_lines(EXAMPLE)
    nodes = [ln for ln in out.splitlines() if NODE.match(ln) and NODE.match(ln).group(1) != "Const"]
    assert len(nodes) > 40   # every stage printed
    for ln in nodes:
        m = re.search(r"  # \S*mlp_step\.py:(\d+)$", ln)
        assert m and int(m.group(1)) in allowed, ln
    for heading in ("joint", "min-cut backward", "backward"):
        assert f"== {heading}" in out


def test_every_drawn_node_names_a_line_of_the_readme_example(capsys):
    stages = [a for s in ["traced", "program", "joint", "min-cut", "forward"] for a in ("--stage", s)]
    assert cli.main(["dump", f"{EXAMPLE}:loss", *SPECS, "--format", "dot", "--lines", *stages]) == 0
    boxes = [ln for ln in capsys.readouterr().out.splitlines()
             if re.search(r'id="(?:\w+_)?n\d+"', ln) and not ln.strip().startswith("label")]
    assert len(boxes) > 40
    for ln in boxes:
        assert "Const" in ln or "mlp_step.py:1" in ln, ln


@tf.custom_gradient
def _clipped(x):
    y = tf.identity(x)

    def grad(dy):
        return tf.clip_by_value(dy, -1.0, 1.0)      # line: custom grad
    return y, grad


@tf.function(jit_compile=False)
def _branchy(x):
    if tf.reduce_sum(x) > 0:                          # line: if
        y = tf.sin(x)                                 # line: sin
    else:
        y = tf.cos(x)                                 # line: cos
    z = _clipped(y * 3.0)                             # line: clipped
    return tf.reduce_sum(z * z)                       # line: sum


def _where(node):
    return node.line[1] if node.line else None


def test_gradient_ops_carry_the_forward_ops_line_through_if_and_custom_gradients():
    lines = {k: line_of(f"# line: {k}") for k in ("if", "sin", "cos", "clipped", "sum", "custom grad")}
    concrete = _branchy.get_concrete_function(tf.constant([1.0, 2.0]))
    _, bwd, _ = concrete.tape_pair()
    by_op = {}
    for node in bwd.graph.nodes:
        if node.op != "Const":
            by_op.setdefault(node.op, set()).add(_where(node))
    assert by_op["Minimum"] == by_op["Maximum"] == {lines["custom grad"]}  # the user's grad_fn
    assert by_op["If"] == {lines["if"]}                                     # the If's gradient
    assert lines["sum"] in by_op["Mul"] and lines["clipped"] in by_op["Mul"]
    if_node = next(n for n in bwd.graph.nodes if n.op == "If")
    branch_lines = {_where(n) for g in (if_node.attrs["then_graph"], if_node.attrs["else_graph"])
                    for n in g.nodes if n.op != "Const"}
    assert branch_lines == {lines["sin"], lines["cos"]}
    assert all(n.line for n in concrete.joint().graph.nodes if n.op != "Const")


@tf.function(jit_compile=False)
def _det_twice(a):
    d = tf.linalg.det(a)                              # line: det
    return d * 2.0


def test_an_error_in_the_backward_names_the_forward_ops_line():
    # the determinant of a singular matrix is 0; its gradient inverts the matrix and fails
    a = tf.constant(np.ones((2, 2), np.float32))
    with tf.GradientTape() as tape:
        tape.watch(a)
        y = _det_twice(a)
    with pytest.raises(InvalidArgumentError) as e:
        tape.gradient(y, a)
    det = line_of("# line: det")
    assert f"test_rebuilt_lines.py:{det}: d = tf.linalg.det(a)" in str(e.value)
    assert "MatrixInverse" in str(e.value) and "called from" in str(e.value)
