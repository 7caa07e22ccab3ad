"""``keras.utils``: data helpers (``to_categorical``, ``normalize``, ``pad_sequences``,
``split_dataset``, ``timeseries_dataset_from_array``, ``PyDataset``), seeding, the
serialization registry's public names, logging switches and ``Progbar``, as Keras 3 has them.
File and image loaders, and ``plot_model``/``model_to_dot`` (which need pydot and graphviz),
are out of tapeflow's scope."""
import random as _py_random

import numpy as np

from .. import random as _random
from ..data import Dataset
from ..ir import dtypes as D
from . import serialization, settings
from .backend import clear_session
from .callbacks import Progbar
from .data_adapters import unpack as unpack_x_y_sample_weight
from .node import KerasTensor

custom_object_scope = CustomObjectScope = serialization.custom_object_scope
register_keras_serializable = serialization.register_keras_serializable
get_registered_name = serialization.get_registered_name
_INTERACTIVE = {"enabled": True}


def to_categorical(x, num_classes=None):
    """Class ids to one-hot rows (float32): the class axis is last.

    >>> tf.keras.utils.to_categorical([0, 2], num_classes=3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    x = np.array(x.numpy() if hasattr(x, "numpy") else x, dtype="int64")
    shape = x.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    x = x.reshape(-1)
    if not num_classes:
        num_classes = int(np.max(x)) + 1
    out = np.zeros((x.shape[0], num_classes), dtype=np.float32)
    out[np.arange(x.shape[0]), x] = 1
    return out.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """``x`` divided by its ``order``-norm along ``axis`` (zero norms left as 1)."""
    x = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """Lists of sequences to one 2D array, padded (and truncated) to ``maxlen``.

    >>> tf.keras.utils.pad_sequences([[1, 2], [3]]).tolist()
    [[1, 2], [0, 3]]
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    lengths, sample_shape = [], ()
    for s in sequences:
        lengths.append(len(s))
        if len(s) and not sample_shape:
            sample_shape = np.asarray(s).shape[1:]
    if maxlen is None:
        maxlen = max(lengths) if lengths else 0
    out = np.full((len(sequences), maxlen) + sample_shape, value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s):
            continue
        if truncating == "pre":
            trunc = s[-maxlen:]
        elif truncating == "post":
            trunc = s[:maxlen]
        else:
            raise ValueError(f'Truncating type "{truncating}" not understood')
        trunc = np.asarray(trunc, dtype=dtype)
        if padding == "post":
            out[i, :len(trunc)] = trunc
        elif padding == "pre":
            out[i, -len(trunc):] = trunc
        else:
            raise ValueError(f'Padding type "{padding}" not understood')
    return out


def set_random_seed(seed):
    """Seed Python's, NumPy's and tapeflow's random generators at once."""
    if not isinstance(seed, int):
        raise ValueError(f"Expected `seed` argument to be an integer. Received: seed={seed} "
                         f"(of type {type(seed)})")
    _py_random.seed(seed)
    np.random.seed(seed)
    _random.set_seed(seed)


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)``, as ``fit`` unpacks them."""
    if y is None:
        return (x,) if isinstance(x, (list, tuple)) else x
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def standardize_dtype(dtype):
    """A dtype's Keras name ('float32', 'int64', ...)."""
    if dtype is None:
        return settings.floatx()
    if dtype == "int":
        return "int64"
    if dtype == "float":
        return "float32"
    return D.as_dtype(getattr(dtype, "name", dtype) if not isinstance(dtype, str) else dtype).name


def is_keras_tensor(x):
    """Whether ``x`` is a symbolic Keras tensor (a functional model's placeholder)."""
    return isinstance(x, KerasTensor)


def get_source_inputs(tensor):
    """The ``Input`` tensors a symbolic tensor was computed from, in first-seen order."""
    sources, stack, seen = [], [tensor], set()
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        node = getattr(t, "node", None)
        inputs = node.input_tensors if node is not None else []
        if not inputs:
            sources.append(t)
        stack.extend(reversed(inputs))
    return sources


def get_custom_objects():
    """The registry of ``register_keras_serializable`` (name -> class), which may be edited."""
    return serialization.REGISTERED


def get_registered_object(name, custom_objects=None, module_objects=None):
    for table in (dict(custom_objects or {}), serialization._custom_objects(), serialization.REGISTERED,
                  dict(module_objects or {})):
        if name in table:
            return table[name]
    return None


