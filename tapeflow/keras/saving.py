"""``model.save``/``load_model`` and ``save_weights``/``load_weights``: a ``.keras`` zip of data only.

The file is Keras 3's layout with the weights as NumPy arrays instead of HDF5 (tapeflow
has no h5py): ``metadata.json``, ``config.json`` (Keras 3's config: classes by name,
``build_config``, ``compile_config``), ``model.weights.json`` (for each array its key,
shape, dtype and member) and ``model.weights/<k>.npy``. Keys are positional,
``layers/<i>/vars/<j>`` down the tracked sublayers and ``optimizer/vars/<j>``, so a
subclassed model's auto-named sublayers load into a new instance. Keras cannot read
these files and tapeflow cannot read Keras' (``model.weights.h5``): the loader says so.
``save_weights`` writes the same zip without the config, under Keras' required name
``*.weights.h5``.

Loading trusts nothing in the file. Only the members above may be present (no other
name, no directories, no ``..``, no duplicates, plain or deflate compression); each
member's declared and actual size is bounded and charged to one memory budget
(``TAPEFLOW_LOAD_BUDGET_MB``) before it is extracted to a private temporary directory,
where the saved programs' file code reads it (``saved_model/files.py``: JSON nesting and
size bounded, duplicate keys refused, ``.npy`` headers checked against the index,
``allow_pickle=False``). Classes are found by name only (serialization.py); the weights a
config would make a layer build are charged to the budget before they are allocated.
Every problem raises ``SavedModelError`` (a ``ValueError``) naming the file and member,
except an unknown class, which is Keras' ``TypeError`` with the file's name added.
"""
import datetime
import json
import os
import re
import shutil
import tempfile
import zipfile
import zlib

import numpy as np

from .. import env
from .._version import __version__
from ..ir import dtypes as D
from ..ir.codec import Budget, DecodeError
from ..saved_model import limits
from ..saved_model.errors import SavedModelError
from ..saved_model.files import Directory, nbytes
from . import losses as losses_module
from . import metrics as metrics_module
from . import optimizers as optimizers_module
from . import serialization
from .auto_config import plain
from .node import creation_limit
from . import models as models_module
from .models import Model
from .config_dicts import class_config

FORMAT = "tapeflow-keras"
VERSION = 1
KERAS_VERSION = "3.15.1"  # the Keras whose config layout this follows
CONFIG, METADATA, INDEX, WEIGHTS_DIR = "config.json", "metadata.json", "model.weights.json", "model.weights"
_ARRAY = re.compile(r"model\.weights/(0|[1-9][0-9]{0,5})\.npy")
_KEY = re.compile(r"(layers/[0-9]{1,5}/)*vars/[0-9]{1,5}|optimizer/vars/[0-9]{1,5}")
_DTYPES = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
           "uint32", "uint64", "bool"}
_READ_CHUNK = 1 << 20
_MAX_DIRECTORY = limits.MAX_ENTRIES * 200  # bytes of a zip's central directory (per member: ~46 + name)


# -- what is saved ---------------------------------------------------------------------------

def layer_variables(model):
    """``(key, variable, layer name)`` for every weight, walking tracked sublayers in order."""
    out, seen = [], set()

    def walk(layer, prefix):
        for j, v in enumerate(layer._trainable_weights + layer._non_trainable_weights):
            if id(v) not in seen:
                seen.add(id(v))
                out.append((f"{prefix}vars/{j}", v, layer.name))
        for i, child in enumerate(layer._child_layers()):
            if id(child) not in seen:
                seen.add(id(child))
                walk(child, f"{prefix}layers/{i}/")

    seen.add(id(model))
    walk(model, "")
    return out


def optimizer_variables(model):
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or not getattr(optimizer, "_built", False):
        return []
    return [(f"optimizer/vars/{j}", v, "optimizer") for j, v in enumerate(optimizer.variables)]


def _compile_config(model):
    """``compile``'s arguments as data, or None when one of them is not (a Python function)."""
    config = getattr(model, "_compile_config", None)
    if not getattr(model, "compiled", False) or config is None:
        return None
    optimizer = model.optimizer
    try:
        data = {"optimizer": class_config(optimizer, "keras.optimizers"),
                "loss": _serialize_named(config["loss"], losses_module),
                "loss_weights": config["loss_weights"],
                "metrics": _serialize_named(config["metrics"], metrics_module),
                "weighted_metrics": _serialize_named(config.get("weighted_metrics"), metrics_module),
                "run_eagerly": False, "steps_per_execution": 1,
                "jit_compile": False}
    except NotImplementedError:
        return None
    return data if plain(data) else None


