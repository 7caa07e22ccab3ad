"""``tf.train.Checkpoint``: the values of variables, saved as data and restored by path.

A checkpoint ``PREFIX`` (``ckpt-1``) is two things beside each other: ``PREFIX.index``, a
JSON list of (key, shape, dtype, file), and ``PREFIX.data/<k>.npy``, one array per
variable. Keys are TensorFlow's object paths (``model/w/.ATTRIBUTES/VARIABLE_VALUE``):
attribute names from the Checkpoint's keyword arguments down through modules, lists and
dicts, as TensorFlow walks them. Every byte read goes through the saved programs' file
code (``saved_model/files.py``: plain names, no links, sizes bounded, ``.npy`` headers
checked against the index, no pickles), and the index is validated field by field; a bad
file raises ``SavedModelError`` naming it. ``save`` numbers checkpoints with
``save_counter`` and records the latest in the directory's ``checkpoint`` file, in
TensorFlow's text format.

Beyond TensorFlow's behaviour, nothing is restored later: a variable created after
``restore`` (a layer built on its first call) keeps its initial value; build first.
"""
from __future__ import annotations

import os
import re

import numpy as np

from ..errors import InvalidArgumentError, NotFoundError
from ..ir import dtypes as D
from ..runtime.module import Module
from ..runtime.tensor import Variable
from ..saved_model import limits
from ..saved_model.errors import SavedModelError
from ..saved_model.files import _NAME, Directory
from ..tracer.function import Function

FORMAT = "tapeflow-checkpoint"
VERSION = 1
_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"   # TensorFlow lists this entry in every checkpoint
_DTYPES = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
           "uint32", "uint64", "bool"}
_LATEST = re.compile(r'model_checkpoint_path: "([^"\\\n]*)"')
_MAX_CHECKPOINT_FILE = 1 << 20


def _trackable(obj):
    """Objects whose attributes a checkpoint walks (TensorFlow's ``Trackable``)."""
    if isinstance(obj, (Module, Checkpoint)):
        return True
    return (hasattr(obj, "__dict__") and hasattr(obj, "variables")
            and not isinstance(obj, (Function, type)) and not callable(getattr(obj, "numpy", None)))


def _walk(obj, path, out, seen):
    """(key, Variable) for every variable reachable from ``obj``, first path wins."""
    if isinstance(obj, Variable):
        if id(obj) not in seen:
            seen.add(id(obj))
            out.append(("/".join(path) + _SUFFIX, obj))
        return
    if isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _walk(v, path + [str(i)], out, seen)
        return
    if isinstance(obj, dict):
        for k in sorted(obj, key=str):
            _walk(obj[k], path + [str(k)], out, seen)
        return
    if not _trackable(obj) or id(obj) in seen:
        return
    seen.add(id(obj))
    attrs = obj._children() if isinstance(obj, Checkpoint) else vars(obj)
    ignored = getattr(obj, "_TF_MODULE_IGNORED_PROPERTIES", ())
    for name in sorted(attrs):
        if name not in ignored:
            _walk(attrs[name], path + [name], out, seen)


class CheckpointLoadStatus:
    """What ``restore`` matched (TensorFlow's status object and its assertions).

    >>> import os, tempfile
    >>> v = tf.Variable(1.0)
    >>> prefix = tf.train.Checkpoint(v=v).write(os.path.join(tempfile.mkdtemp(), "ckpt"))
    >>> status = tf.train.Checkpoint(v=tf.Variable(0.0)).read(prefix)
    >>> status.assert_consumed() is status
    True
    """

    def __init__(self, path, unused_keys, unmatched) -> None:
        self._path, self._unused, self._unmatched = path, unused_keys, unmatched

    def assert_consumed(self) -> CheckpointLoadStatus:
        """Every value in the checkpoint and every variable of the object graph was matched."""
        if self._unused:
            raise AssertionError(f"Unresolved object in checkpoint {self._path}: "
                                 f"{', '.join(sorted(self._unused)[:10])}")
        return self.assert_existing_objects_matched()

    def assert_existing_objects_matched(self) -> CheckpointLoadStatus:
        if self._unmatched:
            raise AssertionError(
                f"Found {len(self._unmatched)} Python objects that were not bound to checkpointed "
                f"values, likely due to changes in the Python program. Showing "
                f"{min(len(self._unmatched), 10)} of {len(self._unmatched)} unmatched objects: "
                f"{self._unmatched[:10]}")
        return self

    def assert_nontrivial_match(self) -> CheckpointLoadStatus:
        return self

    def expect_partial(self) -> CheckpointLoadStatus:
        return self

    def run_restore_ops(self, session=None):
        pass

    def initialize_or_restore(self, session=None):
        pass


