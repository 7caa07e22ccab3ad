"""Rewrite a Python function's ``while`` and ``if`` statements so that a tensor test becomes a
While or an If node.

AutoGraph's idea, for ``while`` and ``if`` (if_rewrite.py, pyif.py: each ``if`` -> helpers and
one ``pyif.if_stmt`` call). ``converted(fn)`` parses the function's source and
turns each convertible ``while`` (while_rewrite.py) into three nested functions and one call
of ``pywhile.while_stmt``::

    def _tfw_test_0(): return <test>           # `and`/`or`/`not` lazily, tensors or not
    def _tfw_body_0():
        nonlocal a, b, t                        # every name the loop assigns
        <body>                                  # `break`/`continue` as flags
    def _tfw_vars_0():
        nonlocal a, b, t                        # owns the cells: while_stmt reads, sets, deletes
    _tfw_rt.while_stmt(_tfw_test_0, _tfw_body_0, _tfw_vars_0, ("a", "b", "t"), ("t",), <line>, ())

``while_stmt`` decides at the loop's first test whether it is a Python loop or a While node.
This module compiles the rewritten function as the original was compiled (file name, line
numbers, ``__future__`` flags, enclosing class, free variables, the module's imports) and
rebuilds it with the original globals, closure cells (live), defaults and attributes. Before
that, the unmodified source must compile to the function's own bytecode, names and constants;
a function whose source is unavailable (lambdas, builtins, ``exec``'d code), that has no
``while`` or ``if``, or fails that check is returned unchanged (``status`` says why).
"""
from __future__ import annotations

import __future__
import ast
import inspect
import linecache
import os
import re
import sys
import sysconfig
import types
import weakref
from collections.abc import Callable

from ..errors import _SKIP
from . import converted_calls as rt
from .context import DecisionLimitError
from .call_rewrite import CallRewriter
from .context import current
from .if_rewrite import IfRewriter
from .return_rewrite import ReturnRewriter
from .while_rewrite import TYPE_PARAMS, locate, make_def, walk_scope

_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag
_CO_NESTED = inspect.CO_NESTED
_NOT_CONVERTED_FLAGS = (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
                        | inspect.CO_ITERABLE_COROUTINE)

_codes = weakref.WeakKeyDictionary()      # original code -> (rewritten code or None, reason)
_sources = weakref.WeakKeyDictionary()    # original code -> the rewritten source (to_code)
_functions = weakref.WeakKeyDictionary()  # original function -> converted function
_imported = {}                            # (file name, text) -> names its module imports


def converted(fn):
    """``fn`` with its ``while`` and ``if`` statements converted; ``fn`` itself when nothing is
    to convert."""
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


# tf.autograph.set_verbosity: (level, also to stdout); level >= 1 logs each conversion's
# outcome, >= 2 the converted source too (to stderr, as TensorFlow's absl log).
verbosity = [0, False]


def _converted_code(code):
    hit = _codes.get(code)
    if hit is None:
        try:
            hit = _convert_code(code)
        except Exception as e:   # whatever went wrong, the function keeps its own code
            hit = (None, f"not converted: {type(e).__name__}: {e}")
        _codes[code] = hit
        if verbosity[0] >= 1:
            _log_conversion(code, hit)
    return hit


def _log_conversion(code, hit):
    text = f"AutoGraph: {code.co_qualname} ({code.co_filename}:{code.co_firstlineno}): {hit[1]}"
    if verbosity[0] >= 2 and hit[0] is not None:
        text += "\n" + _sources[code]
    print(text, file=sys.stderr)
    if verbosity[1]:
        print(text)


# -- calls in converted code -------------------------------------------------------------------

