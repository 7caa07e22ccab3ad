"""``tf.autograph``: the converted source of a function (``to_code``), and ``do_not_convert``."""
from __future__ import annotations

from collections.abc import Callable
import types as _types

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


__all__ = ["to_code", "do_not_convert", "experimental"]
