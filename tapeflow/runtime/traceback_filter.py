"""TensorFlow's traceback filtering: an error escaping a public entry point (op dispatch, a
function call or trace, ``GradientTape.gradient``/``jacobian``/``batch_jacobian``, a Keras layer
call) carries a traceback without tapeflow's own frames, so what the user reads is their code.

``tf.debugging.disable_traceback_filtering()`` restores the full traceback (to debug tapeflow
itself). The switch is per thread and on by default, as TensorFlow's
(``tensorflow/python/util/traceback_utils.py``). An entry point costs nothing until an error
passes: its body sits in ``try: ... except Exception as e: drop_internal_frames(e); raise``.
The frames filtered are the entry point's and those below it; the public functions between the
user's code and the entry point stay (``tf.add`` over ``apply``): the error passes them after
it is filtered, as it passes TensorFlow's wrappers above its ``error_handler``.
"""
import os
import threading
import types

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_SWITCH = threading.local()


def is_traceback_filtering_enabled() -> bool:
    """Whether errors raised through tapeflow's entry points drop tapeflow's frames (the
    default; per thread).

    ``tf.debugging.is_traceback_filtering_enabled``.

    >>> tf.debugging.is_traceback_filtering_enabled()
    True
    """
    return getattr(_SWITCH, "value", True)


def enable_traceback_filtering() -> None:
    """Filter tapeflow's own frames out of the tracebacks of its errors (the default), in
    this thread.

    ``tf.debugging.enable_traceback_filtering``.

    >>> tf.debugging.enable_traceback_filtering()
    >>> tf.debugging.is_traceback_filtering_enabled()
    True
    """
    _SWITCH.value = True


def disable_traceback_filtering() -> None:
    """Keep every frame, tapeflow's too, in the tracebacks of its errors, in this thread: what
    to call when debugging tapeflow itself.

    ``tf.debugging.disable_traceback_filtering``.

    >>> tf.debugging.disable_traceback_filtering()
    >>> tf.debugging.is_traceback_filtering_enabled()
    False
    >>> tf.debugging.enable_traceback_filtering()
    """
    _SWITCH.value = False


def is_internal(frame):
    """Whether ``frame`` is tapeflow's: a module of the package, or code tapeflow generated
    elsewhere (compiled programs' callers say so with ``__tapeflow_generated__``)."""
    return (os.path.abspath(frame.f_code.co_filename).startswith(_PKG_DIR)
            or "__tapeflow_generated__" in frame.f_globals)


def filter_traceback(tb):
    """``tb`` without tapeflow's frames, rebuilt as TensorFlow's ``_process_traceback_frames``:
    new traceback objects, innermost first; when every frame is tapeflow's, the innermost one
    stays (where the error was raised)."""
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    new = None
    for entry in reversed(frames):
        if not is_internal(entry.tb_frame):
            new = types.TracebackType(new, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    if new is None and frames:
        last = frames[-1]
        new = types.TracebackType(None, last.tb_frame, last.tb_lasti, last.tb_lineno)
    return new


def drop_internal_frames(error):
    """Filter ``error``'s traceback in place when filtering is on (this thread), for an entry
    point's ``except Exception as e: drop_internal_frames(e); raise``: the bare ``raise`` adds
    no frame, so the entry point's own frame goes too. The error itself, its message, cause and
    context, is unchanged."""
    if getattr(_SWITCH, "value", True):
        error.__traceback__ = filter_traceback(error.__traceback__)


__all__ = ["is_traceback_filtering_enabled", "enable_traceback_filtering",
           "disable_traceback_filtering"]
