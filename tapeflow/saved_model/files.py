"""Reading and writing the files of a saved-program directory, and nothing outside it.

Relative names come from the manifest, so they are checked before use: plain
``a/b.json`` names only (no absolute paths, no ``..``, no hidden or odd
characters), no symbolic link anywhere below the root, regular files only
(a FIFO would hang an ``open``), sizes bounded before any byte is read.
Everything read is charged to the load's one memory budget (``codec.Budget``) before it
is allocated: file bytes before reading, and before parsing a JSON file its values and
nesting depth are counted on the raw bytes (``scan_json``), so a file of N bytes costs
O(N) to reject. Duplicate keys are refused. ``.npy`` headers are checked against the shape and dtype the manifest
declares before the data is read, with ``allow_pickle=False``.
"""
import io
import json
import os
import re
import stat
import tokenize

import numpy as np

from ..ir.codec import Budget, DecodeError
from . import limits
from .errors import SavedModelError

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*")


class Directory:
    """A saved-program directory: every file access goes through ``path_of``'s checks."""

    def __init__(self, root, budget=None):
        self.budget = Budget() if budget is None else budget
        root = os.fspath(root)
        if not os.path.isdir(root):
            raise SavedModelError(root, "is not a directory (a saved program is a directory)")
        self.root = os.path.realpath(root)
        self.shown = root  # the name the user gave, for messages
        self.referrer = None  # the file whose names are being resolved (the manifest), for messages

    def charge(self, nbytes, name, what):
        """Count ``nbytes`` against the load's budget; SavedModelError naming ``name`` past it."""
        try:
            self.budget.charge(nbytes, what)
        except DecodeError as e:
            raise SavedModelError(self.where(name), str(e)) from None

    def where(self, name):
        return os.path.join(self.shown, name) if isinstance(name, str) else self.shown

    def path_of(self, name, what="file"):
        """The checked absolute path of ``name``, a relative name read from the manifest."""
        # a bad name is the fault of the file that holds it (the manifest), not a path to show first
        at = self.where(self.referrer) if self.referrer else self.shown
        if not isinstance(name, str) or not name or len(name) > limits.MAX_NAME:
            raise SavedModelError(at, f"{what} name {name!r:.80} is not a file name")
        if not _NAME.fullmatch(name):
            raise SavedModelError(at, f"{what} name {name!r:.80} is not a plain relative "
                                  f"name inside the directory (absolute, '..', hidden or odd characters)")
        path = self.root
        for part in name.split("/"):
            path = os.path.join(path, part)
            try:
                st = os.lstat(path)
            except OSError as e:
                raise SavedModelError(self.where(name), f"{what} is missing ({e.strerror})") from None
            if stat.S_ISLNK(st.st_mode):
                raise SavedModelError(self.where(name), f"{what} path goes through a symbolic link "
                                      f"({os.path.relpath(path, self.root)}); saved programs contain none")
        if not stat.S_ISREG(st.st_mode):
            raise SavedModelError(self.where(name), f"{what} is not a regular file")
        if os.path.commonpath([self.root, os.path.realpath(path)]) != self.root:
            raise SavedModelError(self.where(name), f"{what} resolves outside the directory")
        return path

    def read_bytes(self, name, max_bytes, what="file", charge=True):
        """The bytes of ``name`` (at most ``max_bytes``); ``charge``: count them against the budget
        (arrays are charged from the manifest, all at once, before any is read)."""
        path = self.path_of(name, what)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(path, flags)
        except OSError as e:
            raise SavedModelError(self.where(name), f"cannot open {what}: {e.strerror}") from None
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise SavedModelError(self.where(name), f"{what} is not a regular file")
            if st.st_size > max_bytes:
                raise SavedModelError(self.where(name), f"{what} is {st.st_size} bytes, more than "
                                      f"the {max_bytes} allowed")
            if charge:
                self.charge(st.st_size, name, f"{what} of {st.st_size} bytes")
            data = f.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise SavedModelError(self.where(name), f"{what} grew past {max_bytes} bytes while read")
        return data

    def read_json(self, name, what="JSON file"):
        data = self.read_bytes(name, limits.MAX_JSON_BYTES, what)
        values = scan_json(data, self.where(name))
        self.charge(values * limits.JSON_VALUE_BYTES, name, f"{what} of {values} JSON values")
        return parse_json(data, self.where(name), scanned=True)

    def read_npy(self, name, shape, dtype):
        """The array in ``name``, which must hold exactly ``shape`` and ``dtype`` (checked first)."""
        where = self.where(name)
        size = nbytes(shape, dtype, where)
        data = self.read_bytes(name, size + limits.MAX_NPY_HEADER + 16, "array file", charge=False)
        f = io.BytesIO(data)
        try:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                h_shape, fortran, h_dtype = np.lib.format.read_array_header_1_0(
                    f, max_header_size=limits.MAX_NPY_HEADER)
            elif version in ((2, 0), (3, 0)):
                h_shape, fortran, h_dtype = np.lib.format.read_array_header_2_0(
                    f, max_header_size=limits.MAX_NPY_HEADER)
            else:
                raise ValueError(f"unsupported .npy version {version}")
        except (ValueError, SyntaxError, TypeError, EOFError, OverflowError, KeyError, MemoryError,
                RecursionError, tokenize.TokenError) as e:  # what numpy's header parser raises
            raise SavedModelError(where, f"not a valid .npy file ({str(e)[:200]})") from None
        if h_dtype.hasobject or h_dtype.kind not in "biuf" or h_dtype.fields is not None:
            raise SavedModelError(where, f".npy holds dtype {h_dtype!s:.60}; only plain numeric arrays "
                                  f"are allowed (no objects, no pickles)")
        if h_dtype != np.dtype(dtype.np).newbyteorder("<") and h_dtype != np.dtype(dtype.np):
            raise SavedModelError(where, f".npy holds dtype {h_dtype}, the manifest says {dtype.name}")
        if tuple(h_shape) != tuple(shape):
            raise SavedModelError(where, f".npy holds shape {list(h_shape)}, the manifest says {list(shape)}")
        if len(data) - f.tell() != size:
            raise SavedModelError(where, f".npy data is {len(data) - f.tell()} bytes, expected {size} "
                                  f"for {dtype.name}{list(shape)} (truncated or padded)")
        f.seek(0)
        try:
            array = np.lib.format.read_array(f, allow_pickle=False)
        except (ValueError, OSError) as e:
            raise SavedModelError(where, f"cannot read .npy data ({e})") from None
        return np.array(array, dtype=dtype.np, order="C")

    # -- writing (the saver's own names only) ------------------------------------------------
    def write_json(self, name, obj, compact=False):
        path = os.path.join(self.root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            if compact:
                json.dump(obj, f, separators=(",", ":"))
            else:
                json.dump(obj, f, indent=1)

    def write_npy(self, name, array):
        path = os.path.join(self.root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        np.save(path, np.array(array, order="C"), allow_pickle=False)


def nbytes(shape, dtype, where):
    n = np.dtype(dtype.np).itemsize
    for d in shape:
        n *= d
    if n > limits.MAX_TENSOR_BYTES:
        raise SavedModelError(where, f"array of {dtype.name}{list(shape)} would be {n} bytes, more than "
                              f"the {limits.MAX_TENSOR_BYTES} allowed")
    return n


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
# byte -> 1: a quote, 2: opens a value ('[' '{'), 3: closes one, 4: separates values (',' ':')
_CLASSES = bytes(1 if c == 34 else 2 if c in b"[{" else 3 if c in b"]}" else 4 if c in b",:" else 0
                 for c in range(256))
_CHUNK = 1 << 20


def scan_json(data, where):
    """An upper bound on the number of values in JSON ``data``, with its nesting depth checked,
    both measured on the bytes before parsing (a parse costs ~64 bytes per value and recurses
    per level): SavedModelError if either is over the limits.

    Quick path: the raw counts of ``,:[{`` bound the values and of ``[{`` the depth. Else the
    exact count outside strings, in 1 MiB chunks (strings first replaced by ``""`` if any
    backslash could escape a quote), carrying the string parity and the depth across chunks.
    """
    opens = data.count(b"[") + data.count(b"{")
    values = opens + data.count(b",") + data.count(b":") + 1
    if values <= limits.MAX_JSON_VALUES and opens <= limits.MAX_JSON_DEPTH:
        return values
    if b"\\" in data:
        data = _STRING.sub(b'""', data)
    values, depth, deepest, in_string = 1, 0, 0, 0
    for start in range(0, len(data), _CHUNK):
        classes = np.frombuffer(data[start:start + _CHUNK].translate(_CLASSES), np.uint8)
        kinds = classes[np.flatnonzero(classes)]
        quotes = kinds == 1
        inside = (np.cumsum(quotes, dtype=np.int64) + in_string) % 2 == 1
        in_string = (in_string + int(quotes.sum())) % 2
        outside = kinds[~inside & ~quotes]
        values += int(np.count_nonzero(outside != 3))
        steps = np.where(outside == 2, 1, np.where(outside == 3, -1, 0)).astype(np.int64)
        if steps.size:
            levels = np.cumsum(steps) + depth
            deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
        if deepest > limits.MAX_JSON_DEPTH:
            raise SavedModelError(where, f"JSON nests deeper than {limits.MAX_JSON_DEPTH} levels")
        if values > limits.MAX_JSON_VALUES:
            raise SavedModelError(where, f"JSON holds more than {limits.MAX_JSON_VALUES} values")
    return values


def json_depth(value):
    """The nesting depth of a parsed JSON value (iterative: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def _no_duplicates(pairs):
    out = dict(pairs)           # in C; a duplicate shows as a shorter dict
    if len(out) != len(pairs):
        seen = set()
        for k, _ in pairs:
            if k in seen:
                raise ValueError(f"duplicate key {k!r:.60}")
            seen.add(k)
    return out


def parse_json(data, where, scanned=False):
    """JSON from bytes, nesting and size bounded, no duplicate keys; any problem is a SavedModelError."""
    if not scanned:
        scan_json(data, where)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SavedModelError(where, f"is not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates)
    except RecursionError:  # the C parser's own guard against deep nesting
        raise SavedModelError(where, f"JSON nests deeper than {limits.MAX_JSON_DEPTH} levels") from None
    except ValueError as e:  # JSONDecodeError, huge integers, duplicate keys
        raise SavedModelError(where, f"is not valid JSON ({str(e)[:200]})") from None
    return value


__all__ = ["Directory", "parse_json", "scan_json", "json_depth", "nbytes"]
