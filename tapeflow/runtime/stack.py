"""Name scopes for variable names ('dense/kernel:0'); thread-local."""
import contextlib
import threading

_local = threading.local()


def current_name_scope():
    """The active scope prefix, e.g. 'dense/' (empty at top level)."""
    return "".join(getattr(_local, "scopes", ()))


@contextlib.contextmanager
def name_scope(name):
    scopes = getattr(_local, "scopes", None)
    if scopes is None:
        scopes = _local.scopes = []
    scopes.append(name.rstrip("/") + "/" if name else "")
    try:
        yield current_name_scope()
    finally:
        scopes.pop()


@contextlib.contextmanager
def device(device_name):
    """``tf.device``: tapeflow runs on the CPU only, so every device name places ops there, as
    TensorFlow's soft placement does for a device the machine lacks."""
    if device_name is not None and not isinstance(device_name, str):
        raise TypeError(f"device name must be a string or None, got {type(device_name).__name__}")
    yield
