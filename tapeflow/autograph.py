"""``tf.autograph``: the converted source of a function (``to_code``), the converted function
itself (``to_graph``), ``trace``, ``set_verbosity``, and ``experimental.do_not_convert``."""
from __future__ import annotations

from collections.abc import Callable
import types as _types

from .tracer import convert as _convert
from .tracer.convert import do_not_convert, to_code as _to_code
from .tracer.pywhile import set_loop_options

experimental = _types.SimpleNamespace(do_not_convert=do_not_convert,
                                      set_loop_options=set_loop_options)


def to_code(entity: Callable, recursive: bool = True, experimental_optional_features=None) -> str:
    """The source ``entity`` (a function, method or ``tf.function``) runs as inside a function:
    ``if``/``while``/``for``/``return`` rewritten, calls through ``_tfw_rt.call`` (which
    converts the user functions called, recursively).

    >>> def absolute(x):
    ...     if x > 0:
    ...         return x
    ...     return -x
    >>> print(tf.autograph.to_code(absolute))  # doctest: +ELLIPSIS
    def absolute(x):
    ...
    """
    return _to_code(entity)


def to_graph(entity: Callable, recursive: bool = True,
             experimental_optional_features=None) -> Callable:
    """``entity`` (a function, method or ``tf.function``) with its Python control flow
    converted, as ``to_code`` shows it: called on tensors inside a trace, its ``if`` and
    ``while`` on tensors become ``tf.cond``/``tf.while_loop``; outside one it runs as Python.
    A function with nothing to convert comes back as it is.

    >>> def absolute(x):
    ...     if x > 0:
    ...         return x
    ...     return -x
    >>> g = tf.autograph.to_graph(absolute)
    >>> g(tf.constant(-2.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=2.0>
    >>> tf.function(g)(tf.constant(-3.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=3.0>
    """
    fn = getattr(entity, "python_function", entity)
    if not callable(fn):
        raise TypeError(f"to_graph: {entity!r} is not callable")
    return _convert.converted(fn)


def trace(*args) -> None:
    """Print ``args`` when the code runs in Python: eagerly each call, in a function once per
    trace (symbolic tensors print as such), as TensorFlow's ``tf.autograph.trace``.

    >>> tf.autograph.trace("x is", 3)
    x is 3
    """
    print(*args)


def set_verbosity(level: int, alsologtostdout: bool = False) -> None:
    """Log AutoGraph's conversions to stderr (and stdout with ``alsologtostdout``): from
    ``level`` 1 which functions were converted and why not, from 2 the converted source.
    0 (the default) is silent. Each function logs when it is first converted.

    >>> tf.autograph.set_verbosity(0)
    """
    _convert.verbosity[:] = [int(level), bool(alsologtostdout)]


__all__ = ["to_code", "to_graph", "trace", "set_verbosity", "do_not_convert", "experimental"]
