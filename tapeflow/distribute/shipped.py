"""A function's saved-program form as bytes, and the per-process cache of loaded programs.

The client saves the function once with ``tapeflow.saved_model.save`` and reads the files
back as ``{relative path: bytes}``; workers write them to a private directory and load them
with the same validated ``tapeflow.saved_model.load`` (no pickled code travels). Programs are
named by the SHA-256 of their files, so a worker loads (and compiles) each program once and
keeps it warm for every later chunk and step; a worker restarted by its nanny loads it again
from the bytes the scheduler still holds.
"""
import hashlib
import os
import shutil
import tempfile
import threading

import tapeflow as tf

MAX_PROGRAM_FILES = 4096


def program_bytes(fn):
    """``fn`` (a ``tapeflow.function`` with its traces) -> ``(sha256 hex, {path: bytes})``."""
    root = tempfile.mkdtemp(prefix="tapeflow-program-")
    try:
        path = os.path.join(root, "program")
        tf.saved_model.save(fn, path)
        files = {}
        for dirpath, _, names in os.walk(path):
            for name in sorted(names):
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, path).replace(os.sep, "/")
                with open(full, "rb") as f:
                    files[rel] = f.read()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return content_hash(files), files


def content_hash(files):
    h = hashlib.sha256()
    for rel in sorted(files):
        data = files[rel]
        h.update(rel.encode() + b"\0" + len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


_cache = {}
_lock = threading.Lock()
loads = {"count": 0}     # how many programs this process loaded (tests read it on workers)


def load_program(key, files):
    """The loaded function for ``key``, loading ``files`` on the first call in this process.

    The bytes are checked against their name first: a program is never cached under a key
    its content does not have. Paths are written only below a fresh private directory; the
    loader then applies its own checks (names, sizes, JSON, graphs, arrays)."""
    with _lock:
        fn = _cache.get(key)
        if fn is not None:
            return fn
        if len(files) > MAX_PROGRAM_FILES or content_hash(files) != key:
            raise ValueError("tapeflow.distribute: the program's files do not match their "
                             f"content hash {key[:12]}")
        root = tempfile.mkdtemp(prefix="tapeflow-program-")
        try:
            for rel, data in files.items():
                parts = rel.split("/")
                if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
                    raise ValueError(f"tapeflow.distribute: bad path {rel!r} in a program")
                full = os.path.join(root, *parts)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "xb") as f:
                    f.write(data)
            fn = tf.saved_model.load(root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        _cache[key] = fn
        loads["count"] += 1
        return fn


def cached_keys():
    with _lock:
        return sorted(_cache)