class Checkpoint:
    """``tf.train.Checkpoint(**objects)``: save and restore the variables reachable from them.

    Keyword arguments name the objects (variables, modules, optimizers, layers, lists and
    dicts of them); ``save``/``write`` store every variable reachable from them, ``restore``/
    ``read`` assign the saved values back. The files are data (validated on load).

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> model = tf.Module()
    >>> model.w = tf.Variable([1.0, 2.0])
    >>> ckpt = tf.train.Checkpoint(model=model)
    >>> path = ckpt.save(os.path.join(d, "ckpt"))
    >>> _ = model.w.assign([0.0, 0.0])
    >>> _ = ckpt.restore(tf.train.latest_checkpoint(d))
    >>> model.w.numpy()
    array([1., 2.], dtype=float32)
    """

    def __init__(self, root=None, **kwargs) -> None:
        for name, obj in ([("root", root)] if root is not None else []) + list(kwargs.items()):
            if not (isinstance(obj, (Variable, list, tuple, dict)) or _trackable(obj)):
                raise ValueError(f"`Checkpoint` was expecting {name} to be a trackable object (an "
                                 f"object derived from `Trackable`), got {obj!r:.100}.")
        self._root = root
        self._objects = dict(kwargs)
        self._save_counter = None

    def __getattr__(self, name):
        objects = self.__dict__.get("_objects", {})
        if name in objects:
            return objects[name]
        raise AttributeError(f"'Checkpoint' object has no attribute {name!r}")

    def _children(self):
        children = dict(vars(self._root)) if self._root is not None else {}
        children.update(self._objects)
        if self._save_counter is not None:
            children["save_counter"] = self._save_counter
        return children

    @property
    def save_counter(self) -> Variable:
        """How many times ``save`` ran (a non-trainable int64 variable, made on first use)."""
        if self._save_counter is None:
            self._save_counter = Variable(0, trainable=False, dtype=D.int64, name="save_counter")
        return self._save_counter

    def _variables(self):
        out = []
        _walk(self, [], out, set())
        return out

    # -- writing -------------------------------------------------------------------------
    def write(self, file_prefix: str | os.PathLike, options=None) -> str:
        """Write the variables' values under ``file_prefix`` (no numbering); returns it."""
        file_prefix = os.fspath(file_prefix)
        folder, base = os.path.split(os.path.abspath(file_prefix))
        if not _NAME.fullmatch(base) or len(base) > limits.MAX_NAME - 20:
            raise ValueError(f"checkpoint prefix {base!r} must be a plain file name (letters, "
                             f"digits, '_', '.', '-')")
        os.makedirs(folder, exist_ok=True)
        d = Directory(folder)
        entries = []
        for k, (key, var) in enumerate(self._variables()):
            name = f"{base}.data/{k}.npy"
            d.write_npy(name, np.asarray(var._value))
            entries.append({"key": key, "file": name, "shape": list(var.shape),
                            "dtype": var.dtype.name})
        d.write_json(f"{base}.index", {"format": FORMAT, "version": VERSION, "variables": entries})
        return file_prefix

    def save(self, file_prefix: str | os.PathLike, options=None) -> str:
        """``write`` to ``file_prefix-N`` (N: the save counter, incremented first) and record it
        in the directory's ``checkpoint`` file; returns the path written."""
        counter = self.save_counter
        counter.assign_add(1)
        path = self.write(f"{os.fspath(file_prefix)}-{int(counter.numpy())}", options)
        folder, base = os.path.split(os.path.abspath(path))
        with open(os.path.join(folder, "checkpoint"), "w") as f:
            f.write(f'model_checkpoint_path: "{base}"\nall_model_checkpoint_paths: "{base}"\n')
        return path

    # -- reading -------------------------------------------------------------------------
    def read(self, save_path: str | os.PathLike, options=None) -> CheckpointLoadStatus:
        """Restore the values ``write`` wrote (``restore`` without the save counter's meaning)."""
        return self.restore(save_path, options)

    def restore(self, save_path: str | os.PathLike | None, options=None) -> CheckpointLoadStatus:
        """Assign every variable whose key the checkpoint holds; returns a
        ``CheckpointLoadStatus``. ``None`` restores nothing (TensorFlow's initialization)."""
        if save_path is None:
            return CheckpointLoadStatus(None, set(), [])
        entries, d, _ = _read_index(os.fspath(save_path))
        if "save_counter" + _SUFFIX in entries:
            self.save_counter  # restored below, so later saves continue the numbering
        unused, unmatched = set(entries), []
        for key, var in self._variables():
            entry = entries.get(key)
            if entry is None:
                unmatched.append(var)
                continue
            unused.discard(key)
            name, shape, dtype = entry
            if tuple(shape) != tuple(var.shape):
                raise ValueError(f"Received incompatible tensor with shape {tuple(shape)} when "
                                 f"attempting to restore variable with shape {tuple(var.shape)} "
                                 f"and name {var.name}.")
            if dtype != var.dtype:
                raise InvalidArgumentError(f"tensor_name = {key}; expected dtype {var.dtype.name} "
                                           f"does not equal original dtype {dtype.name}")
            var.assign(d.read_npy(name, shape, dtype))
        return CheckpointLoadStatus(save_path, unused, unmatched)


