"""Rewrite a Python function's ``while`` statements so that a tensor test becomes a While node.

AutoGraph's idea, for ``while`` only. ``converted(fn)`` parses the function's source and turns
each convertible ``while`` into three nested functions and one call of ``pywhile.while_stmt``::

    def _tfw_test_0(): return <test>           # `and`/`or`/`not` lazily, tensors or not
    def _tfw_body_0():
        nonlocal a, b, t                        # every name the loop assigns
        <body>
    def _tfw_vars_0():
        nonlocal a, b, t                        # owns the cells: while_stmt reads, sets, deletes
    _tfw_rt.while_stmt(_tfw_test_0, _tfw_body_0, _tfw_vars_0, ("a", "b", "t"), ("t",), <line>, ())

``while_stmt`` decides at the loop's first test whether it is a Python loop or a While node.
The rewritten code is compiled with the original file name and line numbers (tracebacks and
``user_line()`` name the user's lines) and rebuilt with the original globals, closure cells
(live), defaults and attributes. A function whose source is unavailable (lambdas, builtins,
``exec``'d code), that has no ``while``, or whose source does not compile back to its own
bytecode, is returned unchanged: nothing that does not need the conversion goes through it.

Loops that are not converted (``break``, ``continue``, ``return``/``yield``/``await`` in the
body, an ``else:`` clause, assigning a name declared ``global``/``nonlocal``) stay Python
loops inside ``with _tfw_rt.unconverted(reason, line):``, which names the reason if the loop
turns out to run on a tensor.
"""
import __future__
import ast
import inspect
import linecache
import re
import types
import weakref
from collections import Counter

from . import pywhile

_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag
_CO_NESTED = inspect.CO_NESTED
_NOT_CONVERTED_FLAGS = (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
                        | inspect.CO_ITERABLE_COROUTINE)

_TYPE_PARAMS = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}

_codes = weakref.WeakKeyDictionary()      # original code -> (rewritten code or None, reason)
_functions = weakref.WeakKeyDictionary()  # original function -> converted function


def converted(fn):
    """``fn`` with its ``while`` statements converted; ``fn`` itself when nothing is to convert."""
    if isinstance(fn, types.MethodType):
        func = converted(fn.__func__)
        return fn if func is fn.__func__ else types.MethodType(func, fn.__self__)
    if not isinstance(fn, types.FunctionType):
        return fn
    new = _functions.get(fn)
    if new is None:
        code, _ = _converted_code(fn.__code__)
        try:
            new = fn if code is None else _rebuild(fn, code)
        except (AssertionError, TypeError, ValueError):   # closure not as expected: keep fn
            new = fn
        _functions[fn] = new
    return new


def status(fn):
    """Why ``fn`` is or is not converted (for debugging and tests)."""
    fn = getattr(fn, "__func__", fn)
    if not isinstance(fn, types.FunctionType):
        return "not a Python function"
    return _converted_code(fn.__code__)[1]


def _converted_code(code):
    hit = _codes.get(code)
    if hit is None:
        try:
            hit = _convert_code(code)
        except Exception as e:   # whatever went wrong, the function keeps its own code
            hit = (None, f"not converted: {type(e).__name__}: {e}")
        _codes[code] = hit
    return hit


# -- source -> rewritten code ----------------------------------------------------------------

def _convert_code(code):
    if code.co_name == "<lambda>":
        return None, "not converted: a lambda"
    if code.co_flags & _NOT_CONVERTED_FLAGS:
        return None, "not converted: a generator or coroutine"
    try:
        lines, first = inspect.getsourcelines(code)
    except (OSError, TypeError):
        return None, "not converted: no source"
    source = "".join(lines)
    if "while" not in source:
        return None, "not converted: no `while`"
    indented = lines[0][:1] in (" ", "\t")
    # an indented def parses as the body of `if 1:`, so columns and string literals stay exact
    tree = ast.parse("if 1:\n" + source if indented else source)
    node = tree.body[0].body[0] if indented else tree.body[0]
    ast.increment_lineno(node, first - 1 - indented)
    if not isinstance(node, ast.FunctionDef) or node.name != code.co_name:
        return None, "not converted: the source found is not this function's"
    if not any(isinstance(n, ast.While) for n in ast.walk(node)):
        return None, "not converted: no `while`"
    node.decorator_list = []
    prefix = _hygienic_prefix(source)
    imports = _module_imports(code.co_filename)
    original = _compile(imports, node, code, prefix)
    if original is None or not _same_code(original, code):
        return None, "not converted: the source does not compile to this function's code"
    rewriter = _Rewriter(prefix, super_ok="__class__" in code.co_freevars)
    node = rewriter.visit(node)
    new = _compile(imports, node, code, prefix)
    return new, f"converted: {rewriter.converted} of {rewriter.loops} `while` statements"


