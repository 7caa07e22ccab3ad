"""The printer's ``lines`` option and Graph's repr (the default text is the golden one)."""
import os

from tapeflow.ir.graph import line_str, print_graph

from test_graph import small_graph  # noqa: E402  (tests/ir is on sys.path under pytest)


def test_lines_annotate_nodes_with_the_users_line_and_default_is_unchanged():
    g = small_graph()
    plain = print_graph(g)
    g.nodes[0].line = (os.path.join(os.getcwd(), "model.py"), 12)
    g.nodes[2].line = ("/elsewhere/../outside/train.py", 7)
    assert print_graph(g) == plain   # the default output is byte-identical
    text = print_graph(g, lines=True).splitlines()
    assert text[1] == "    c:f32[3] = Mul a b  # model.py:12"         # relative inside the cwd
    assert text[2] == "    d:f32[] = Const 2.0"                        # no line known: nothing
    assert text[3].endswith("  # /elsewhere/../outside/train.py:7")   # outside: as recorded
    assert line_str(g.nodes[1]) == ""


def test_graph_repr_is_a_summary():
    assert repr(small_graph()) == "<Graph (f32[3] f32[]) -> (f32[] f32[3]), 4 nodes>"
