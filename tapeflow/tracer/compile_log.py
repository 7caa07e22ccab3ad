"""Visible compiles: one log record per trace, per compile and per tier switch.

Every record goes to the ``tapeflow`` logger at INFO, so an application sees them with its
own logging setup (``logging.getLogger("tapeflow").setLevel(logging.INFO)`` plus a
handler). ``tapeflow.config.set_log_compiles(True)`` or ``TAPEFLOW_LOG_COMPILES=1`` adds a
handler printing them to stderr, one line each::

    tapeflow: compile step(f32[128,784], i64[128]) 4.21 s, cache miss, tier numba (background process)

Records carry their fields as attributes (``record.tapeflow``: a dict with ``event``,
``function``, ``signature``, ``seconds``, ``cache``, ``tier``) so a handler can filter or
aggregate without parsing the text. Records are emitted only per trace and per compile,
never per call: a logger nobody listens to costs nothing on the call path.
"""
from __future__ import annotations

import logging
import sys

from .. import env
from ..ir.graph import aval_str

LOGGER = logging.getLogger("tapeflow")
_handler = None


def set_log_compiles(enabled: bool) -> None:
    """Print each trace, compile and tier switch to stderr (``tapeflow.config.set_log_compiles``).

    Args:
      enabled: True to print the records, False to stop.

    >>> tf.config.set_log_compiles(True)
    >>> tf.config.log_compiles()
    True
    >>> tf.config.set_log_compiles(False)
    """
    global _handler
    if enabled and _handler is None:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(logging.Formatter("tapeflow: %(message)s"))
        LOGGER.addHandler(_handler)
        if LOGGER.level == logging.NOTSET or LOGGER.level > logging.INFO:
            LOGGER.setLevel(logging.INFO)
    elif not enabled and _handler is not None:
        LOGGER.removeHandler(_handler)
        _handler = None
        LOGGER.setLevel(logging.NOTSET)


def log_compiles() -> bool:
    """Whether ``set_log_compiles`` (or ``TAPEFLOW_LOG_COMPILES``) is on.

    >>> tf.config.log_compiles()
    False
    """
    return _handler is not None


def signature(avals):
    """``f32[64,784], i64[64]``: the shapes and dtypes a program was made for (``?``: unknown)."""
    return ", ".join(aval_str(a) for a in avals)


def record(event, function, avals, seconds=None, cache=None, tier=None, note=None):
    """Log one event: ``trace``, ``compile`` (cache "hit"/"miss"), ``tier`` (a switch) or
    ``failed`` (a background compile that left the function on the interpreter)."""
    if not LOGGER.isEnabledFor(logging.INFO):
        return
    sig = signature(avals)
    parts = [f"{event} {function}({sig})"]
    if seconds is not None:
        parts.append(f"{seconds:.2f} s")
    if cache is not None:
        parts.append(f"cache {cache}")
    if tier is not None:
        parts.append(f"tier {tier}")
    text = ", ".join(parts[1:])
    line = parts[0] + (" " + text if text else "") + (f" ({note})" if note else "")
    LOGGER.info(line, extra={"tapeflow": {"event": event, "function": function, "signature": sig,
                                          "seconds": seconds, "cache": cache, "tier": tier}})


if env.get("TAPEFLOW_LOG_COMPILES"):
    set_log_compiles(True)
