"""``tapeflow inspect PATH``: what a saved program holds, read through the validating loader.

Signatures, functions with the argument types of each saved trace, the ops they use
(gradient graphs of custom gradients included), variables (shapes, dtypes, where they
hang on the module), custom gradients, and the format version.
"""
from collections import Counter

from ..ir.graph import Graph, aval_str
from .load import _Loader
from .loaded import LoadedFunction


def _ops(graph, counter, custom):
    for node in graph.nodes:
        counter[node.op] += 1
        if node.op == "CustomGradient":
            custom.append(node.attrs.get("grad") is not None)
        for v in node.attrs.values():
            if isinstance(v, Graph):
                _ops(v, counter, custom)


def _path(path):
    out = ""
    for seg in path:
        (kind, v), = seg.items()
        out += f".{v}" if kind == "attr" else f"[{v!r}]"
    return out.lstrip(".")


def describe(path):
    """The text ``tapeflow inspect`` prints (raises SavedModelError for a bad program)."""
    loader = _Loader(path)
    root = loader.run()
    m = loader.m
    lines = [f"saved program: {path}",
             f"format: {m['format']} version {m['format_version']} "
             f"(written by tapeflow {m['tapeflow_version']})"]
    if isinstance(root, LoadedFunction):
        lines.append(f"root: function {root.name!r}")
    else:
        lines.append(f"root: module {m['root']['name']!r}")
    attr_of = {}
    for o in m["objects"]:
        for kind in ("function", "variable"):
            if kind in o:
                attr_of.setdefault((kind, o[kind]), _path(o["path"]))
    lines.append("signatures:" if m["signatures"] else "signatures: none")
    for name, j in sorted(m["signatures"].items()):
        lines.append(f"  {name} -> {loader.functions[j].name}")
    lines.append("functions:")
    all_ops, custom = Counter(), []
    for j, fn in enumerate(loader.functions):
        where = attr_of.get(("function", j))
        lines.append(f"  {fn.name}" + (f"  (attribute {where})" if where and where != fn.name else ""))
        for sc in fn.concretes:
            ops, cg = Counter(), []
            _ops(sc.concrete.graph, ops, cg)
            all_ops.update(ops)
            custom += cg
            args = ", ".join(f"{p.name}: {leaf}" for p, leaf in zip(fn.params, _per_param(sc)))
            outs = " ".join(aval_str(v.aval) for v in sc.concrete.graph.outputs[:sc.concrete.n_out])
            extra = f", writes {len(sc.concrete.assigned)} variable(s)" if sc.concrete.assigned else ""
            lines.append(f"    ({args}) -> ({outs}){extra}; {sum(ops.values())} ops"
                         + (f", {len(cg)} custom gradient(s)" if cg else ""))
    lines.append("variables:" if loader.variables else "variables: none")
    for i, v in enumerate(loader.variables):
        where = attr_of.get(("variable", i))
        lines.append(f"  {v.name:<30} {aval_str(v.aval):<14} "
                     f"{'trainable' if v.trainable else 'non-trainable':<13}"
                     + (f" {where}" if where else " (captured by a function)"))
    if custom:
        saved = sum(custom)
        state = ("saved" if m["custom_gradients"] else
                 "not saved (differentiating them works only in the process that saved them)")
        lines.append(f"custom gradients: {len(custom)} node(s); gradient graphs {state}"
                     + ("" if saved == len(custom) or not m["custom_gradients"] else
                        f"; {len(custom) - saved} missing"))
    else:
        lines.append("custom gradients: none")
    lines.append("ops: " + ", ".join(f"{op} x{n}" for op, n in sorted(all_ops.items())))
    return "\n".join(lines)


def _per_param(sc):
    """One description per parameter (a nested argument shows its leaves in brackets)."""
    leaves = iter(sc.leaves)
    out = []
    for s in sc.structure:
        out.append(_shown(s, leaves))
    return out


def _shown(s, leaves):
    if s == "leaf":
        return next(leaves).describe()
    kind, items = s
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {_shown(v, leaves)}" for k, v in items) + "}"
    inner = ", ".join(_shown(v, leaves) for v in items)
    return f"[{inner}]" if kind == "list" else f"({inner})"


__all__ = ["describe"]
