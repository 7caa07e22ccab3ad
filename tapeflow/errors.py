"""Exception types (TensorFlow's names) and the helper that finds the user's line.

Errors raised from deep inside tapeflow must point at the user's code, so every
message built here ends with the first stack frame outside the package.
"""
import linecache
import os
import sys

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
# Frames in these directories are never "the user's line" (NumPy calling __array__, say).
_SKIP = (_PKG_DIR, os.path.dirname(os.path.abspath(__import__("numpy").__file__)))


class OpError(Exception):
    """Base of errors raised while running an op (TensorFlow's ``tf.errors.OpError``)."""


class InvalidArgumentError(OpError, ValueError):
    """An op got inputs it cannot accept: incompatible shapes, wrong dtypes, bad attributes.

    Also a ``ValueError``, which is what TensorFlow raises for the same mistake at trace time.
    """


class OutOfRangeError(OpError, IndexError):
    """TensorFlow's ``tf.errors.OutOfRangeError``: an index past the end (a TensorArray's).
    Also an ``IndexError``, Python's error for the same mistake."""


class InternalError(OpError):
    """TensorFlow's ``tf.errors.InternalError``: what its tape raises inside a function when a
    recorded op's gradient function returns the wrong number of gradients."""


class NotFoundError(OpError):
    """TensorFlow's ``tf.errors.NotFoundError``: a file (a checkpoint) that does not exist."""


class InferError(Exception):
    """Raised by shape/dtype inference; dispatch turns it into ``InvalidArgumentError``."""


def user_frame():
    """The innermost frame outside the tapeflow package (the user's code), or None.

    Modules tapeflow generates elsewhere (compiled programs' callers, in the cache
    directory) say so with a module global ``__tapeflow_generated__`` and are skipped too."""
    f = sys._getframe(1)
    while f is not None and (os.path.abspath(f.f_code.co_filename).startswith(_SKIP)
                             or "__tapeflow_generated__" in f.f_globals):
        f = f.f_back
    return f


def user_line():
    """'file.py:12: source text' for the user's current line (empty string if unknown)."""
    return format_line(user_position())


def user_position():
    """(file name, line number) of the user's current line, or None: cheap to keep per
    traced node, formatted only when an error names it."""
    f = user_frame()
    return None if f is None else (f.f_code.co_filename, f.f_lineno)


def format_line(position):
    """'file.py:12: source text' for a ``user_position()`` (empty string for None)."""
    if position is None:
        return ""
    filename, lineno = position
    text = linecache.getline(filename, lineno).strip()
    return f"{filename}:{lineno}" + (f": {text}" if text else "")
