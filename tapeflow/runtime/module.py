"""``Module``: TensorFlow's ``tf.Module``, a named container that finds its variables itself.

Variables and submodules are discovered by walking the instance's attributes
(and lists, tuples and dicts inside them) the way ``tf.Module._flatten`` does:
attributes in sorted-name order, each module's own values before its
submodules', every object reported once. So ``trainable_variables`` comes out
in the same order as in TensorFlow, which is the order optimizers and
``tape.gradient`` results line up with.
"""
from __future__ import annotations

import re

from .. import _nest
from . import stack
from .tensor import Variable

_CAMEL_TO_SNAKE = re.compile(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))")
_IDENTIFIER = re.compile(r"^[a-zA-Z_]([a-zA-Z0-9_])*$")


def camel_to_snake(value):
    """TensorFlow's default module name: 'MyModule' -> 'my_module'."""
    return _CAMEL_TO_SNAKE.sub(r"_\1", value).lower()


def module_name(module):
    """``module.name``, or for a subclass whose ``__init__`` skipped ``Module.__init__`` (which
    TensorFlow saves all the same, though its ``name`` raises) the default name it would have."""
    name = getattr(module, "_name", None)
    return name if isinstance(name, str) else camel_to_snake(type(module).__name__)


def _is_variable(obj):
    return isinstance(obj, Variable)


def _is_trainable_variable(obj):
    return isinstance(obj, Variable) and obj.trainable


def _is_non_trainable_variable(obj):
    return isinstance(obj, Variable) and not obj.trainable


def _is_module(obj):
    return isinstance(obj, Module)


class ModuleNameScope:
    """A re-enterable name scope fixed when the module was made (``tf.Module.name_scope``).

    TensorFlow captures the full scope at construction ('outer/mlp/') and
    re-enters it absolutely, so variables made under it get the same names
    wherever the module is later used.
    """

    def __init__(self, name):
        self.name = name
        self._saved = []

    def __enter__(self):
        local = stack._local  # the absolute form stack.name_scope lacks
        self._saved.append(getattr(local, "scopes", None))
        local.scopes = [self.name]
        return self.name

    def __exit__(self, *exc):
        stack._local.scopes = self._saved.pop()


class Module:
    """Base class for a named container of variables and other modules (``tf.Module``).

    Subclass it and assign variables, modules and lists of them as attributes; ``variables``,
    ``trainable_variables`` and ``submodules`` find them (in attribute name order).

    Args:
      name: the module's name (by default its class name in snake case).

    >>> class Scale(tf.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = tf.Variable(2.0, name="w")
    ...         self.b = tf.Variable(0.0, trainable=False, name="b")
    ...     def __call__(self, x):
    ...         return self.w * x + self.b
    >>> m = Scale()
    >>> m.name, float(m(tf.constant(3.0)))
    ('scale', 6.0)
    >>> [v.name for v in m.trainable_variables]
    ['w:0']
    """

    _TF_MODULE_IGNORED_PROPERTIES = frozenset()

    def __init__(self, name: str | None = None) -> None:
        if name is None:
            name = camel_to_snake(type(self).__name__)
        elif not _IDENTIFIER.match(name):
            raise ValueError(f"'{name}' is not a valid module name. Module names must be valid "
                             f"Python 3 identifiers.")
        self._name = name
        self._scope_name = stack.current_name_scope() + name + "/"

    @property
    def name(self) -> str:
        return self._name

    @property
    def name_scope(self):
        """Scope for ops and variables made by this module: ``with self.name_scope: ...``."""
        return ModuleNameScope(self._scope_name)

    @property
    def variables(self) -> tuple[Variable, ...]:
        """All variables of this module and its submodules, each once (a tuple).

        >>> m = tf.Module()
        >>> m.a, m.b = tf.Variable(1.0, name="a"), tf.Variable(2.0, trainable=False, name="b")
        >>> [v.name for v in m.variables]
        ['a:0', 'b:0']
        """
        return tuple(self._flatten(predicate=_is_variable))

    @property
    def trainable_variables(self) -> tuple[Variable, ...]:
        """The trainable variables of this module and its submodules, each once (a tuple).

        >>> m = tf.Module()
        >>> m.a, m.b = tf.Variable(1.0, name="a"), tf.Variable(2.0, trainable=False, name="b")
        >>> [v.name for v in m.trainable_variables]
        ['a:0']
        """
        return tuple(self._flatten(predicate=_is_trainable_variable))

    @property
    def non_trainable_variables(self) -> tuple[Variable, ...]:
        return tuple(self._flatten(predicate=_is_non_trainable_variable))

    @property
    def submodules(self) -> tuple[Module, ...]:
        """Every module reachable from this one's attributes, nearest first (a tuple).

        >>> outer = tf.Module(name="outer")
        >>> outer.inner = tf.Module(name="inner")
        >>> [m.name for m in outer.submodules]
        ['inner']
        """
        return tuple(self._flatten(predicate=_is_module))

    def _flatten(self, recursive=True, predicate=None, with_path=False):
        """Values in this module's attributes (and, if recursive, its submodules') that pass ``predicate``."""
        predicate = predicate or (lambda _: True)
        return _walk(self, recursive, predicate, with_path, (), {id(self)}, [])

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: run ``method`` inside its module's name scope."""
        def wrapped(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        wrapped.__name__, wrapped.__doc__ = method.__name__, method.__doc__
        return wrapped


def _leaves_with_paths(value):
    """(path, leaf) pairs of a nested structure, in TensorFlow's nest order."""
    if isinstance(value, dict):
        for k in sorted(value, key=_nest._sort_key):
            for p, leaf in _leaves_with_paths(value[k]):
                yield (k,) + p, leaf
    elif isinstance(value, (list, tuple)):
        for i, x in enumerate(value):
            for p, leaf in _leaves_with_paths(x):
                yield (i,) + p, leaf
    else:
        yield (), value


def _walk(module, recursive, predicate, with_path, path, seen, recursion_stack):
    """``tf.Module._flatten_module``: own attributes first, then each submodule in found order."""
    ignored = getattr(module, "_TF_MODULE_IGNORED_PROPERTIES", frozenset())
    if id(module) in recursion_stack:
        recursive = False
    submodules = []
    for key in sorted(vars(module)):
        if key in ignored:
            continue
        for leaf_path, leaf in _leaves_with_paths(vars(module)[key]):
            leaf_path = path + (key,) + leaf_path
            if not with_path:
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
            if predicate(leaf):
                yield (leaf_path, leaf) if with_path else leaf
            if recursive and isinstance(leaf, Module):
                submodules.append((leaf_path, leaf))
    recursion_stack.append(id(module))
    for sub_path, sub in submodules:
        yield from _walk(sub, recursive, predicate, with_path, sub_path, seen, recursion_stack)
    recursion_stack.pop()


__all__ = ["Module"]
