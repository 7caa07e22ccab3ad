"""Name scopes for variable names ('dense/kernel:0'); thread-local."""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_local = threading.local()


def current_name_scope():
    """The active scope prefix, e.g. 'dense/' (empty at top level)."""
    return "".join(getattr(_local, "scopes", ()))


@contextlib.contextmanager
def name_scope(name: str | None) -> Iterator[str]:
    """A context manager prefixing the names of variables created inside (``"scope/"``).

    >>> with tf.name_scope("layer"):
    ...     v = tf.Variable(1.0, name="w")
    >>> v.name
    'layer/w:0'
    """
    scopes = getattr(_local, "scopes", None)
    if scopes is None:
        scopes = _local.scopes = []
    scopes.append(name.rstrip("/") + "/" if name else "")
    try:
        yield current_name_scope()
    finally:
        scopes.pop()


@contextlib.contextmanager
def device(device_name: str | None) -> Iterator[None]:
    """A context manager placing ops on a device: the CPU, whatever the name.

    ``tf.device``: tapeflow runs on the CPU only, so every device name places ops there, as
    TensorFlow's soft placement does for a device the machine lacks.

    >>> with tf.device("/GPU:0"):
    ...     y = tf.constant(1.0) + 1.0
    >>> y.device
    '/job:localhost/replica:0/task:0/device:CPU:0'
    """
    if device_name is not None and not isinstance(device_name, str):
        raise TypeError(f"device name must be a string or None, got {type(device_name).__name__}")
    yield
