"""The AST rewrite of a function's ``if`` statements (convert.py compiles the result).

Per ``if``: whether it converts (``_why_not``: not with ``return``/``yield``/``await``, a
``break``/``continue`` statement leaving a loop around it, a ``return`` inside a loop, a
``global``/``nonlocal`` statement or a name declared so, or a branch mutating an object in
place (``a.b = ...``, ``a[i] = ...``, ``lst.append(...)``): both branches are traced when the
test is a symbolic tensor, and such side effects would happen twice. Those stay Python
``if``s, traced once per path as before). A converted ``while``'s ``break`` is a flag by now
(while_rewrite.py): an ``if`` setting it converts, so a ``break`` on a tensor makes the flag,
then the loop's test, a tensor, and the rest of the loop one While node (pywhile.py). A
converted ``if`` becomes::

    def _tfw_iftest_0(): return <test>          # `and`/`or`/`not` lazily, tensors or not
    def _tfw_then_0():
        nonlocal a, t                           # every name either branch assigns
        <body>
    def _tfw_else_0():
        nonlocal a, t
        <orelse> (or pass)
    def _tfw_ifvars_0():
        nonlocal a, t                           # owns the cells: if_stmt reads and sets them
    _tfw_rt.if_stmt(_tfw_iftest_0, _tfw_then_0, _tfw_else_0, _tfw_ifvars_0, ("a", "t"), ("t",), <line>)

``elif`` is an ``if`` in the ``else:`` branch, converted the same way. The second tuple names
the temporaries: names nothing outside the ``if`` reads (nor its own branches before
assigning them), which need no value after it.
"""
import ast
from collections import Counter

from .while_rewrite import (Rewriter, _bound, _explicit_super, _loads, _PlainAssign, _read_first,
                            leaves_scope, locate, make_def, walk_scope)

# methods that change their object in place: a branch calling one is not traced twice
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update",
                       "setdefault", "popitem", "add", "discard", "sort", "reverse",
                       "__setitem__", "__delitem__", "appendleft", "extendleft", "popleft",
                       "write", "send"})


def _why_not(node, declared, prefix):
    """Why the ``if`` ``node`` stays a Python ``if`` (traced per path), or None."""
    branches = node.body + node.orelse
    why = leaves_scope(branches)
    if why:
        return f"a branch has {why}"
    for n in walk_scope(branches):
        if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            return "a branch assigns an attribute or an item"
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr in _MUTATORS):
            return f"a branch calls `.{n.func.attr}(...)`"
    for n in walk_scope(branches, skip_loops=True):
        if isinstance(n, (ast.Break, ast.Continue)):
            return "a branch has a `break` or `continue`"
    bound = _bound(branches)
    if prefix + "do_return" in bound and any(
            n.startswith((prefix + "break_", prefix + "continue_")) for n in bound):
        return "a branch has a `return` inside a loop"     # per path (pyif._check_returns)
    for name in bound:
        if name in declared:
            return f"it assigns {name!r}, declared {declared[name]} in the function"
    return None


_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_OPAQUE = frozenset({"locals", "vars", "eval", "exec", "dir"})


def live_after(fn):
    """{id(if statement): names code running after it may read before assigning} for every
    ``if`` of ``fn`` (not of nested functions), computed on the function as written: the
    statements after it in its block (minus the names they surely assign first, unless a
    ``break``/``continue``/``return`` may skip those), then the same for every enclosing
    block, an enclosing loop's next iteration (its test or iterable too), an enclosing
    ``try``'s handlers, ``else:`` and ``finally:``, and whatever nested functions and lambdas
    read (they may run anytime). A branch of an enclosing ``if`` never runs after it."""
    always = set()
    for n in walk_scope(fn.body):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            always |= set(_uses(n))
        if isinstance(n, ast.Name) and n.id in _OPAQUE:
            return {}                   # names read by name at run time: no temporaries
    out = {}

    def visit(stmts, after, always):
        for i, s in enumerate(stmts):
            rest = stmts[i + 1:]
            reads, defined = _exposed(rest)
            if any(isinstance(n, (ast.Break, ast.Continue, ast.Return))
                   for n in walk_scope(rest)):
                defined = set()
            here = reads | (after - defined) | always
            if isinstance(s, ast.If):
                out[id(s)] = here
                visit(s.body, here, always)
                visit(s.orelse, here, always)
            elif isinstance(s, _LOOPS):
                again = (_exposed(s.body)[0] | set(_uses(s.test if isinstance(s, ast.While)
                                                            else s.iter))
                         | set(_uses_all(s.orelse)))
                visit(s.body, here | again, always)
                visit(s.orelse, here, always)
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                visit(s.body, here, always)
            elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
                caught = always | set(_uses_all(s.orelse + s.finalbody)) | set(
                    _uses_all([x for h in s.handlers for x in h.body]))
                for block in [s.body, s.orelse, s.finalbody] + [h.body for h in s.handlers]:
                    visit(block, here, caught)
            elif isinstance(s, ast.Match):
                for case in s.cases:
                    visit(case.body, here, always)

    visit(fn.body, set(), always)
    return out


