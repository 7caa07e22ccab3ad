"""The on-disk home of generated programs, so a second process compiles nothing, and trusts nothing.

Each program's source is written once to the cache directory (``$TAPEFLOW_CACHE_DIR``, else
``platformdirs.user_cache_dir()/tapeflow``, which respects ``XDG_CACHE_HOME``) as
``<name>_<hash>.py``; its functions are ``@njit(cache=True)``, so Numba keeps the machine code
in ``__pycache__`` beside it, or under ``$NUMBA_CACHE_DIR`` when that is set
(``<name>_<hash>.<function>-<line>.pyXY.nbi`` index, ``.N.nbc`` data, both pickles) and a
later process that generates the same source loads it instead of compiling.

The hash covers the full source (the graph's structure, shapes, dtypes and inlined scalar
constants all show in it; array constants are arguments, so graphs that differ only in
weights share one compiled program), tapeflow's and numba's versions, Numba's LLVM
optimization level (``NUMBA_OPT``: the test suite compiles at 1, and such code must never
serve a user) and the source of the helper modules the program calls (Numba's cache only
checks the program file's own stamp).

**Nothing on disk is trusted.** The source on disk must equal, byte for byte, the source
this process generated, and the module is executed from the generated text, not from the
file (no ``.pyc`` is written or read). Numba's files are hashed when they are written
(``<name>_<hash>.sha256``, JSON: file name -> SHA-256) and checked before Numba unpickles
them: a file whose hash differs, that is not listed, or an unreadable list means the entry
is deleted and compiled again, with one ``CacheWarning``; never a crash, never a wrong result.

**The directory is private.** It is created 0700; one not owned by the user, writable by
group or others, not a directory, or not writable is refused with one warning and this
process uses a fresh private temporary directory instead. Files are written atomically
(a temporary name, then ``os.replace``) and the source never rewritten unless it was
corrupt (rewriting would change the stamp Numba's index checks). Processes compiling the
same program at once take turns (``entry_lock``): the second loads what the first wrote.
The hash list's modification time is the entry's last use: past ``TAPEFLOW_CACHE_MAX_MB``
the least recently used entries are evicted. ``tapeflow cache info`` / ``tapeflow cache clear``
show and empty it.
"""
import contextlib
import fcntl
import hashlib
import json
import os
import re
import stat
import sys
import tempfile
import time
import warnings

from .. import env
from .._version import __version__ as TAPEFLOW_VERSION

_helper_digest = None
_resolved = {}          # requested directory -> the directory used (itself, or a fallback)
_warned = set()
HASHES = ".sha256"
# an entry's files: <stem>.py, <stem>.sha256, __pycache__/<stem>.<function>-<line>.pyXY.{nbi,N.nbc}
_STEM = re.compile(r"([A-Za-z0-9_]+_[0-9a-f]{24})(\.py|\.sha256|\..+\.nb[ic])")


class CacheWarning(UserWarning):
    """The compile cache refused a directory or found a corrupt entry (and recovered)."""


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, CacheWarning, stacklevel=3)


# -- the directory -----------------------------------------------------------------------

def configured_dir():
    """The directory the environment asks for (not yet checked)."""
    return env.get("TAPEFLOW_CACHE_DIR")


def _problem(path):
    """Why ``path`` cannot be this user's private cache directory, or None (creating it 0700)."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.stat(path)
    except OSError as e:
        return f"cannot be created ({e.strerror or e})"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"is owned by another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"is writable by others (mode {stat.S_IMODE(st.st_mode):o})"
    if not os.access(path, os.W_OK | os.X_OK):
        return "is not writable"
    return None


def cache_dir(override=None):
    """The checked cache directory (``override``, else the configured one), or a private fallback."""
    want = os.path.abspath(os.path.expanduser(override or configured_dir()))
    got = _resolved.get(want)
    if got is None or not os.path.isdir(got):
        problem = _problem(want)
        if problem is None:
            got = want
        else:
            got = tempfile.mkdtemp(prefix="tapeflow-cache-")   # 0700, ours
            _warn_once(("dir", want), f"tapeflow compile cache {want} {problem}; this process "
                                      f"caches compiled programs in {got} instead")
        _resolved[want] = got
    return got


# -- keys ----------------------------------------------------------------------------------

def _helper_files():
    """The source files of the compiled helpers generated code reaches (``rt.*`` and ``fm.*``):
    found from the modules themselves, so a new helper module is covered without a list."""
    from . import fastmath, jit_helpers   # noqa: PLC0415 - Numba's import cost: not for the directory's users
    names = {jit_helpers.__name__, fastmath.__name__}
    for mod in (jit_helpers, fastmath):
        for v in vars(mod).values():
            name = getattr(getattr(v, "py_func", v), "__module__", None) or ""
            if name.startswith("tapeflow."):
                names.add(name)
    return sorted(sys.modules[n].__file__ for n in names)


def helpers_digest():
    """Hash of the helper modules generated code calls (their changes must invalidate)."""
    global _helper_digest
    if _helper_digest is None:
        from .blas import NUMPY_GEMM   # noqa: PLC0415 - Numba's import cost: not for the directory's users
        h = hashlib.sha256()
        for path in _helper_files():
            with open(path, "rb") as f:
                h.update(f.read())
        # which GEMM the code links to is part of it
        h.update(repr(sorted(t.__name__ for t in NUMPY_GEMM)).encode())
        _helper_digest = h.hexdigest()
    return _helper_digest


def program_key(source):
    import numba   # noqa: PLC0415 - Numba's import cost: only where a key is made
    h = hashlib.sha256()
    for part in (source, TAPEFLOW_VERSION, numba.__version__, f"O{numba.config.OPT}", helpers_digest()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


# -- writing and checking an entry ---------------------------------------------------------

def _atomic_write(path, data):
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _read(path, limit=1 << 30):
    """The bytes of the regular file ``path`` (no symbolic link followed), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        return f.read(limit)


