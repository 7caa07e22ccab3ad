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


# TensorFlow's error codes (``tf.errors.OK`` ...), its ``error_codes.proto`` numbering.
OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND = 0, 1, 2, 3, 4, 5
ALREADY_EXISTS, PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION = 6, 7, 8, 9
ABORTED, OUT_OF_RANGE, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS = 10, 11, 12, 13, 14, 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """Base of errors raised while running an op (TensorFlow's ``tf.errors.OpError``).

    TensorFlow's constructor, ``OpError(node_def, op, message, error_code)``; tapeflow's own
    code raises with the message alone (``InvalidArgumentError("...")``), which is the same
    error with no node and no op. ``str(e)`` is the message, as in TensorFlow."""

    def __init__(self, node_def, op=None, message=None, error_code=None, *args):
        if message is None and op is None and isinstance(node_def, str) and not args:
            node_def, message = None, node_def       # tapeflow's one-argument form
        super().__init__(message)
        self._node_def, self._op, self._message = node_def, op, message
        self._error_code = error_code
        self._args_rest = args

    @property
    def message(self):
        """The error message (TensorFlow's ``OpError.message``)."""
        return self._message

    @property
    def node_def(self):
        """The node that failed: None (tapeflow has no NodeDef protos)."""
        return self._node_def

    @property
    def op(self):
        """The op that failed, or None."""
        return self._op

    @property
    def error_code(self):
        """The integer code of this error (``tf.errors.INVALID_ARGUMENT`` ...)."""
        return self._error_code

    @property
    def experimental_payloads(self):
        """TensorFlow's status payloads: always empty here."""
        return {}

    def __str__(self):
        return "" if self._message is None else str(self._message)

    def __reduce__(self):
        if type(self) is OpError:
            return OpError, (self._node_def, self._op, self._message, self._error_code)
        return type(self), (self._node_def, self._op, self._message) + self._args_rest


def _coded(name, code, doc, bases=()):
    """A subclass of OpError with TensorFlow's name, constructor and fixed error code."""

    def __init__(self, node_def, op=None, message=None, *args):
        OpError.__init__(self, node_def, op, message, code, *args)

    return type(name, (OpError, *bases), {"__init__": __init__, "__doc__": doc,
                                          "__module__": __name__})


CancelledError = _coded("CancelledError", CANCELLED, "An operation or step was cancelled.")
UnknownError = _coded("UnknownError", UNKNOWN, "An error of no other kind.")
InvalidArgumentError = _coded(
    "InvalidArgumentError", INVALID_ARGUMENT,
    """An op got inputs it cannot accept: incompatible shapes, wrong dtypes, bad attributes.

    Also a ``ValueError``, which is what TensorFlow raises for the same mistake at trace time.
    """, (ValueError,))
DeadlineExceededError = _coded("DeadlineExceededError", DEADLINE_EXCEEDED,
                               "A deadline expired before the operation could complete.")
NotFoundError = _coded("NotFoundError", NOT_FOUND,
                       "A file (a checkpoint) or other entity that does not exist.")
AlreadyExistsError = _coded("AlreadyExistsError", ALREADY_EXISTS,
                            "An entity the operation would create already exists.")
PermissionDeniedError = _coded("PermissionDeniedError", PERMISSION_DENIED,
                               "The caller may not run the operation.")
ResourceExhaustedError = _coded("ResourceExhaustedError", RESOURCE_EXHAUSTED,
                                "A resource (memory, a quota) ran out.")
FailedPreconditionError = _coded("FailedPreconditionError", FAILED_PRECONDITION,
                                 "The system is not in the state the operation needs "
                                 "(an uninitialized variable).")
AbortedError = _coded("AbortedError", ABORTED, "The operation was aborted (a concurrency conflict).")
OutOfRangeError = _coded(
    "OutOfRangeError", OUT_OF_RANGE,
    """TensorFlow's ``tf.errors.OutOfRangeError``: an index past the end (a TensorArray's), or
    an iterator's end. Also an ``IndexError``, Python's error for the same mistake.""",
    (IndexError,))
UnimplementedError = _coded("UnimplementedError", UNIMPLEMENTED,
                            "The operation is not implemented or not supported.")
InternalError = _coded("InternalError", INTERNAL,
                       """TensorFlow's ``tf.errors.InternalError``: what its tape raises inside a
    function when a recorded op's gradient function returns the wrong number of gradients.""")
UnavailableError = _coded("UnavailableError", UNAVAILABLE, "The runtime is not available now.")
DataLossError = _coded("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")
UnauthenticatedError = _coded("UnauthenticatedError", UNAUTHENTICATED,
                              "The request lacks valid credentials.")


class OperatorNotAllowedInGraphError(TypeError):
    """Using a symbolic tensor as a Python ``bool`` (or iterating it) where the trace cannot
    convert the statement: TensorFlow's error, a ``TypeError``."""


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