def _hygienic_prefix(source):
    """A prefix no identifier of the function starts with."""
    names = set(re.findall(r"[A-Za-z_]\w*", source))
    prefix = "_tfw_"
    while any(n.startswith(prefix) for n in names):
        prefix = "_" + prefix
    return prefix


def _module_imports(filename):
    """Statements binding by ``import`` the names the function's module does: the compiler reads
    ``obj.attr(...)`` on an imported name as an attribute load, not a method call, and the
    code must compile as the original did (never run: only the function's code is kept)."""
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return []
    names = {a.asname or a.name.split(".")[0] for n in _walk(tree.body)
             if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    return [ast.Import(names=[ast.alias(name="_", asname=n)]) for n in sorted(names) if n != "*"]


def _enclosing_class(qualname):
    """The innermost class lexically around a function (private names are mangled with it)."""
    parts = qualname.split(".")
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] != "<locals>" and parts[i + 1] != "<locals>":
            return parts[i]
    return None


def _compile(imports, funcdef, code, prefix):
    """The code object of ``funcdef`` compiled as ``code`` was: inside a factory taking the
    original free variables (so they stay free), inside a class of the original class's name
    when there is one (name mangling, ``super()``'s ``__class__`` cell)."""
    params = [n for n in code.co_freevars if n != "__class__"] + [prefix + "rt"]
    # the def statement must not make the function's own name a local of the factory: a
    # recursive call of a module-level function reads a global
    own = [] if funcdef.name in code.co_freevars else [ast.Global(names=[funcdef.name])]
    factory = _def(prefix + "factory", own + [funcdef], [ast.arg(arg=p) for p in params])
    top = factory
    cls = _enclosing_class(code.co_qualname)
    if cls is not None:
        top = ast.ClassDef(name=cls, bases=[], keywords=[], body=[factory], decorator_list=[],
                           **_TYPE_PARAMS)
    module = _locate(ast.Module(body=imports + [top], type_ignores=[]), funcdef)
    compiled = compile(module, code.co_filename, "exec", flags=code.co_flags & _FUTURE_FLAGS,
                       dont_inherit=True)
    made = _find_code(compiled, factory.name)
    made = [c for c in made.co_consts if isinstance(c, types.CodeType) and c.co_name == funcdef.name]
    return made[0].replace(co_qualname=code.co_qualname) if len(made) == 1 else None


def _find_code(code, name):
    """The code object called ``name`` compiled somewhere inside ``code``."""
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            found = c if c.co_name == name else _find_code(c, name)
            if found is not None:
                return found
    return None


def _same_code(a, b):
    """Same bytecode, names and constants (nested code compared the same way)."""
    fields = ("co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_argcount",
              "co_kwonlyargcount", "co_posonlyargcount")
    if any(getattr(a, f) != getattr(b, f) for f in fields):
        return False
    if (a.co_flags | _CO_NESTED) != (b.co_flags | _CO_NESTED) or len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, types.CodeType) or isinstance(y, types.CodeType):
            if not (isinstance(x, types.CodeType) and isinstance(y, types.CodeType) and _same_code(x, y)):
                return False
        elif type(x) is not type(y) or (x != y and x == x):
            return False
    return True


