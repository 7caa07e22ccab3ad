"""Where the program is: the current name scope (``get_current_name_scope``) and the logger
tapeflow writes to (``get_logger``)."""
from __future__ import annotations

import logging

from ..runtime.stack import current_name_scope


def get_current_name_scope() -> str:
    """The name scope ops and variables are made in now ("" at the top level), as TensorFlow
    writes it (no trailing slash).

    >>> with tf.name_scope("a"):
    ...     with tf.name_scope("b"):
    ...         tf.get_current_name_scope()
    'a/b'
    """
    return current_name_scope().rstrip("/")


def get_logger() -> logging.Logger:
    """The logger of the package (``logging.getLogger("tapeflow")``; TensorFlow's is
    "tensorflow").

    >>> tf.get_logger().name
    'tapeflow'
    """
    return logging.getLogger("tapeflow")


__all__ = ["get_current_name_scope", "get_logger"]
