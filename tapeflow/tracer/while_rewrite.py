"""The AST rewrite of a function's ``while`` statements (convert.py compiles the result).

Per loop: whether it converts (``_why_not``: not with ``return``/``yield``/``await``, a
``global``/``nonlocal`` statement in its body, or assigning a name declared so; those stay
Python loops inside ``with pywhile.unconverted(reason, line):``), its variables (the names it
assigns) and temporaries, ``break``/``continue``/``else:`` as flags, and the statements
replacing it: test, body and cells-owning nested functions and one ``pywhile.while_stmt`` call.
"""
import ast
from collections import Counter

TYPE_PARAMS = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}


def _args(args):
    return ast.arguments(posonlyargs=[], args=args, vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])


def locate(tree, at):
    """Give every node without a location ``at``'s (new statements point at the user's line)."""
    for n in ast.walk(tree):
        if "lineno" in n._attributes and not hasattr(n, "lineno"):
            ast.copy_location(n, at)
            n.end_lineno, n.end_col_offset = at.lineno, at.col_offset
    return tree


# -- analysis of one loop ---------------------------------------------------------------------

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def walk_scope(nodes, skip_loops=False):
    """Nodes under ``nodes`` in this scope: nested defs/classes/lambdas are not entered (their
    names are yielded), nor, with ``skip_loops``, the bodies of nested loops (their ``else:``
    clauses are: a ``break`` there leaves the outer loop)."""
    stack = list(reversed(nodes))
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, _SCOPES):
            continue
        if skip_loops and isinstance(n, _LOOPS):
            children = n.orelse
        else:
            children = list(ast.iter_child_nodes(n))
        stack.extend(reversed(children))


