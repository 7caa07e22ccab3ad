"""tapeflow's layers, checked from the imports: no cycles, no upward imports, no hidden ones.

Each layer imports only the layers below it. Where a lower layer needs a capability of a
higher one (the If/While gradient rules, the tape's vectorized jacobian), the higher layer
registers it into a table of the lower one, as JAX's control-flow module registers ``cond``'s
rules. An import inside a function body must say why on its line or the line above
(an optional dependency, import cost), so no such import hides a cycle.
"""
import ast
import functools
import pathlib

import networkx as nx
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "tapeflow"

# Lowest first. Every module of the package is named here: a top-level module by its own name
# (`tapeflow` is `tapeflow/__init__.py`), a sub-package by its name (it and everything under
# it). A module matching no entry fails `test_every_module_has_a_layer`: a new package or
# top-level file is placed on purpose, never swept into a catch-all. docs/architecture.md's
# layer table lists the same layers and entries (tests/test_docs_shape.py checks it).
LAYERS = [
    ("base", ["tapeflow.errors", "tapeflow._nest", "tapeflow.env", "tapeflow._version"]),
    ("ir", ["tapeflow.ir"]),
    ("runtime core", ["tapeflow.runtime"]),
    ("ops", ["tapeflow.ops", "tapeflow.random"]),
    ("autodiff", ["tapeflow.autodiff"]),
    ("passes", ["tapeflow.passes"]),
    ("codegen", ["tapeflow.codegen"]),
    ("tracer", ["tapeflow.tracer"]),
    ("saved_model", ["tapeflow.saved_model"]),
    ("data", ["tapeflow.data"]),
    ("keras", ["tapeflow.keras"]),
    ("namespaces", ["tapeflow", "tapeflow.math", "tapeflow.nn", "tapeflow.linalg",
                    "tapeflow.debugging", "tapeflow.config", "tapeflow.dtypes",
                    "tapeflow.autograph", "tapeflow.testing", "tapeflow.train", "tapeflow.nest", "tapeflow.test", "tapeflow.gradient_wrappers",
                    "tapeflow.type_specs"]),
    ("distribute", ["tapeflow.distribute"]),
    ("cli", ["tapeflow.cli", "tapeflow.__main__"]),
]

# (importer, imported): the upward imports we accept, each with the reason.
ALLOWED_UPWARD = {
}


def _modules():
    mods = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()


@functools.cache
def _is_subpackage(entry):
    return entry != "tapeflow" and (ROOT.parent / entry.replace(".", "/") / "__init__.py").exists()


def layer_of(module):
    """The index in LAYERS of the entry naming `module`: the module itself, or the
    sub-package holding it. The root package matches only `tapeflow` itself."""
    for index, (_, entries) in enumerate(LAYERS):
        for entry in entries:
            if module == entry or (_is_subpackage(entry) and module.startswith(entry + ".")):
                return index
    raise AssertionError(f"{module} is in no layer; add it to LAYERS")


def _targets(module, path, node):
    """The tapeflow modules an import statement names (a package's module for `from pkg import x`
    when x is not a submodule)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        if node.level:
            base = base[:len(base) - node.level + 1]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in MODULES else prefix for a in node.names]
    out = []
    for name in names:
        while name not in MODULES and "." in name:
            name = name.rsplit(".", 1)[0]
        if name in MODULES:
            out.append(name)
    return out


@functools.cache
def imports():
    """(importer, imported, line, inside a function, the import has a comment); parsed on first
    use, not at collection (every pytest worker collects this file)."""
    found = []
    for module, path in MODULES.items():
        source = path.read_text()
        lines = source.splitlines()

        def visit(node, in_function):
            for child in ast.iter_child_nodes(node):
                nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    here = lines[child.lineno - 1]
                    above = lines[child.lineno - 2].strip() if child.lineno > 1 else ""
                    commented = "#" in here or above.startswith("#")
                    for target in _targets(module, path, child) or [None]:
                        found.append((module, target, child.lineno, in_function, commented))
                visit(child, nested)

        visit(ast.parse(source), False)
    return found



def test_every_module_has_a_layer():
    for module in MODULES:
        layer_of(module)


def test_an_unknown_module_has_no_layer():
    for module in ["tapeflow.made_up", "tapeflow.made_up.x", "tapeflow.mathx", "tapeflow.math.x"]:
        with pytest.raises(AssertionError, match="is in no layer"):
            layer_of(module)


def test_every_entry_names_a_module_or_package():
    entries = [entry for _, names in LAYERS for entry in names]
    assert len(entries) == len(set(entries))
    assert [entry for entry in entries if entry not in MODULES] == []


def test_no_import_cycles():
    graph = nx.DiGraph()
    graph.add_edges_from((a, b) for a, b, *_ in imports() if b is not None and a != b)
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert cycles == []


def test_no_upward_imports():
    upward = sorted({(a, b) for a, b, *_ in imports()
                     if b is not None and layer_of(b) > layer_of(a) and (a, b) not in ALLOWED_UPWARD})
    assert upward == []


def test_allowed_upward_imports_still_exist():
    stale = [pair for pair in ALLOWED_UPWARD if not any((a, b) == pair for a, b, *_ in imports())]
    assert stale == [], "no longer imported: drop them from ALLOWED_UPWARD"


def test_imports_inside_functions_say_why():
    silent = sorted({f"{MODULES[a].relative_to(ROOT.parent)}:{line}"
                     for a, b, line, inside, commented in imports() if inside and not commented})
    assert silent == []