def _serialize_named(value, module):
    """Losses/metrics by their names (strings, or Keras classes as {class_name, config})."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return [_serialize_named(v, module) for v in value]
    if isinstance(value, dict):
        return {k: _serialize_named(v, module) for k, v in value.items()}
    if type(value).__name__ in module.CLASSES and module.CLASSES[type(value).__name__] is type(value):
        return class_config(value, f"keras.{module.__name__.rsplit('.', 1)[-1]}")
    name = getattr(value, "__name__", None)
    if name in module.FUNCTIONS and module.FUNCTIONS[name] is value:
        return name
    raise NotImplementedError


def _deserialize_named(value, module, what):
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        return [_deserialize_named(v, module, what) for v in value]
    if isinstance(value, dict) and "class_name" in value:
        cls = module.CLASSES.get(value["class_name"]) if isinstance(value["class_name"], str) else None
        if cls is None or not isinstance(value.get("config"), dict):
            raise ValueError(f"{what}: unknown class {str(value['class_name'])[:60]!r}")
        return cls(**value["config"])
    if isinstance(value, dict):
        return {k: _deserialize_named(v, module, what) for k, v in value.items()}
    raise ValueError(f"{what}: {str(value)[:60]!r} is not a name or a class config")


# -- writing ------------------------------------------------------------------------------

def _check_suffix(filepath, suffix, message):
    filepath = os.fspath(filepath)
    if not filepath.endswith(suffix):
        raise ValueError(message.format(filepath=filepath))
    return filepath


def _write_zip(filepath, overwrite, members, arrays):
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"{filepath} exists and overwrite=False")
    tmp = f"{filepath}.tmp{os.getpid()}"  # written aside, then renamed: never half a file
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as z:  # floats barely deflate
            for name, text in members:
                z.writestr(name, text, compress_type=zipfile.ZIP_DEFLATED)
            for k, array in enumerate(arrays):
                with z.open(f"{WEIGHTS_DIR}/{k}.npy", "w", force_zip64=True) as f:
                    np.lib.format.write_array(f, np.array(array, order="C"), allow_pickle=False)
        os.replace(tmp, filepath)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _index(entries):
    index, arrays = [], []
    for k, (key, variable, owner) in enumerate(entries):
        value = np.asarray(variable.numpy())
        index.append({"key": key, "layer": owner, "file": f"{WEIGHTS_DIR}/{k}.npy",
                      "shape": list(value.shape), "dtype": variable.dtype.name})
        arrays.append(value)
    return {"format": FORMAT, "version": VERSION, "weights": index}, arrays


def _json(obj):
    return json.dumps(obj, indent=1)


def _metadata():
    return {"format": FORMAT, "version": VERSION, "keras_version": KERAS_VERSION,
            "tapeflow_version": __version__,
            "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}


def save_model(model, filepath, overwrite=True, include_optimizer=True):
    """``model.save(filepath)``: Keras 3's ``.keras`` layout, weights as ``.npy`` members."""
    filepath = _check_suffix(
        filepath, ".keras", "Invalid filepath extension for saving. Please add either a `.keras` "
        "extension for the native Keras format (recommended) or a `.h5` extension. Use "
        "`model.export(filepath)` if you want to export a SavedModel for use with "
        "TFLite/TFServing/etc. Received: filepath={filepath}.")
    config = serialization.serialize(model)
    compile_config = _compile_config(model)  # Keras 3 saves it with or without the optimizer
    if compile_config is not None:
        config["compile_config"] = compile_config
    entries = layer_variables(model) + (optimizer_variables(model) if include_optimizer else [])
    index, arrays = _index(entries)
    _write_zip(filepath, overwrite, [(METADATA, _json(_metadata())), (CONFIG, _json(config)),
                                     (INDEX, _json(index))], arrays)


def save_weights(model, filepath, overwrite=True):
    """``model.save_weights``: the weights alone (the same zip, no config), ``*.weights.h5``."""
    filepath = _check_suffix(filepath, ".weights.h5",
                             "The filename must end in `.weights.h5`. Received: filepath={filepath}")
    index, arrays = _index(layer_variables(model) + optimizer_variables(model))
    _write_zip(filepath, overwrite, [(METADATA, _json(_metadata())), (INDEX, _json(index))], arrays)


# -- reading --------------------------------------------------------------------------------

