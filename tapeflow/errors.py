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


# -- the rest of tf.errors: every class and code (issue 29) ---------------------------------
# TensorFlow's codes (tf.errors.OK ... DATA_LOSS), the values of its ``error_codes.proto``.
OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND = 0, 1, 2, 3, 4, 5
ALREADY_EXISTS, PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION = 6, 7, 8, 9
ABORTED, OUT_OF_RANGE, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS = 10, 11, 12, 13, 14, 15
UNAUTHENTICATED = 16


def _op_error_init(self, *args, **kwargs):
    """Both constructions work: tapeflow's ``Error(message)`` and TensorFlow's
    ``Error(node_def, op, message[, error_code])``; ``message``, ``op``, ``node_def`` and
    ``error_code`` are read as in TF."""
    if len(args) >= 3 or kwargs:
        names = ("node_def", "op", "message", "error_code")
        given = dict(zip(names, args), **kwargs)
        self._node_def, self._op = given.get("node_def"), given.get("op")
        self._message = given.get("message", "")
        if given.get("error_code") is not None:
            self._code = given["error_code"]
        Exception.__init__(self, self._message)
    else:
        self._node_def = self._op = None
        self._message = str(args[0]) if args else ""
        Exception.__init__(self, *args)


OpError.__init__ = _op_error_init
OpError.message = property(lambda self: self._message)
OpError.op = property(lambda self: self._op)
OpError.node_def = property(lambda self: self._node_def)
OpError.error_code = property(lambda self: getattr(self, "_code", type(self)._CODE))
OpError.experimental_payloads = property(lambda self: {})
OpError._CODE = UNKNOWN
InvalidArgumentError._CODE = INVALID_ARGUMENT
OutOfRangeError._CODE = OUT_OF_RANGE
InternalError._CODE = INTERNAL
NotFoundError._CODE = NOT_FOUND


def _error_class(name, code, doc):
    cls = type(name, (OpError,), {"__doc__": doc, "_CODE": code, "__module__": __name__})
    globals()[name] = cls
    return cls


for _name, _code, _doc in (
        ("CancelledError", CANCELLED, "An operation or step was cancelled."),
        ("UnknownError", UNKNOWN, "An error of no other kind (TF's catch-all)."),
        ("DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired before the operation ended."),
        ("AlreadyExistsError", ALREADY_EXISTS, "An entity the operation would create exists already."),
        ("PermissionDeniedError", PERMISSION_DENIED, "The caller may not run the operation."),
        ("UnauthenticatedError", UNAUTHENTICATED, "The request has no valid credentials."),
        ("ResourceExhaustedError", RESOURCE_EXHAUSTED, "A resource (memory, a quota) ran out."),
        ("FailedPreconditionError", FAILED_PRECONDITION,
         "The system is not in a state the operation needs (an uninitialized variable)."),
        ("AbortedError", ABORTED, "The operation was aborted (a concurrent conflict)."),
        ("UnimplementedError", UNIMPLEMENTED, "The operation is not implemented or supported."),
        ("UnavailableError", UNAVAILABLE, "The runtime is not available right now."),
        ("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption (a truncated file).")):
    _error_class(_name, _code, _doc)


class OperatorNotAllowedInGraphError(TypeError):
    """TensorFlow's error for a Python operator a traced tensor cannot support (``bool(t)``,
    iterating a tensor of unknown length) inside a function; a ``TypeError``."""
