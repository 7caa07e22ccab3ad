"""``tf.autograph``: the converted source of a function (``to_code``), and ``do_not_convert``."""
from __future__ import annotations

from collections.abc import Callable
import types as _types

from .tracer.convert import converted as _converted, do_not_convert, to_code as _to_code
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


_verbosity = [0]


def to_graph(entity: Callable, recursive: bool = True, experimental_optional_features=None) -> Callable:
    """``entity`` converted as ``tf.function`` converts it: a function whose ``if``/``while``/
    ``for`` on tensors become graph control flow when traced (TF's ``tf.autograph.to_graph``).

    >>> g = tf.autograph.to_graph(lambda x: x * 2)
    >>> g(tf.constant(3))
    <tf.Tensor: shape=(), dtype=int32, numpy=6>
    """
    return _converted(entity)


def set_verbosity(level: int, alsologtostdout: bool = False) -> None:
    """How much the converter reports (recorded; tapeflow's converter logs nothing more).

    >>> tf.autograph.set_verbosity(0)
    """
    _verbosity[0] = int(level)


def trace(*args) -> None:
    """Prints ``args`` when called, as TF's ``tf.autograph.trace`` does in Python.

    >>> tf.autograph.trace("x is", 3)
    x is 3
    """
    print(*args)


__all__ = ["to_code", "do_not_convert", "experimental", "to_graph", "set_verbosity", "trace"]