class _Archive:
    """A ``.keras`` zip checked member by member and extracted to a private directory."""

    def __init__(self, filepath, allowed):
        self.path = filepath
        self.budget = Budget(int(env.get("TAPEFLOW_LOAD_BUDGET_MB") * (1 << 20)))
        self.tmp = tempfile.mkdtemp(prefix="tapeflow-keras-")
        try:
            self._extract(allowed)
        except BaseException:
            self.close()
            raise
        self.dir = Directory(self.tmp, self.budget)
        self.dir.shown = filepath  # messages name the user's file: 'model.keras/config.json'

    def fail(self, problem, member=None):
        raise SavedModelError(f"{self.path}/{member}" if member else self.path, problem)

    def _extract(self, allowed):
        with open(self.path, "rb") as f:
            magic = f.read(8)
        if magic.startswith(b"\x89HDF"):
            self.fail("is an HDF5 file (Keras' format); tapeflow reads only the .keras files it "
                      "writes itself (weights as .npy)")
        self._check_directory_size()
        try:
            z = zipfile.ZipFile(self.path)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as e:
            self.fail(f"is not a readable zip file (truncated or not a .keras file: {e})")
        with z:
            infos = z.infolist()
            if len(infos) > limits.MAX_ENTRIES:
                self.fail(f"holds {len(infos)} members, more than the {limits.MAX_ENTRIES} allowed")
            seen = set()
            self.arrays = [info.filename for info in infos if _ARRAY.fullmatch(info.filename)]
            for info in infos:
                name = info.filename
                if name == "model.weights.h5":
                    self.fail("holds model.weights.h5: Keras' HDF5 weights; tapeflow reads only "
                              "the .keras files it writes itself (weights as .npy)")
                if name not in allowed and not _ARRAY.fullmatch(name):
                    self.fail(f"holds an unexpected member {name[:100]!r} (a .keras file holds only "
                              f"{sorted(allowed)} and {WEIGHTS_DIR}/<k>.npy)")
                if name in seen:
                    self.fail(f"holds member {name!r} twice")
                seen.add(name)
                if info.flag_bits & 0x1:
                    self.fail(f"member {name!r} is encrypted")
                if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                    self.fail(f"member {name!r} uses compression method {info.compress_type}; only "
                              f"stored and deflate are read")
                cap = (limits.MAX_JSON_BYTES if name.endswith(".json")
                       else limits.MAX_TENSOR_BYTES + limits.MAX_NPY_HEADER + 16)
                if info.file_size > cap:
                    self.fail(f"declares {info.file_size} bytes, more than the {cap} allowed", name)
                try:
                    self.budget.charge(info.file_size, f"member of {info.file_size} bytes")
                except DecodeError as e:
                    self.fail(str(e), name)
                self._copy(z, info, cap)

    def _check_directory_size(self):
        """Refuse a central directory too large to list before ``zipfile`` parses it (it builds
        one object per member): the end record's size field, read from the file's tail."""
        with open(self.path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - (1 << 16) - 22))
            tail = f.read()
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or len(tail) - at < 22:
            self.fail("is not a readable zip file (truncated or not a .keras file: no end record)")
        directory = int.from_bytes(tail[at + 12:at + 16], "little")
        if directory != 0xFFFFFFFF and directory > _MAX_DIRECTORY:
            self.fail(f"its zip directory is {directory} bytes, more than the {_MAX_DIRECTORY} allowed")

    def _copy(self, z, info, cap):
        name = info.filename
        target = os.path.join(self.tmp, *name.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        written = 0
        try:
            with z.open(info) as src, open(target, "wb") as dst:
                while True:
                    chunk = src.read(min(_READ_CHUNK, info.file_size - written + 1))
                    if not chunk:
                        break
                    written += len(chunk)
                    if written > info.file_size or written > cap:
                        self.fail("holds more bytes than its declared size", name)
                    dst.write(chunk)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError,
                NotImplementedError) as e:
            self.fail(f"cannot be read (truncated or corrupt: {str(e)[:200]})", name)
        if written != info.file_size:
            self.fail(f"holds {written} bytes, its header declares {info.file_size}", name)

    def has(self, member):
        return os.path.isfile(os.path.join(self.tmp, member))

    def json(self, member, what):
        if not self.has(member):
            self.fail(f"has no {member} (not a tapeflow .keras file)")
        return self.dir.read_json(member, what)

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def _check_metadata(archive):
    m = archive.json(METADATA, "metadata")
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        archive.fail(f"format is not {FORMAT!r} (a Keras file? tapeflow reads only its own)", METADATA)
    if m.get("version") != VERSION:
        archive.fail(f"version {str(m.get('version'))[:20]} is not {VERSION}", METADATA)


