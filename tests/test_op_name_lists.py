"""No module outside the op tables keeps a list of op names (issue 24): what a pass, the
vectorizer, the jacobian or codegen asks about an op is a field of its ``OpDef``, set at its
``defop``, so adding an op means setting its facts in one place.

The op tables are the packages keyed by op name, one entry per op: ``ir/defs/``,
``runtime/kernels/``, ``autodiff/grads/``, ``codegen/templates/``, ``passes/batching/``,
``ops/``. Elsewhere a literal list, set, tuple or dict may name at most two ops (a pass that
rewrites one particular op still names it).
"""
import ast
import pathlib

import tapeflow
from tapeflow.ir.opdef import OPS

ROOT = pathlib.Path(tapeflow.__file__).parent
TABLES = ("ir/defs/", "runtime/kernels/", "autodiff/grads/", "codegen/templates/",
          "passes/batching/", "ops/")


def _op_name_lists(tree, names):
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Set, ast.Tuple)):
            elts = node.elts
        elif isinstance(node, ast.Dict):
            elts = [k for k in node.keys if k is not None]
        else:
            continue
        ops = [e.value for e in elts if isinstance(e, ast.Constant) and e.value in names]
        if len(ops) >= 3:
            yield node.lineno, ops


def test_no_module_outside_the_op_tables_lists_three_or_more_op_names():
    names = set(OPS) | {"Const"}
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(TABLES):
            continue
        for line, ops in _op_name_lists(ast.parse(path.read_text()), names):
            found.append(f"{rel}:{line}: {ops}")
    assert found == []


def test_the_scan_finds_a_list_of_op_names():
    tree = ast.parse('X = {"Mul": (0, 1), "RealDiv": (0,), "Neg": (0,)}\nY = ("Add", "x", "Sub")')
    assert [ops for _, ops in _op_name_lists(tree, set(OPS))] == [["Mul", "RealDiv", "Neg"]]