def _exposed(stmts, defined=frozenset()):
    """(names ``stmts`` may read before assigning them, names they surely assign): loops may
    run zero times (assign nothing), ``if`` assigns what both branches do, statements other
    than assignments, ``if``, loops and ``with`` count every name they read or delete."""
    reads, defined = set(), set(defined)
    for s in stmts:
        if isinstance(s, ast.If):
            reads |= set(_loads(s.test)) - defined
            r1, d1 = _exposed(s.body, defined)
            r2, d2 = _exposed(s.orelse, defined)
            reads |= r1 | r2
            defined = d1 & d2
        elif isinstance(s, ast.While):
            reads |= set(_loads(s.test)) - defined
            reads |= _exposed(s.body, defined)[0] | _exposed(s.orelse, defined)[0]
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            reads |= set(_uses(s.iter)) - defined
            reads |= (_exposed(s.body, defined | set(_stores(s.target)))[0]
                      | _exposed(s.orelse, defined)[0])
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            reads |= set(_uses_all([ast.Expr(value=i.context_expr) for i in s.items])) - defined
            r, defined = _exposed(s.body, defined | {n for i in s.items if i.optional_vars
                                                     for n in _stores(i.optional_vars)})
            reads |= r
        elif isinstance(s, (ast.Assign, ast.AnnAssign)) and not _has_walrus(s):
            reads |= set(_uses(s)) - defined
            for t in (s.targets if isinstance(s, ast.Assign) else [s.target] if s.value else []):
                defined |= set(_stores(t))
        else:
            reads |= set(_uses(s)) - defined
    return reads, defined


def _stores(target):
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


def _has_walrus(node):
    return any(isinstance(n, ast.NamedExpr) for n in ast.walk(node))


def _uses_all(stmts):
    return sum((_uses(s) for s in stmts), Counter())


def _uses(node):
    """Counter of the names read or deleted anywhere under ``node``."""
    return _loads(node) + Counter(n.id for n in ast.walk(node)
                                  if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Del))


class IfRewriter(Rewriter):
    """Rewrites every ``while`` (Rewriter) and every convertible ``if`` of a function."""

    def __init__(self, prefix, super_ok):
        super().__init__(prefix, super_ok)
        self.ifs = self.ifs_converted = 0      # `if` statements seen / converted
        self.live = []                         # live_after of each function around the node

    def visit_FunctionDef(self, node):
        self.live.append(live_after(node))     # before its statements are rewritten
        try:
            return super().visit_FunctionDef(node)
        finally:
            self.live.pop()

    def visit_If(self, node):
        scope = self.scopes[-1] if self.scopes else None
        if scope is None:
            return self.generic_visit(node)
        self.ifs += 1
        if _why_not(node, scope.declared, self.prefix) is not None:
            return self.generic_visit(node)
        k = self.ifs_converted
        self.ifs_converted += 1
        names = _bound(node.body + node.orelse)
        test_names = _bound([node.test])
        live = self.live[-1].get(id(node))
        if live is None:    # an `if` the rewrite made, or liveness unknown: the whole function
            live = set(_uses(scope.node) - _uses(node))
        reads = _read_first(node.body)[0] | _read_first(node.orelse)[0] | set(_loads(node.test))
        # a loop's break/continue flag is read by the loop's test, which the function as
        # written does not have: never a temporary
        flags = (self.prefix + "break_", self.prefix + "continue_")
        temps = [n for n in names if n not in reads and n not in live and not n.startswith(flags)]
        inner = scope.converting[-1] if scope.converting else set()
        declare = [n for n in dict.fromkeys(test_names + names) if n not in inner]
        node.body = [_PlainAssign().visit(s) for s in node.body]
        node.orelse = [_PlainAssign().visit(s) for s in node.orelse]
        if scope.super_ok:
            _explicit_super([node.test] + node.body + node.orelse, scope.first_arg)
        scope.converting.append(set(names) | set(test_names))
        self.generic_visit(node)
        scope.converting.pop()
        return self._converted_if(node, k, names, temps, test_names, declare)

    def _converted_if(self, node, k, names, temps, test_names, declare):
        test, then, else_, cells = (f"{self.prefix}{what}_{k}"
                                    for what in ("iftest", "then", "else", "ifvars"))
        nonlocal_ = [ast.Nonlocal(names=names)] if names else []
        declarations = [ast.AnnAssign(target=ast.Name(id=n, ctx=ast.Store()),
                                      annotation=ast.Name(id="object", ctx=ast.Load()),
                                      value=None, simple=1) for n in declare]
        statements = declarations + [
            make_def(test, self._thunk_body(node.test, test_names, f"{test}_")),
            make_def(then, nonlocal_ + (node.body or [ast.Pass()])),
            make_def(else_, nonlocal_ + (node.orelse or [ast.Pass()])),
            make_def(cells, nonlocal_ + [ast.Pass()]),
            ast.Expr(value=self._rt("if_stmt", *[ast.Name(id=n, ctx=ast.Load())
                                                 for n in (test, then, else_, cells)],
                                    ast.Constant(tuple(names)), ast.Constant(tuple(temps)),
                                    ast.Constant(node.lineno))),
        ]
        return [locate(s, node) for s in statements]


__all__ = ["IfRewriter"]