def _read_index(archive):
    """The index's entries as {key: (file, shape, dtype, layer name)}, every field checked."""
    m = archive.json(INDEX, "weights index")

    def check(ok, problem):
        if not ok:
            archive.fail(problem, INDEX)

    check(isinstance(m, dict) and set(m) == {"format", "version", "weights"},
          "is not a weights index (expected keys format, version, weights)")
    check(m["format"] == FORMAT and m["version"] == VERSION, f"is not a {FORMAT} v{VERSION} index")
    check(isinstance(m["weights"], list) and len(m["weights"]) <= limits.MAX_ENTRIES,
          "weights is not a list of at most MAX_ENTRIES entries")
    entries, files = {}, set()
    for i, e in enumerate(m["weights"]):
        what = f"weights[{i}]"
        check(isinstance(e, dict) and set(e) == {"key", "layer", "file", "shape", "dtype"},
              f"{what} must have exactly key, layer, file, shape, dtype")
        check(isinstance(e["key"], str) and len(e["key"]) <= limits.MAX_NAME
              and _KEY.fullmatch(e["key"]) and e["key"] not in entries,
              f"{what}.key {str(e['key'])[:60]!r} is not a new weight key")
        check(isinstance(e["layer"], str) and len(e["layer"]) <= limits.MAX_NAME,
              f"{what}.layer is not a name")
        check(isinstance(e["file"], str) and _ARRAY.fullmatch(e["file"]) and e["file"] not in files,
              f"{what}.file {str(e['file'])[:60]!r} is not a new {WEIGHTS_DIR}/<k>.npy member")
        check(isinstance(e["shape"], list) and len(e["shape"]) <= limits.MAX_RANK and all(
            type(n) is int and 0 <= n <= limits.MAX_DIM for n in e["shape"]), f"{what}.shape is not a shape")
        check(e["dtype"] in _DTYPES, f"{what}.dtype {str(e['dtype'])[:20]!r} is not a supported dtype")
        dtype = D.as_dtype(e["dtype"])
        try:
            nbytes(e["shape"], dtype, archive.path)
        except SavedModelError as err:
            archive.fail(f"{what}: {err.problem}", INDEX)
        files.add(e["file"])
        entries[e["key"]] = (e["file"], tuple(e["shape"]), dtype, e["layer"])
    stray = sorted(set(archive.arrays) - files)
    check(not stray, f"lists no entry for member(s) {stray[:4]} of the file")
    total = sum(nbytes(s, d, archive.path) for _, s, d, _ in entries.values())
    try:
        archive.budget.charge(total, f"{len(entries)} weights of {total} bytes")
    except DecodeError as e:
        archive.fail(str(e), INDEX)
    return entries


def _assign(archive, entries, targets, skip_mismatch=False):
    """Read each target's array (shape and dtype checked against the model first) and assign."""
    keys = [key for key, _, _ in targets]
    missing = [k for k in keys if k not in entries]
    extra = [k for k in entries if k not in set(keys)]
    if missing or extra:
        archive.fail(f"its weights do not fit this model: the model has {len(keys)} weights, the file "
                     f"{len(entries)}" + (f"; missing {missing[:4]}" if missing else "")
                     + (f"; not in the model {extra[:4]}" if extra else ""), INDEX)
    values = []
    for key, variable, owner in targets:
        file, shape, dtype, saved_owner = entries[key]
        if shape != tuple(variable.shape) or dtype != variable.dtype:
            if skip_mismatch:
                continue
            archive.fail(f"weight {key} (layer {saved_owner!r}) is {dtype.name}{list(shape)}; the "
                         f"model's {variable.name} (layer {owner!r}) is "
                         f"{variable.dtype.name}{list(variable.shape)}", INDEX)
        values.append((variable, archive.dir.read_npy(file, shape, dtype)))
    for variable, value in values:  # nothing changes unless everything was read
        variable.assign(value)


def _creation_check(archive):
    def check(shape, dtype, what):
        n = nbytes(shape, dtype, f"{archive.path}/{CONFIG}") if all(type(d) is int for d in shape) else 0
        try:
            archive.budget.charge(n, f"{what} of {dtype.name}{list(shape)}")
        except DecodeError as e:
            archive.fail(str(e), CONFIG)
    return check