# tapeflow, NumPy, the standard library, installed packages: called as they are
_LIBRARY = tuple(p + os.sep for p in _SKIP) + tuple(
    sysconfig.get_paths()[k] + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib"))


def call(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` from converted code: inside a trace, a user function (not one
    of tapeflow, NumPy, the standard library or installed packages) is converted first, so
    its ``if``/``while``/``for`` on tensors become If/While nodes, and its calls in turn."""
    if current() is not None and _user_function(fn):
        fn = converted(fn)
    return fn(*args, **kwargs)


def _user_function(fn):
    func = fn.__func__ if isinstance(fn, types.MethodType) else fn
    if not isinstance(func, types.FunctionType) or getattr(func, "_tfw_do_not_convert", False):
        return False
    path = os.path.abspath(func.__code__.co_filename)
    return not path.startswith(_LIBRARY) and not path.startswith("<")


def do_not_convert(func: Callable | None = None) -> Callable:
    """``tf.autograph.experimental.do_not_convert``: calls of ``func`` from converted code run
    it as written (its Python control flow on tensors then traces per path).

    >>> @tf.autograph.experimental.do_not_convert
    ... def plain(x):
    ...     return x * 2
    >>> tf.function(plain, jit_compile=False)(tf.constant(2.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=4.0>
    """
    if func is None:
        return do_not_convert
    func._tfw_do_not_convert = True
    return func


rt.call = call      # converted code calls rt.call (rt cannot import this module: a cycle)


def to_code(fn):
    """The source ``fn`` runs as inside a function: its converted source (``tf.autograph.
    to_code``), or its own source when it is not converted (``status`` says why)."""
    fn = getattr(fn, "python_function", fn)
    fn = getattr(fn, "__func__", fn)
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"to_code: {fn!r} is not a Python function")
    code, why = _converted_code(fn.__code__)
    if code is None:
        try:
            return inspect.getsource(fn)
        except OSError as e:
            raise OSError(f"to_code: {fn.__qualname__} is {why}") from e
    return _sources[fn.__code__] + "\n"


# -- why a loop on a tensor was not converted ----------------------------------------------

def unconverted_note(e, fn, traced):
    """For a DecisionLimitError out of tracing ``fn`` (run as ``traced``): the error with why
    the loop it comes from was not converted, when that is the function's or a callee's."""
    if getattr(e, "_noted", False):
        return None
    frame, tb = None, e.__traceback__
    while tb is not None:
        if not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_SKIP):
            frame = tb.tb_frame
        tb = tb.tb_next
    if frame is None:
        return None
    own = set(_codes_in(getattr(fn, "__code__", None))) | set(_codes_in(getattr(traced, "__code__", None)))
    callee = next((reason for code, (new, reason) in list(_codes.items())
                   if new is not None and frame.f_code in set(_codes_in(new))), None)
    if frame.f_code in own:
        if traced is not fn:
            return None
        note = f"The function's `while` statements are {status(fn)}."
    elif callee is not None:
        note = (f"The loop is in {frame.f_code.co_name!r}, a function called from converted code "
                f"and converted too: its `while` statements are {callee}.")
    else:
        name = frame.f_code.co_name
        note = (f"The loop is in {name!r}, called from code that is not converted (a lambda, "
                f"a library, or a function whose conversion failed: {status(traced)}), so "
                f"{name!r} is not converted either. Decorate {name!r} with tapeflow.function "
                f"(it is then converted, and inlined into the caller).")
    err = DecisionLimitError(f"{e}\n{note}")
    err._noted = True
    return err


def _codes_in(code):
    if code is None:
        return
    yield code
    for c in code.co_consts:
        if hasattr(c, "co_consts"):
            yield from _codes_in(c)


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
    if "while" not in source and "if" not in source and "for" not in source and "(" not in source:
        return None, "not converted: no `while`, `for`, `if` or call"
    indented = lines[0][:1] in (" ", "\t")
    # an indented def parses as the body of `if 1:`, so columns and string literals stay exact
    tree = ast.parse("if 1:\n" + source if indented else source)
    node = tree.body[0].body[0] if indented else tree.body[0]
    ast.increment_lineno(node, first - 1 - indented)
    if not isinstance(node, ast.FunctionDef) or node.name != code.co_name:
        return None, "not converted: the source found is not this function's"
    if not any(isinstance(n, (ast.While, ast.For, ast.If, ast.Call)) for n in ast.walk(node)):
        return None, "not converted: no `while`, `for`, `if` or call"
    node.decorator_list = []
    prefix = _hygienic_prefix(source)
    imports = _module_imports(code.co_filename)
    original = _compile(imports, node, code, prefix)
    if original is None or not _same_code(original, code):
        return None, "not converted: the source does not compile to this function's code"
    node = ReturnRewriter(prefix).visit(node)
    rewriter = IfRewriter(prefix, super_ok="__class__" in code.co_freevars)
    node = rewriter.visit(node)
    node = CallRewriter(prefix).visit(node)
    new = _compile(imports, node, code, prefix)
    if new is not None:
        _sources[code] = ast.unparse(node)
    return new, (f"converted: {rewriter.converted} of {rewriter.loops} `while` statements, "
                 f"{rewriter.ifs_converted} of {rewriter.ifs} `if` statements")


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
    text = "".join(linecache.getlines(filename))
    names = _imported.get((filename, text))
    if names is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return []
        names = sorted({a.asname or a.name.split(".")[0] for n in walk_scope(tree.body)
                        if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names} - {"*"})
        if len(_imported) > 64:
            _imported.clear()
        _imported[(filename, text)] = names
    return [ast.Import(names=[ast.alias(name="_", asname=n)]) for n in names]


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
    factory = make_def(prefix + "factory", own + [funcdef], [ast.arg(arg=p) for p in params])
    top = factory
    cls = _enclosing_class(code.co_qualname)
    if cls is not None:
        top = ast.ClassDef(name=cls, bases=[], keywords=[], body=[factory], decorator_list=[],
                           **TYPE_PARAMS)
    module = locate(ast.Module(body=imports + [top], type_ignores=[]), funcdef)
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
    closure = tuple(cells[n] if n in cells else types.CellType(rt) for n in code.co_freevars)
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure or None)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__annotations__ = fn.__annotations__
    new.__qualname__, new.__doc__, new.__module__ = fn.__qualname__, fn.__doc__, fn.__module__
    new.__dict__.update(fn.__dict__)   # __wrapped__ included, when fn has one
    return new


__all__ = ["converted", "status", "unconverted_note", "call", "to_code", "do_not_convert"]