def _read_index(prefix):
    """{key: (file, shape, dtype)}, the Directory, and the key order of checkpoint ``prefix``,
    every field checked."""
    folder, base = os.path.split(os.path.abspath(prefix))
    if not _NAME.fullmatch(base) or not os.path.isfile(os.path.join(folder, f"{base}.index")):
        raise NotFoundError(f"Error when restoring from checkpoint at {prefix}: Failed to find "
                            f"any matching files for {prefix}")
    d = Directory(folder)
    index = f"{base}.index"
    where = d.where(index)
    m = d.read_json(index, "checkpoint index")

    def check(ok, problem):
        if not ok:
            raise SavedModelError(where, problem)

    check(isinstance(m, dict) and set(m) == {"format", "version", "variables"},
          "is not a tapeflow checkpoint index (expected keys format, version, variables)")
    check(m["format"] == FORMAT, f"format {m['format']!r:.40} is not {FORMAT!r}")
    check(m["version"] == VERSION, f"version {m['version']!r:.20} is not {VERSION} (written by "
          f"another tapeflow?)")
    check(isinstance(m["variables"], list) and len(m["variables"]) <= limits.MAX_ENTRIES,
          "variables is not a list of at most MAX_ENTRIES entries")
    entries, order = {}, []
    for i, e in enumerate(m["variables"]):
        what = f"variables[{i}]"
        check(isinstance(e, dict) and set(e) == {"key", "file", "shape", "dtype"},
              f"{what} must have exactly key, file, shape, dtype")
        key, file, shape, dtype = e["key"], e["file"], e["shape"], e["dtype"]
        check(isinstance(key, str) and 0 < len(key) <= limits.MAX_NAME and key not in entries,
              f"{what}.key is not a new name of at most {limits.MAX_NAME} characters")
        check(isinstance(file, str) and file.startswith(f"{base}.data/") and file.endswith(".npy"),
              f"{what}.file {file!r:.80} is not one of this checkpoint's data files")
        check(isinstance(shape, list) and len(shape) <= limits.MAX_RANK and all(
            type(n) is int and 0 <= n <= limits.MAX_DIM for n in shape), f"{what}.shape is not a shape")
        check(dtype in _DTYPES, f"{what}.dtype {dtype!r:.20} is not a supported dtype")
        entries[key] = (file, tuple(shape), D.as_dtype(dtype))
        order.append(key)
    return entries, d, order


def latest_checkpoint(checkpoint_dir: str | os.PathLike,
                      latest_filename: str | None = None) -> str | None:
    """The prefix of the newest checkpoint in ``checkpoint_dir``, or None.

    The prefix the directory's ``checkpoint`` file names (TensorFlow's text format), if it
    exists, else None.

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> tf.train.latest_checkpoint(d) is None
    True
    >>> path = tf.train.Checkpoint(v=tf.Variable(1.0)).save(os.path.join(d, "ckpt"))
    >>> os.path.basename(tf.train.latest_checkpoint(d))
    'ckpt-1'
    """
    path = os.path.join(os.fspath(checkpoint_dir), latest_filename or "checkpoint")
    if not os.path.isfile(path) or os.path.getsize(path) > _MAX_CHECKPOINT_FILE:
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        m = _LATEST.search(f.read(_MAX_CHECKPOINT_FILE))
    if m is None:
        return None
    prefix = os.path.join(os.fspath(checkpoint_dir), m.group(1))
    return prefix if os.path.isfile(prefix + ".index") else None


def list_variables(ckpt_dir_or_file: str | os.PathLike) -> list[tuple[str, list[int]]]:
    """``[(key, shape)]`` of a checkpoint (a prefix, or a directory's latest), sorted by key.

    >>> import os, tempfile
    >>> prefix = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).write(os.path.join(tempfile.mkdtemp(), "c"))
    >>> tf.train.list_variables(prefix)
    [('_CHECKPOINTABLE_OBJECT_GRAPH', []), ('v/.ATTRIBUTES/VARIABLE_VALUE', [2])]
    """
    prefix = _prefix(ckpt_dir_or_file)
    entries, _, _ = _read_index(prefix)
    out = [(key, list(shape)) for key, (_, shape, _) in entries.items()]
    return sorted(out + [(_GRAPH_KEY, [])])


def load_variable(ckpt_dir_or_file: str | os.PathLike, name: str) -> np.ndarray:
    """The value saved under ``name`` (a key as ``list_variables`` gives it), as NumPy.

    >>> import os, tempfile
    >>> prefix = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).write(os.path.join(tempfile.mkdtemp(), "c"))
    >>> tf.train.load_variable(prefix, "v/.ATTRIBUTES/VARIABLE_VALUE")
    array([1., 2.], dtype=float32)
    """
    prefix = _prefix(ckpt_dir_or_file)
    entries, d, _ = _read_index(prefix)
    if name not in entries and name + _SUFFIX in entries:
        name += _SUFFIX
    if name not in entries:
        raise NotFoundError(f"Key {name} not found in checkpoint")
    file, shape, dtype = entries[name]
    return d.read_npy(file, shape, dtype)


def _prefix(path):
    path = os.fspath(path)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory "
                             f"{path}")
        return latest
    return path


__all__ = ["Checkpoint", "CheckpointLoadStatus", "latest_checkpoint", "list_variables",
           "load_variable"]