_CONFIG_ERRORS = (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError,
                  NotImplementedError, RecursionError, ArithmeticError)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """A model saved by ``model.save``: same config, same weights, compiled as it was,
    with its optimizer state (when saved)."""
    filepath = os.fspath(filepath)
    if not os.path.isfile(filepath):
        raise ValueError(f"File not found: filepath={filepath}. Please ensure the file is an "
                         f"accessible `.keras` zip file.")
    if not filepath.endswith(".keras"):
        raise ValueError(f"File format not supported: filepath={filepath}. Keras 3 only supports V3 "
                         f"`.keras` files and legacy H5 format files (`.h5` extension).")
    archive = _Archive(filepath, {METADATA, CONFIG, INDEX})
    try:
        _check_metadata(archive)
        config = archive.json(CONFIG, "model config")
        entries = _read_index(archive)
        with serialization.custom_object_scope(custom_objects), creation_limit(_creation_check(archive)):
            try:
                model = serialization.deserialize(config)
            except SavedModelError:
                raise
            except TypeError as e:
                if str(e).startswith("Could not locate class"):
                    raise TypeError(f"{filepath}/{CONFIG}: {e}") from None
                archive.fail(f"cannot rebuild the model: {type(e).__name__}: {str(e)[:300]}", CONFIG)
            except _CONFIG_ERRORS as e:
                archive.fail(f"cannot rebuild the model: {type(e).__name__}: {str(e)[:300]}", CONFIG)
        if not isinstance(model, Model):
            archive.fail(f"describes a {type(model).__name__}, not a model", CONFIG)
        layer_entries = {k: v for k, v in entries.items() if not k.startswith("optimizer/")}
        _assign(archive, layer_entries, layer_variables(model))
        compile_config = config.get("compile_config") if isinstance(config, dict) else None
        if compile and compile_config:
            _compile_from_config(archive, model, compile_config)
            optimizer_entries = {k: v for k, v in entries.items() if k.startswith("optimizer/")}
            if optimizer_entries:
                model.optimizer.build(model.trainable_weights)
                _assign(archive, optimizer_entries, optimizer_variables(model))
        return model
    finally:
        archive.close()


def _compile_from_config(archive, model, config):
    if not isinstance(config, dict):
        archive.fail("compile_config is not a dict", CONFIG)
    try:
        optimizer = config.get("optimizer")
        if isinstance(optimizer, dict):
            name = optimizer.get("class_name")
            cls = optimizers_module._BY_NAME.get(name.lower()) if isinstance(name, str) else None
            if cls is None or not isinstance(optimizer.get("config"), dict):
                raise ValueError(f"unknown optimizer {str(name)[:60]!r}")
            optimizer = cls.from_config(optimizer["config"])
        elif not isinstance(optimizer, str):
            raise ValueError("optimizer is neither a name nor a config")
        model.compile(optimizer=optimizer,
                      loss=_deserialize_named(config.get("loss"), losses_module, "loss"),
                      loss_weights=config.get("loss_weights"),
                      metrics=_deserialize_named(config.get("metrics"), metrics_module, "metrics"),
                      weighted_metrics=_deserialize_named(config.get("weighted_metrics"), metrics_module,
                                                          "weighted_metrics"))
    except _CONFIG_ERRORS as e:
        archive.fail(f"cannot compile the model from compile_config: {type(e).__name__}: "
                     f"{str(e)[:300]}", CONFIG)


def load_weights(model, filepath, skip_mismatch=False):
    """``model.load_weights``: the weights (and optimizer state, if both have it) of ``save_weights``."""
    filepath = os.fspath(filepath)
    if not filepath.endswith(".weights.h5") and not filepath.endswith(".keras"):
        raise ValueError(f"File format not supported: filepath={filepath}. Keras 3 only supports V3 "
                         f"`.keras` and `.weights.h5` files, or legacy V1/V2 `.h5` files.")
    if not os.path.isfile(filepath):
        raise FileNotFoundError(f"No such file or directory: {filepath!r}")
    archive = _Archive(filepath, {METADATA, CONFIG, INDEX})
    try:
        _check_metadata(archive)
        entries = _read_index(archive)
        layer_entries = {k: v for k, v in entries.items() if not k.startswith("optimizer/")}
        _assign(archive, layer_entries, layer_variables(model), skip_mismatch)
        optimizer_entries = {k: v for k, v in entries.items() if k.startswith("optimizer/")}
        if optimizer_entries and getattr(model, "optimizer", None) is not None:
            model.optimizer.build(model.trainable_weights)
            _assign(archive, optimizer_entries, optimizer_variables(model), skip_mismatch)
    finally:
        archive.close()


models_module.SAVING.update(save_model=save_model, save_weights=save_weights, load_weights=load_weights)

__all__ = ["save_model", "load_model", "save_weights", "load_weights", "FORMAT", "VERSION"]
