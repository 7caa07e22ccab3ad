"""Graphviz text (ir/dot.py): names escaped, argument names used, every drawn thing an id."""
import subprocess

from tapeflow.ir.dot import document, link, quote, statements, to_dot

from test_graph import small_graph  # noqa: E402  (tests/ir is on sys.path under pytest)
from tools import need


def test_quote_escapes_quotes_backslashes_and_newlines():
    assert quote('a "b" \\ c\nd') == '"a \\"b\\" \\\\ c\\nd"'


def test_arguments_are_named_and_hostile_names_stay_one_string():
    name = 'loss "v2" \\n'
    text = to_dot(small_graph(), name, arg_names=['x', 'y"}; evil [label="'])
    assert text.startswith('digraph "loss \\"v2\\" \\\\n" {')
    assert 'in0 [label="x\\na: f32[3]"' in text
    assert 'in1 [label="y\\"}; evil [label=\\"\\nb: f32[]"' in text
    assert "input 0" not in text
    assert 'n0 [label="Mul\\nc: f32[3]", id="n0", tooltip="c:f32[3] = Mul a b"]' in text


def test_groups_are_clusters_or_single_nodes_when_collapsed():
    g = small_graph()
    drawn = statements(g, "p_", groups=[("fused loop over [3]", [0, 2])])
    text = "\n".join(drawn.stmts)
    assert "subgraph cluster_p_g0 {" in text and 'p_n0 [label="Mul' in text
    collapsed = statements(g, "p_", groups=[("fused loop over [3]", [0, 2])], collapse=True)
    text = "\n".join(collapsed.stmts)
    assert 'p_g0 [label="fused loop over [3]\\nMul Add"' in text
    assert "p_n0 " not in text and "p_n2 " not in text and "p_n3 " in text
    assert text.count("p_in0 -> p_g0;") == 1 and "p_g0 -> p_g0" not in text
    assert collapsed.producers == ["p_n3", "p_g0"]


def test_skipped_outputs_are_linked_instead():
    g = small_graph()
    fwd = statements(g, "f_", skip_outputs=(1,))
    bwd = statements(g, "b_")
    assert fwd.outputs == ["f_out0", None]
    assert link(fwd.producers[1], bwd.inputs[0], "residual 0").startswith("f_n0 -> b_in0 [")


def test_graphviz_accepts_what_we_write():
    dot = need("dot")
    g = small_graph()
    text = document('x "y"', statements(g, "a_").stmts + statements(g, "b_").stmts)
    r = subprocess.run([dot, "-Tsvg"], input=text, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert 'id="a_n0"' in r.stdout and 'id="b_out1"' in r.stdout