def _rebuild(fn, code):
    """A function of ``code`` with ``fn``'s globals, closure cells, defaults and attributes."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    extra = [n for n in code.co_freevars if n not in cells]
    if any(not n.endswith("_tfw_rt") for n in extra):   # only the runtime's name is new
        raise AssertionError(f"unexpected free variables {extra}")
    closure = tuple(cells[n] if n in cells else types.CellType(pywhile) for n in code.co_freevars)
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure or None)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__annotations__ = fn.__annotations__
    new.__qualname__, new.__doc__, new.__module__ = fn.__qualname__, fn.__doc__, fn.__module__
    new.__dict__.update(fn.__dict__)   # __wrapped__ included, when fn has one
    return new


def _args(args):
    return ast.arguments(posonlyargs=[], args=args, vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])


def _locate(tree, at):
    """Give every node without a location ``at``'s (new statements point at the user's line)."""
    for n in ast.walk(tree):
        if "lineno" in n._attributes and not hasattr(n, "lineno"):
            ast.copy_location(n, at)
            n.end_lineno, n.end_col_offset = at.lineno, at.col_offset
    return tree


# -- analysis of one loop ---------------------------------------------------------------------

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _walk(nodes, skip_loops=False):
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
    local = {id(t) for c in _walk(nodes) if isinstance(c, ast.comprehension)   # the
             for t in ast.walk(c.target)}                                        # comprehension's
    for n in _walk(nodes):
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


def _why_not(loop, declared):
    """Why ``loop`` stays a Python loop, or None when it converts."""
    for n in _walk(loop.body):
        if isinstance(n, ast.Return):
            return "its body has a `return`"
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return "its body has a `yield`"
        if isinstance(n, ast.Await):
            return "its body has an `await`"
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            return "its body has a `global` or `nonlocal` statement"
    for name in _bound([loop.test] + loop.body):
        if name in declared:
            return f"it assigns {name!r}, declared {declared[name]} in the function"
    return None


class _Scope:
    """A function being rewritten: its global/nonlocal names and every name it reads."""

    def __init__(self, fn, super_ok):
        self.super_ok = super_ok  # `super()` can name `__class__`: a method (or the top
        self.declared = {}        # function, when it has the `__class__` cell)
        for n in _walk(fn.body):
            if isinstance(n, (ast.Global, ast.Nonlocal)):
                for name in n.names:
                    self.declared[name] = "global" if isinstance(n, ast.Global) else "nonlocal"
        self.loads = _loads(fn)
        params = fn.args.posonlyargs + fn.args.args
        self.first_arg = params[0].arg if params else None
        self.converting = []  # names of the converted loops around the node (helpers hold it)


class _Rewriter(ast.NodeTransformer):
    def __init__(self, prefix, super_ok):
        self.prefix = prefix
        self.super_ok = super_ok   # the function has the `__class__` cell of `super()`
        self.scopes = []           # _Scope per function around the node; None for a class
        self.loops = self.converted = 0   # statements seen / converted

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
        scope.converting.append(set(names))
        self.generic_visit(node)
        scope.converting.pop()
        after = node.orelse
        if brk is not None and after:
            after = [ast.copy_location(ast.If(test=_not(brk), body=after, orelse=[]), after[0])]
        node.orelse = []
        return self._converted(node, k, names, temps, declare, before, after)

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
        node.test = _locate(ast.BoolOp(op=ast.And(), values=[_not(brk), node.test]), node.test)
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
            _def(test, self._thunk_body(node.test, test_names, f"{test}_")),
            _def(body, nonlocal_ + node.body),
            _def(cells, nonlocal_ + [ast.Pass()]),
            ast.Expr(value=self._rt("while_stmt", *[ast.Name(id=n, ctx=ast.Load())
                                                    for n in (test, body, cells)],
                                    ast.Constant(tuple(names)), ast.Constant(tuple(temps)),
                                    ast.Constant(node.lineno), ast.Constant(tuple(test_names)))),
        ]
        return [_locate(s, node) for s in declarations + before + helpers] + after

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
                    thunks.append(_locate(_def(f"{name}{len(defs)}", self._thunk_body(
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
    return {type(n) for n in _walk(stmts, skip_loops=True)} & {ast.Break, ast.Continue}


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
    return _locate(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                              value=ast.Constant(value), type_comment=None), at)


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
    for n in _walk(nodes):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "super"
                and not n.args and not n.keywords):
            n.args = [ast.copy_location(ast.Name(id=name, ctx=ast.Load()), n)
                      for name in ("__class__", first_arg)]


def _def(name, body, params=()):
    return ast.FunctionDef(name=name, args=_args(list(params)), body=body, decorator_list=[],
                           returns=None, type_comment=None, **_TYPE_PARAMS)


__all__ = ["converted", "status"]
