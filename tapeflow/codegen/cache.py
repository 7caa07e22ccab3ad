"""The on-disk home of generated programs, so a second process compiles nothing.

Each program's source is written once to ``$TAPEFLOW_CACHE_DIR`` (default
``~/.cache/tapeflow``) as ``<name>_<hash>.py`` and imported from there; its function is
``@njit(cache=True)``, so Numba keeps the machine code in ``__pycache__`` beside it and a
later process that generates the same source loads it instead of compiling.

The hash covers the full source (the graph's structure, shapes, dtypes and inlined scalar
constants all show in it; array constants are arguments, so graphs that differ only in
weights share one compiled program), tapeflow's and numba's versions, and the source of the
helper modules the program calls (Numba's cache only checks the program file's own stamp).
Files are written atomically and never rewritten: rewriting would change the stamp that
Numba's cache index checks.
"""
import hashlib
import importlib.util
import os
import sys
import tempfile

import numba

from .._version import __version__ as TAPEFLOW_VERSION
from .blas import NUMPY_GEMM

_HERE = os.path.dirname(os.path.abspath(__file__))
_helper_digest = None


def cache_dir(override=None):
    path = override or os.environ.get("TAPEFLOW_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "tapeflow")
    os.makedirs(path, exist_ok=True)
    return path


def helpers_digest():
    """Hash of the helper modules generated code calls (their changes must invalidate)."""
    global _helper_digest
    if _helper_digest is None:
        h = hashlib.sha256()
        for fname in ("rt.py", "fastmath.py", "blas.py"):
            with open(os.path.join(_HERE, fname), "rb") as f:
                h.update(f.read())
        # which GEMM the code links to is part of it
        h.update(repr(sorted(t.__name__ for t in NUMPY_GEMM)).encode())
        _helper_digest = h.hexdigest()
    return _helper_digest


def program_key(source):
    h = hashlib.sha256()
    for part in (source, TAPEFLOW_VERSION, numba.__version__, helpers_digest()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def write_source(source, stem, key, directory=None):
    """Path of the module file for ``source`` (written now unless it already exists)."""
    folder = cache_dir(directory)
    path = os.path.join(folder, f"{stem}_{key}.py")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(prefix=f".{stem}_", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "w") as f:
            f.write(source)
        if os.path.exists(path):          # another process or thread won the race
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    return path


def import_module(path, key):
    """Import the generated module at ``path`` once per process."""
    modname = f"_tapeflow_program_{key}"
    mod = sys.modules.get(modname)
    if mod is not None and getattr(mod, "__file__", None) == path:
        return mod
    spec = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[modname] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(modname, None)
        raise
    return mod