def _bound(nodes):
    """Names bound in this scope by ``nodes``, in order of first appearance."""
    out = {}
    local = {id(t) for c in walk_scope(nodes) if isinstance(c, ast.comprehension)   # the
             for t in ast.walk(c.target)}                                        # comprehension's
    for n in walk_scope(nodes):
        if id(n) in local:
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.setdefault(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.setdefault(n.name)
        elif isinstance(n, ast.alias):
            out.setdefault(n.asname or n.name.split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.setdefault(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            out.setdefault(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            out.setdefault(n.rest)
    return [n for n in out if n != "__class__"]


def _loads(node):
    """Counter of the names read anywhere under ``node`` (nested scopes included)."""
    return Counter(n.id for n in ast.walk(node)
                   if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))


def _read_first(stmts, defined=frozenset()):
    """(names possibly read before being assigned, names surely assigned) by ``stmts``."""
    reads, defined = set(), set(defined)
    for s in stmts:
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            reads |= set(_loads(s)) - defined
            targets = s.targets if isinstance(s, ast.Assign) else ([s.target] if s.value else [])
            for t in targets:
                defined |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)
                            and isinstance(n.ctx, ast.Store)}
        elif isinstance(s, ast.AugAssign):
            reads |= set(_loads(s)) - defined
            if isinstance(s.target, ast.Name):
                reads |= {s.target.id} - defined
        elif isinstance(s, ast.If):
            reads |= set(_loads(s.test)) - defined
            r1, d1 = _read_first(s.body, defined)
            r2, d2 = _read_first(s.orelse, defined)
            reads |= r1 | r2
            defined = d1 & d2
        else:
            reads |= set(_loads(s)) - defined
    return reads, defined


def leaves_scope(nodes):
    """The first statement among ``nodes`` (nested scopes excluded) that a helper function
    cannot hold: "a `return`", "a `yield`", "an `await`", a `global`/`nonlocal`; or None."""
    for n in walk_scope(nodes):
        if isinstance(n, ast.Return):
            return "a `return`"
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return "a `yield`"
        if isinstance(n, ast.Await):
            return "an `await`"
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            return "a `global` or `nonlocal` statement"
    return None


def _why_not(loop, declared):
    """Why ``loop`` stays a Python loop, or None when it converts."""
    why = leaves_scope(loop.body)
    if why:
        return f"its body has {why}"
    for name in _bound([loop.test] + loop.body):
        if name in declared:
            return f"it assigns {name!r}, declared {declared[name]} in the function"
    return None


class _Scope:
    """A function being rewritten: its global/nonlocal names and every name it reads."""

    def __init__(self, fn, super_ok):
        self.node = fn
        self.super_ok = super_ok  # `super()` can name `__class__`: a method (or the top
        self.declared = {}        # function, when it has the `__class__` cell)
        for n in walk_scope(fn.body):
            if isinstance(n, (ast.Global, ast.Nonlocal)):
                for name in n.names:
                    self.declared[name] = "global" if isinstance(n, ast.Global) else "nonlocal"
        self.loads = _loads(fn)
        params = fn.args.posonlyargs + fn.args.args
        self.first_arg = params[0].arg if params else None
        self.converting = []  # names of the converted loops around the node (helpers hold it)


class Rewriter(ast.NodeTransformer):
    """Rewrites every ``while`` of a function (nested functions' too) in place."""

    def __init__(self, prefix, super_ok):
        self.prefix = prefix
        self.super_ok = super_ok   # the function has the `__class__` cell of `super()`
        self.scopes = []           # _Scope per function around the node; None for a class
        self.loops = self.converted = 0   # statements seen / converted
        self.fors = 0                     # `for` statements rewritten into `while`

    def visit_FunctionDef(self, node):
        in_class = bool(self.scopes) and self.scopes[-1] is None
        self.scopes.append(_Scope(node, self.super_ok if not self.scopes else in_class))
        self.generic_visit(node)
        self.scopes.pop()
        return node

    def visit_AsyncFunctionDef(self, node):
        return node

    def visit_ClassDef(self, node):
        self.scopes.append(None)       # `nonlocal` cannot reach a class body's names
        self.generic_visit(node)
        self.scopes.pop()
        return node

    def visit_While(self, node):
        scope = self.scopes[-1] if self.scopes else None
        if scope is None:
            return self.generic_visit(node)
        self.loops += 1
        reason = _why_not(node, scope.declared)
        if reason is not None:
            self.generic_visit(node)
            return ast.With(items=[ast.withitem(context_expr=self._rt(
                "unconverted", ast.Constant(reason), ast.Constant(node.lineno)), optional_vars=None)],
                body=[node], type_comment=None)
        k = self.converted
        self.converted += 1
        before, brk = self._flags(node, k)
        if brk is not None and node.orelse:     # visited with the body: a converted `if` too
            node.orelse = [ast.copy_location(ast.If(test=_not(brk), body=node.orelse, orelse=[]),
                                             node.orelse[0])]
        names = _bound([node.test] + node.body)
        elsewhere = scope.loads - _loads(node)
        test_reads = _loads(node.test)
        read_first, _ = _read_first(node.body)
        temps = [n for n in names if n not in read_first and n not in test_reads
                 and not elsewhere[n]]
        # names to make locals of the function holding the helpers, so `nonlocal` finds them:
        # all, or those an enclosing converted loop's body does not have (this loop's flags)
        declare = [n for n in names if not scope.converting or n not in scope.converting[-1]]
        node.body = [_PlainAssign().visit(s) for s in node.body]
        if scope.super_ok:
            _explicit_super([node.test] + node.body, scope.first_arg)
        # the `else:` runs after the loop, in the enclosing scope: visited outside this loop's
        # names (else a converted `if` there would declare, as new locals, names the enclosing
        # converted loop has made nonlocal)
        after, node.orelse = node.orelse, []
        scope.converting.append(set(names))
        self.generic_visit(node)
        scope.converting.pop()
        after = [out for stmt in after for out in _as_list(self.visit(stmt))]
        return self._converted(node, k, names, temps, declare, before, after)

    def visit_For(self, node):
        """``for`` -> the ``while`` over a ``pyfor`` iterator (see pyfor.py), then converted as
        any ``while``: a Python iterable stays a Python loop, a tensor iteration a While."""
        if not self.scopes or self.scopes[-1] is None:
            return self.generic_visit(node)
        k = self.fors
        self.fors += 1
        it, index = f"{self.prefix}iter_{k}", f"{self.prefix}index_{k}"

        def name(n, store=False):
            return ast.Name(id=n, ctx=ast.Store() if store else ast.Load())

        def call(obj, method, *args):
            return ast.Call(func=ast.Attribute(value=name(obj), attr=method, ctx=ast.Load()),
                            args=list(args), keywords=[])
        before = [ast.Assign(targets=[name(it, True)], value=self._rt("for_iter", self._iterable(node.iter)),
                             type_comment=None),
                  ast.Assign(targets=[name(index, True)], value=call(it, "start"), type_comment=None)]
        body = [ast.Assign(targets=[node.target], value=call(it, "at", name(index)), type_comment=None),
                ast.Assign(targets=[name(index, True)], type_comment=None,
                           value=ast.BinOp(left=name(index), op=ast.Add(), right=ast.Constant(1)))]
        loop = locate(ast.While(test=call(it, "more", name(index)), body=body + node.body,
                                orelse=node.orelse), node)
        out = self.visit_While(loop)
        return [locate(s, node) for s in before] + (out if isinstance(out, list) else [out])

    def _iterable(self, e):
        """``range``/``enumerate``/``zip`` calls of a ``for``'s iterable (any module's
        ``range``: ``tf.range`` too) through ``pyfor.iterable``, which decides at run time."""
        f = e.func if isinstance(e, ast.Call) else None
        fname = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if fname not in ("range", "enumerate", "zip") or any(
                isinstance(a, ast.Starred) for a in e.args) or any(w.arg is None for w in e.keywords):
            return e
        args = [self._iterable(a) for a in e.args] if fname != "range" else e.args
        return ast.copy_location(ast.Call(func=self._rt("iterable", f, *args).func,
                                          args=[f, *args], keywords=e.keywords), e)

    def _flags(self, node, k):
        """``break``/``continue`` of this loop -> flags (AutoGraph's way): the rest of a block
        after a statement that may jump runs under ``if not flag``, and the loop's test becomes
        ``not break_flag and test``. Returns (statements before the loop, the break flag)."""
        kinds = _jump_kinds(node.body)
        brk = f"{self.prefix}break_{k}" if ast.Break in kinds else None
        cont = f"{self.prefix}continue_{k}" if ast.Continue in kinds else None
        if not kinds:
            return [], None
        node.body = _jumps(node.body, {ast.Break: brk, ast.Continue: cont})
        if cont is not None:
            node.body.insert(0, _set_flag(cont, False, node))
        if brk is None:
            return [], None
        node.test = locate(ast.BoolOp(op=ast.And(), values=[_not(brk), node.test]), node.test)
        return [_set_flag(brk, False, node)], brk

    def _rt(self, fn, *args):
        return ast.Call(func=ast.Attribute(value=ast.Name(id=self.prefix + "rt", ctx=ast.Load()),
                                           attr=fn, ctx=ast.Load()), args=list(args), keywords=[])

    def _converted(self, node, k, names, temps, declare, before, after):
        """The statements replacing ``node``: (declarations,) ``before``, the helpers and the
        call of while_stmt, then ``after`` (the loop's ``else:``)."""
        test, body, cells = (f"{self.prefix}{what}_{k}" for what in ("test", "body", "vars"))
        nonlocal_ = [ast.Nonlocal(names=names)] if names else []
        test_names = _bound([node.test])
        declarations = [ast.AnnAssign(target=ast.Name(id=n, ctx=ast.Store()),
                                      annotation=ast.Name(id="object", ctx=ast.Load()),
                                      value=None, simple=1) for n in declare]
        helpers = [
            make_def(test, self._thunk_body(node.test, test_names, f"{test}_")),
            make_def(body, nonlocal_ + node.body),
            make_def(cells, nonlocal_ + [ast.Pass()]),
            ast.Expr(value=self._rt("while_stmt", *[ast.Name(id=n, ctx=ast.Load())
                                                    for n in (test, body, cells)],
                                    ast.Constant(tuple(names)), ast.Constant(tuple(temps)),
                                    ast.Constant(node.lineno), ast.Constant(tuple(test_names)))),
        ]
        if self.prefix + "do_return" in names:     # a `return` inside (return_rewrite.py)
            helpers[-1].value.keywords = [ast.keyword(arg="returns", value=ast.Constant(True))]
        return [locate(s, node) for s in declarations + before + helpers] + after

    def _thunk_body(self, e, assigned, name):
        """Statements returning ``e`` with ``and``/``or``/``not`` at its top as runtime calls
        that combine tensors with logical ops and keep Python's short-circuit for Python
        values. Operands are nested defs (not lambdas) declaring ``nonlocal`` the names the
        test assigns, so ``:=`` binds where it did."""
        defs = []

        def convert(e):
            if isinstance(e, ast.BoolOp):
                thunks = []
                for v in e.values:
                    thunks.append(locate(make_def(f"{name}{len(defs)}", self._thunk_body(
                        v, assigned, f"{name}{len(defs)}_")), v))
                    defs.append(thunks[-1])
                return ast.copy_location(self._rt("and_" if isinstance(e.op, ast.And) else "or_",
                                                  *[ast.Name(id=t.name, ctx=ast.Load())
                                                    for t in thunks]), e)
            if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
                return ast.copy_location(self._rt("not_", convert(e.operand)), e)
            return e

        value = convert(e)
        return ([ast.Nonlocal(names=assigned)] if assigned else []) + defs + [ast.Return(value=value)]


def _jump_kinds(stmts):
    """Which of ``break``/``continue`` leave the loop these statements are the body of."""
    return {type(n) for n in walk_scope(stmts, skip_loops=True)} & {ast.Break, ast.Continue}


def _jumps(stmts, flags):
    """``stmts`` with their ``break``/``continue`` setting ``flags[kind]`` instead."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, (ast.Break, ast.Continue)):
            out.append(_set_flag(flags[type(s)], True, s))
            return out                      # the rest of the block never runs
        kinds = _jump_kinds([s])
        if not kinds:
            out.append(s)
            continue
        for block in (["orelse"] if isinstance(s, _LOOPS) else ["body", "orelse", "finalbody"]):
            if isinstance(getattr(s, block, None), list):
                setattr(s, block, _jumps(getattr(s, block), flags))
        for part in getattr(s, "handlers", []) + getattr(s, "cases", []):
            part.body = _jumps(part.body, flags)
        out.append(s)
        rest = stmts[i + 1:]
        if rest:
            names = [flags[kind] for kind in (ast.Break, ast.Continue) if kind in kinds]
            test = (_not(names[0]) if len(names) == 1 else ast.UnaryOp(op=ast.Not(), operand=ast.BoolOp(
                op=ast.Or(), values=[ast.Name(id=n, ctx=ast.Load()) for n in names])))
            out.append(ast.copy_location(ast.If(test=test, body=_jumps(rest, flags), orelse=[]),
                                         rest[0]))
        return out
    return out


def _not(name):
    return ast.UnaryOp(op=ast.Not(), operand=ast.Name(id=name, ctx=ast.Load()))


def _set_flag(name, value, at):
    return locate(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                              value=ast.Constant(value), type_comment=None), at)


def _as_list(visited):
    """A NodeTransformer's result for one statement, as a list of statements."""
    if visited is None:
        return []
    return visited if isinstance(visited, list) else [visited]


class _PlainAssign(ast.NodeTransformer):
    """``x: T = v`` -> ``x = v`` in a loop's body, where ``x`` becomes ``nonlocal`` (which
    cannot be annotated); annotations of local names are never evaluated anyway."""

    def visit_AnnAssign(self, node):
        if not isinstance(node.target, ast.Name):
            return node
        if node.value is None:
            return ast.copy_location(ast.Pass(), node)
        return ast.copy_location(ast.Assign(targets=[node.target], value=node.value,
                                            type_comment=None), node)

    def _scope(self, node):
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = _scope


def _explicit_super(nodes, first_arg):
    """``super()`` -> ``super(__class__, self)``: a loop's body runs in a nested function, whose
    frame has neither the method's first argument nor (unless named) the ``__class__`` cell."""
    if first_arg is None:
        return
    for n in walk_scope(nodes):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "super"
                and not n.args and not n.keywords):
            n.args = [ast.copy_location(ast.Name(id=name, ctx=ast.Load()), n)
                      for name in ("__class__", first_arg)]


def make_def(name, body, params=()):
    return ast.FunctionDef(name=name, args=_args(list(params)), body=body, decorator_list=[],
                           returns=None, type_comment=None, **TYPE_PARAMS)



__all__ = ["Rewriter", "make_def", "locate", "walk_scope", "TYPE_PARAMS"]