def serialize_keras_object(obj):
    """Keras 3's dict of a Keras object (``{"module", "class_name", "config", ...}``)."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    return serialization.serialize(obj)


def deserialize_keras_object(config, custom_objects=None, safe_mode=True, **kwargs):
    """The object ``serialize_keras_object`` described."""
    if config is None or isinstance(config, (bool, int, float, str)):
        return config
    with serialization.custom_object_scope(custom_objects):
        return serialization.deserialize(config)


def enable_interactive_logging():
    _INTERACTIVE["enabled"] = True


def disable_interactive_logging():
    _INTERACTIVE["enabled"] = False


def is_interactive_logging_enabled():
    return _INTERACTIVE["enabled"]


class Config:
    """An attribute bag that can be frozen (Keras 3's ``keras.utils.Config``)."""

    def __init__(self, **kwargs):
        object.__setattr__(self, "_config", dict(kwargs))
        object.__setattr__(self, "_frozen", False)

    def freeze(self):
        object.__setattr__(self, "_frozen", True)

    def unfreeze(self):
        object.__setattr__(self, "_frozen", False)

    @property
    def frozen(self):
        return self._frozen

    def __getattr__(self, name):
        config = self.__dict__["_config"]
        if name in config:
            return config[name]
        raise AttributeError(f"Unknown attribute: '{name}'")

    def __setattr__(self, name, value):
        if self._frozen:
            raise ValueError("Cannot add new attribute to a frozen Config. Call `config.unfreeze()` first.")
        self._config[name] = value

    def __getitem__(self, key):
        return self._config[key]

    def __setitem__(self, key, value):
        self.__setattr__(key, value)

    def __contains__(self, item):
        return item in self._config

    def __len__(self):
        return len(self._config)

    def keys(self):
        return self._config.keys()

    def values(self):
        return self._config.values()

    def items(self):
        return self._config.items()

    def get(self, key, default=None):
        return self._config.get(key, default)

    def update(self, *args, **kwargs):
        if self._frozen:
            raise ValueError("Cannot update a frozen Config.")
        self._config.update(*args, **kwargs)

    def pop(self, *args):
        if self._frozen:
            raise ValueError("Cannot pop from a frozen Config.")
        return self._config.pop(*args)

    def as_dict(self):
        return dict(self._config)

    to_json = lambda self: __import__("json").dumps(self._config)   # noqa: E731

    def __repr__(self):
        return f"<Config {self._config}>"


class PyDataset:
    """A Python dataset of batches: subclass it with ``__len__`` and ``__getitem__(index)``
    returning a batch (``x``, ``(x, y)`` or ``(x, y, sample_weight)``); ``fit`` iterates it,
    calling ``on_epoch_end`` after each epoch. Workers are accepted and not used (batches are
    read in order, in the training thread)."""

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers, self._use_multiprocessing = workers, use_multiprocessing
        self._max_queue_size = max_queue_size

    @property
    def workers(self):
        return self._workers

    @property
    def use_multiprocessing(self):
        return self._use_multiprocessing

    @property
    def max_queue_size(self):
        return self._max_queue_size

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    @property
    def num_batches(self):
        return len(self) if hasattr(self, "__len__") else None

    def on_epoch_begin(self):
        pass

    def on_epoch_end(self):
        pass


Sequence = PyDataset


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None):
    """Two datasets of the elements of ``dataset`` (a dataset, an array, or a tuple of arrays):
    the first ``left_size`` (a count or a fraction) and the rest."""
    if isinstance(dataset, Dataset):
        elements = list(dataset.as_numpy_iterator())
    elif isinstance(dataset, (tuple, list)) and not isinstance(dataset[0], (int, float)):
        arrays = [np.asarray(a) for a in dataset]
        elements = [tuple(a[i] for a in arrays) for i in range(len(arrays[0]))]
    else:
        elements = list(np.asarray(dataset))
    n = len(elements)
    if left_size is None and right_size is None:
        left_size = 0.5
    left = _size(left_size, n) if left_size is not None else n - _size(right_size, n)
    right = _size(right_size, n) if right_size is not None else n - left
    if left + right > n or left < 0 or right < 0:
        raise ValueError(f"The sum of `left_size` and `right_size` should be smaller than the total "
                         f"length of the dataset. Received: left_size + right_size = {left + right} and "
                         f"total_length = {n}")
    if shuffle:
        order = np.random.default_rng(seed).permutation(n)
        elements = [elements[i] for i in order]

    def make(items):
        if not items:
            return Dataset.from_tensor_slices(np.zeros((0,), np.float32))
        if isinstance(items[0], tuple):
            return Dataset.from_tensor_slices(tuple(np.stack(c) for c in zip(*items)))
        return Dataset.from_tensor_slices(np.stack(items))
    return make(elements[:left]), make(elements[left:left + right])


def _size(size, n):
    if isinstance(size, float):
        if not 0 < size < 1:
            raise ValueError(f"A float size must be in (0, 1). Received: {size}")
        return int(np.round(size * n))
    return int(size)


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1, sampling_rate=1,
                                  batch_size=128, shuffle=False, seed=None, start_index=None, end_index=None):
    """Batches of windows ``data[i : i + sequence_length * sampling_rate : sampling_rate]``
    (with ``targets[i]`` when targets are given), one window start every ``sequence_stride``."""
    data = np.asarray(data.numpy() if hasattr(data, "numpy") else data)
    start = start_index or 0
    end = len(data) if end_index is None else end_index
    span = (sequence_length - 1) * sampling_rate
    starts = np.arange(start, end - span, sequence_stride)
    if targets is not None:
        targets = np.asarray(targets.numpy() if hasattr(targets, "numpy") else targets)
        starts = starts[starts < len(targets)]
    if shuffle:
        starts = np.random.default_rng(seed).permutation(starts)
    offsets = np.arange(sequence_length) * sampling_rate
    windows = data[starts[:, None] + offsets[None, :]] if len(starts) else np.zeros(
        (0, sequence_length) + data.shape[1:], data.dtype)
    ds = Dataset.from_tensor_slices(windows if targets is None else (windows, targets[starts]))
    return ds.batch(batch_size) if batch_size is not None else ds


__all__ = ["to_categorical", "normalize", "pad_sequences", "set_random_seed", "pack_x_y_sample_weight",
           "unpack_x_y_sample_weight", "standardize_dtype", "is_keras_tensor", "get_source_inputs",
           "get_custom_objects", "get_registered_object", "get_registered_name", "serialize_keras_object",
           "deserialize_keras_object", "register_keras_serializable", "custom_object_scope",
           "CustomObjectScope", "enable_interactive_logging", "disable_interactive_logging",
           "is_interactive_logging_enabled", "Config", "PyDataset", "Sequence", "split_dataset",
           "timeseries_dataset_from_array", "Progbar", "clear_session"]