def write_source(source, stem, key, directory=None):
    """Path of the module file for ``source``: written now unless an identical file exists.

    A file there with other bytes (corrupt, truncated, edited) is replaced, and the entry's
    compiled files with it, with one warning.
    """
    folder = cache_dir(directory)
    path = os.path.join(folder, f"{stem}_{key}.py")
    data = source.encode("utf-8")
    existing = _read(path)
    if existing == data:
        return path
    if existing is not None or os.path.lexists(path):
        _warn_once(("src", path), f"tapeflow compile cache: {path} does not hold the program it is "
                                  f"named for (corrupt or edited); it is deleted and compiled again")
        purge_compiled(path)
        _unlink(path)
    _atomic_write(path, data)
    return path


def import_module(path, key, source):
    """The generated module of ``source`` (already checked to be ``path``'s content), once per process.

    Executed from ``source`` itself with ``path`` as its file name (so Numba's cache and
    tracebacks find the file), never from the bytes on disk or a ``.pyc``.
    """
    modname = f"_tapeflow_program_{key}"
    mod = sys.modules.get(modname)
    if mod is not None and getattr(mod, "__file__", None) == path:
        return mod
    code = compile(source, path, "exec", dont_inherit=True)
    mod = type(sys)(modname)
    mod.__file__ = path
    sys.modules[modname] = mod
    try:
        exec(code, mod.__dict__)
    except BaseException:
        sys.modules.pop(modname, None)
        raise
    return mod


def forget_module(key):
    """Drop the process's module of ``key`` (after a failure, so a retry executes it afresh)."""
    sys.modules.pop(f"_tapeflow_program_{key}", None)


def numba_folder(folder):
    """Where Numba keeps the machine code of the modules in ``folder``: its ``__pycache__``, or
    with ``$NUMBA_CACHE_DIR`` set the subdirectory Numba's ``UserProvidedCacheLocator`` names
    (the folder's name and the SHA-1 of its absolute path; the cache must find the files
    Numba will load, to check them first)."""
    root = os.environ.get("NUMBA_CACHE_DIR")
    if not root:
        return os.path.join(folder, "__pycache__")
    folder = os.path.abspath(folder)
    return os.path.join(root, f"{os.path.basename(folder)}_{hashlib.sha1(folder.encode()).hexdigest()}")


def _compiled_files(path):
    """Numba's files for the module at ``path``: {file name: full path}."""
    stem = os.path.basename(path)[:-3]
    folder = numba_folder(os.path.dirname(path))
    try:
        names = os.listdir(folder)
    except OSError:
        return {}
    return {n: os.path.join(folder, n) for n in names
            if n.startswith(stem + ".") and (n.endswith(".nbi") or n.endswith(".nbc"))}


def _hash_list(path):
    return path[:-3] + HASHES


def purge_compiled(path):
    """Delete Numba's files of the module at ``path`` and their hash list."""
    for p in _compiled_files(path).values():
        _unlink(p)
    _unlink(_hash_list(path))


