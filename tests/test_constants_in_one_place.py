"""Whether something is a literal is asked one way (issue 24): ``ir/graph.py``'s ``is_constant``
and ``constant_of`` (a Node, a Value or None), and ``const_node``/``Graph.const`` make one. No
module outside ``ir/`` compares an op name with ``"Const"`` or reads a constant's
``attrs["value"]``, so how a constant is kept can change in one place.
"""
import ast
import pathlib
import re

import numpy as np

import tapeflow
from tapeflow.ir.graph import Graph, const_node, constant_of, is_constant

ROOT = pathlib.Path(tapeflow.__file__).parent
_QUOTED = re.compile(r"""["'](Const|value)["']""")


def _is_const_name(node):
    if isinstance(node, ast.Constant):
        return node.value == "Const"
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_const_name(e) for e in node.elts)
    return False


def _asks_for_constants(tree):
    """Lines comparing with ``"Const"`` (``==``, ``!=``, ``in``) or reading ``attrs["value"]``
    (``attrs.get("value")``): only a Const has a ``value`` attribute."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(map(_is_const_name, [node.left, *node.comparators])):
            yield node.lineno, "compares with 'Const'"
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "attrs" and isinstance(node.slice, ast.Constant) \
                and node.slice.value == "value":
            yield node.lineno, "reads attrs['value']"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and isinstance(node.func.value, ast.Attribute) \
                and node.func.value.attr == "attrs" and node.args \
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == "value":
            yield node.lineno, "reads attrs.get('value')"


def test_no_module_outside_ir_asks_for_constants_by_name():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("ir/"):
            continue
        text = path.read_text()
        if not _QUOTED.search(text):      # neither string in the file: nothing to parse
            continue
        found += [f"{rel}:{line}: {what}" for line, what in _asks_for_constants(ast.parse(text))]
    assert found == [], "use ir.graph.is_constant / constant_of"


def test_the_scan_finds_each_way_of_asking():
    tree = ast.parse('a = n.op == "Const"\nb = n.op not in ("Add", "Const")\n'
                     'c = n.attrs["value"]\nd = n.attrs.get("value")\ne = n.op == "Add"\n'
                     'f = n.attrs["axis"]')
    assert [line for line, _ in _asks_for_constants(tree)] == [1, 2, 3, 4]


def test_constant_accessors():
    g = Graph()
    x = g.const(np.array([1.0, 2.0]))
    node = x.node
    assert is_constant(x) and is_constant(node)
    np.testing.assert_array_equal(constant_of(x), [1.0, 2.0])
    assert constant_of(node) is constant_of(x)          # the array itself, not a copy
    assert not is_constant(None) and constant_of(None) is None
    y = g.add("Neg", [x], {}, [x.aval]).outputs[0]
    assert not is_constant(y) and constant_of(y) is None and constant_of(y.node) is None
    made = const_node(3)
    assert made.inputs == [] and made.outputs[0].aval.shape == () and int(constant_of(made)) == 3
    assert made not in g.nodes                           # const_node does not attach it
