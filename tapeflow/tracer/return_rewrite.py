"""``return`` inside ``if`` and loops -> a flag and a value (AutoGraph's return transformer),
before the ``while``/``if`` rewrites run (convert.py), so those statements convert.

In a function with a ``return`` nested in an ``if``, a loop or a ``with``::

    _tfw_do_return = False
    _tfw_retval = None
    ...  return v   ->   _tfw_retval = v; _tfw_do_return = True    (+ `break` inside a loop)
    return _tfw_retval                                             (at the end)

The statements after one that may return run under ``if not _tfw_do_return:``, except
after an ``if`` one of whose branches always returns: they move into the other branch, as
AutoGraph does, so that ``if c: return a`` followed by ``return b`` becomes one ``if`` that
assigns the return value on both sides (one If node). In a loop body, after a statement
that may return comes ``if _tfw_do_return: break`` (the ``break`` rewrite makes it a flag).
A loop holding a ``return`` is a Python loop when its test is a Python value; as a While
node it raises TensorFlow's NotImplementedError (``pywhile``: TensorFlow cannot return from
inside its loops either). Functions with a ``return`` inside ``try`` or ``match``, and
generators, are left as they are.
"""
import ast

from .while_rewrite import locate, walk_scope

_LOOPS = (ast.For, ast.While)
_BLOCKS = (ast.If, ast.For, ast.While, ast.With)


def _returns_in(nodes):
    return any(isinstance(n, ast.Return) for n in walk_scope(nodes))


def _always_returns(stmts):
    """Whether every path through ``stmts`` ends in a ``return`` (loops never count)."""
    for s in stmts:
        if isinstance(s, ast.Return):
            return True
        if isinstance(s, ast.If) and _always_returns(s.body) and _always_returns(s.orelse):
            return True
        if isinstance(s, ast.With) and _always_returns(s.body):
            return True
    return False


def _convertible(fn):
    """Whether ``fn`` has a nested ``return`` this rewrite can handle."""
    nested = False
    for n in walk_scope(fn.body):
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if isinstance(n, (ast.Try, ast.Match)) or type(n).__name__ == "TryStar":
            if _returns_in([n]):
                return False
        if isinstance(n, _BLOCKS) and not nested:
            nested = _returns_in(n.body + getattr(n, "orelse", []))
    return nested


class ReturnRewriter(ast.NodeTransformer):
    """Rewrites the nested ``return`` statements of a function and of its nested functions."""

    def __init__(self, prefix):
        self.flag, self.value = prefix + "do_return", prefix + "retval"
        self.rewritten = 0

    def visit_FunctionDef(self, node):
        self.generic_visit(node)             # nested functions first: their returns are theirs
        if not _convertible(node):
            return node
        self.rewritten += 1
        body = self._block(node.body, in_loop=False)
        node.body = [locate(s, node) for s in (
            [self._assign(self.flag, ast.Constant(False)), self._assign(self.value, ast.Constant(None))]
            + body + [ast.Return(value=ast.Name(id=self.value, ctx=ast.Load()))])]
        return node

    def visit_AsyncFunctionDef(self, node):
        return node

    def visit_Lambda(self, node):
        return node

    def _assign(self, name, value):
        return ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value,
                          type_comment=None)

    def _block(self, stmts, in_loop):
        """``stmts`` with their returns rewritten; the rest of the block guarded after any
        statement that may return."""
        out = []
        for i, s in enumerate(stmts):
            rest = stmts[i + 1:]
            if isinstance(s, ast.Return):
                value = s.value if s.value is not None else ast.Constant(None)
                out += [ast.copy_location(self._assign(self.value, value), s),
                        ast.copy_location(self._assign(self.flag, ast.Constant(True)), s)]
                if in_loop:
                    out.append(ast.copy_location(ast.Break(), s))
                return out                   # the rest of the block never runs
            if not isinstance(s, _BLOCKS) or not _returns_in(s.body + getattr(s, "orelse", [])):
                out.append(s)
                continue
            if isinstance(s, ast.If) and rest and (_always_returns(s.body)
                                                   or _always_returns(s.orelse)):
                # the rest runs only on the side that does not return: move it there
                if _always_returns(s.body):
                    s.orelse = s.orelse + rest
                else:
                    s.body = s.body + rest
                rest = []
            if isinstance(s, _LOOPS):
                s.body = self._block(s.body, in_loop=True)
                s.orelse = self._block(s.orelse, in_loop)
            else:
                s.body = self._block(s.body, in_loop)
                if isinstance(s, ast.If):
                    s.orelse = self._block(s.orelse, in_loop)
            out.append(s)
            flag = ast.Name(id=self.flag, ctx=ast.Load())
            if in_loop and (isinstance(s, _LOOPS) or rest):   # a loop inside: it broke only itself
                out.append(ast.copy_location(ast.If(test=flag, body=[ast.Break()], orelse=[]), s))
            if not rest:
                return out
            if in_loop:
                out += self._block(rest, in_loop)
            else:
                out.append(ast.copy_location(ast.If(
                    test=ast.UnaryOp(op=ast.Not(), operand=flag),
                    body=self._block(rest, in_loop), orelse=[]), rest[0]))
            return out
        return out


__all__ = ["ReturnRewriter"]
