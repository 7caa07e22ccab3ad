"""Calls in converted code go through ``rt.call`` (AutoGraph's ``converted_call``), which
converts the user functions they call, recursively (convert.py). The last rewrite to run:
the runtime's own calls (``_tfw_rt.while_stmt`` and the rest) are left alone, and so are
the builtins that read their caller's frame (``super()``, ``locals()``...)."""
import ast

# builtins that read the calling frame: called through a helper they would see the wrong one
_FRAME_BUILTINS = frozenset({"super", "locals", "vars", "eval", "exec", "globals", "dir",
                             "breakpoint"})


class CallRewriter(ast.NodeTransformer):
    """``f(a, *b, k=c)`` -> ``_tfw_rt.call(f, a, *b, k=c)``, nested functions included."""

    def __init__(self, prefix):
        self.rt = prefix + "rt"
        self.calls = 0

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id in _FRAME_BUILTINS:
            return node
        if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                and f.value.id == self.rt):
            return node
        self.calls += 1
        call = ast.Attribute(value=ast.Name(id=self.rt, ctx=ast.Load()), attr="call",
                             ctx=ast.Load())
        return ast.copy_location(ast.Call(func=ast.copy_location(call, node),
                                          args=[f] + node.args, keywords=node.keywords), node)


__all__ = ["CallRewriter"]