@contextlib.contextmanager
def entry_lock(path):
    """Hold the entry of ``path`` (an exclusive ``flock`` on its source) while checking, compiling
    and recording it: a process that generates a program another is compiling waits, then loads
    what the other wrote, instead of compiling it too or taking its half-recorded files for
    corrupt. The kernel drops the lock of a process that dies."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:     # no source to hold (it was just removed): compile unlocked
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def verify_compiled(path):
    """Before Numba reads them: every compiled file of ``path`` must have its recorded hash.

    Any mismatch, unlisted file or unreadable list deletes them all (one warning); Numba
    then compiles again. Returns whether compiled files were there and verified.
    """
    files = _compiled_files(path)
    if not files:
        return False
    raw = _read(_hash_list(path), 1 << 20)
    try:
        recorded = json.loads(raw) if raw is not None else None
    except ValueError:
        recorded = None
    bad = None
    if raw is None:
        bad = "no hash list was recorded for it: an older tapeflow wrote it, or a writer was interrupted"
    elif not isinstance(recorded, dict):
        bad = "its hash list is unreadable"
    else:
        for name, full in sorted(files.items()):
            data = _read(full)
            if data is None or recorded.get(name) != hashlib.sha256(data).hexdigest():
                bad = f"{name} does not have the hash recorded when it was written"
                break
    if bad is not None:
        _warn_once(("nb", path, bad), f"tapeflow compile cache: the compiled code of {path} is "
                                      f"corrupt ({bad}); it is deleted and compiled again")
        purge_compiled(path)
        return False
    touch(path)
    return True


def record_compiled(path):
    """After Numba wrote its files: record their hashes (atomically), then keep the cache under its cap."""
    files = _compiled_files(path)
    hashes = {}
    for name, full in sorted(files.items()):
        data = _read(full)
        if data is not None:
            hashes[name] = hashlib.sha256(data).hexdigest()
    try:
        _atomic_write(_hash_list(path), json.dumps(hashes, sort_keys=True).encode())
    except OSError:
        return
    evict(os.path.dirname(path))


def touch(path):
    """Mark the entry of ``path`` used now (its hash list's mtime orders eviction)."""
    try:
        os.utime(_hash_list(path))
    except OSError:
        pass


# -- the cache as a whole: info, clear, eviction ----------------------------------------------

def entries(folder):
    """{stem: {"files": [paths], "bytes": n, "used": mtime}} of the entries in ``folder``."""
    out = {}
    for sub in (folder, numba_folder(folder)):
        try:
            names = os.listdir(sub)
        except OSError:
            continue
        for n in names:
            m = _STEM.fullmatch(n)
            if not m:
                continue
            full = os.path.join(sub, n)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            e = out.setdefault(m.group(1), {"files": [], "bytes": 0, "used": 0.0})
            e["files"].append(full)
            e["bytes"] += st.st_size
            if n.endswith(HASHES) or n.endswith(".py"):
                e["used"] = max(e["used"], st.st_mtime)
    return out


def evict(folder, max_bytes=None):
    """Delete least recently used entries until ``folder`` holds at most ``max_bytes``; the number deleted."""
    if max_bytes is None:
        max_bytes = int(env.get("TAPEFLOW_CACHE_MAX_MB") * (1 << 20))
    found = entries(folder)
    total = sum(e["bytes"] for e in found.values())
    deleted = 0
    for stem, e in sorted(found.items(), key=lambda kv: kv[1]["used"]):
        if total <= max_bytes:
            break
        for f in sorted(e["files"], key=lambda f: f.endswith(".py")):   # the source last
            _unlink(f)
        total -= e["bytes"]
        deleted += 1
    return deleted


def info(folder=None):
    """What ``tapeflow cache info`` prints: the directory, its entries and bytes, the cap."""
    folder = os.path.abspath(os.path.expanduser(folder or configured_dir()))
    found = entries(folder) if os.path.isdir(folder) else {}
    return {"directory": folder, "entries": len(found), "bytes": sum(e["bytes"] for e in found.values()),
            "max_bytes": int(env.get("TAPEFLOW_CACHE_MAX_MB") * (1 << 20)),
            "problem": _problem(folder) if os.path.isdir(folder) else None}


def clear(folder=None):
    """Delete every entry (tapeflow's files only) of the cache directory; the number deleted."""
    folder = os.path.abspath(os.path.expanduser(folder or configured_dir()))
    found = entries(folder) if os.path.isdir(folder) else {}
    for e in found.values():
        for f in e["files"]:
            _unlink(f)
    for name in (os.listdir(folder) if os.path.isdir(folder) else ()):
        if name.startswith(".tmp-") and time.time() - _mtime(os.path.join(folder, name)) > 3600:
            _unlink(os.path.join(folder, name))    # left by a killed writer
    return len(found)


def _mtime(path):
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return time.time()
