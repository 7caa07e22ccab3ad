"""What ``fit``/``evaluate``/``predict`` iterate: NumPy arrays in batches, or a ``tf.data.Dataset``.

An adapter gives each epoch's ``(step, batch)`` pairs, a batch being the tuple ``(x, y,
sample_weight)`` with absent parts None, and ``steps`` (None when unknown). Arrays are
batched by slicing (read-only views; a shuffled epoch gathers each batch's rows once); a
dataset's elements are its batches, unpacked as Keras 3 does (a tuple of 1 to 3 parts,
anything else is ``x``).
With ``steps_per_epoch`` a dataset's iterator carries over from one epoch to the next, as in
Keras, so an infinite (``repeat()``) dataset can be trained on.
"""
import math
import warnings

import numpy as np

from .. import _nest
from .. import random as _random
from ..data import Dataset
from ..ir import dtypes as D
from ..runtime.tensor import convert_to_tensor, wrap


def _array(x):
    """NumPy array of a leaf; float64 data becomes float32 (Keras's floatx), as Keras 3 does."""
    a = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
    return a.astype(np.float32) if a.dtype == np.float64 else a


def arrays(structure):
    return None if structure is None else _nest.map_structure(_array, structure)


def num_samples(structure):
    sizes = {int(a.shape[0]) for a in _nest.flatten(structure) if a is not None}
    if len(sizes) != 1:
        raise ValueError(f"Data cardinality is ambiguous. Make sure all arrays contain the same "
                         f"number of samples. Received sizes: {sorted(sizes)}")
    return sizes.pop()


# dtypes a batch is made of without conversion checks (``arrays`` made float64 float32)
_PLAIN = frozenset(np.dtype(t) for t in (np.float32, np.float16, np.int64, np.int32, np.uint8, np.bool_))


def _rows(a, index):
    """Rows ``index`` of ``a`` as a Tensor: a view for a slice, one gather for a shuffled
    batch (``a[index]`` is a new array: the Tensor owns it, no second copy)."""
    if a.dtype in _PLAIN:
        return wrap(a[index])
    return convert_to_tensor(a[index])


def _take(structure, index):
    if structure is None:
        return None
    if isinstance(structure, np.ndarray):
        return _rows(structure, index)
    return _nest.map_structure(lambda a: _rows(a, index), structure)


def unpack(data):
    """Keras 3's ``unpack_x_y_sample_weight``."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) > 3:
        raise ValueError(f"Data is expected to be in format `x`, `(x,)`, `(x, y)`, or "
                         f"`(x, y, sample_weight)`, found: {data}")
    x, y, sample_weight = (tuple(data) + (None, None))[:3]
    return x, y, sample_weight


class ArrayAdapter:
    def __init__(self, data, batch_size, shuffle=False, steps=None):
        self.data, self.batch_size, self.shuffle = data, batch_size, shuffle
        self.n = num_samples([d for d in data if d is not None])
        self.steps = math.ceil(self.n / batch_size) if steps is None else steps

    def first(self):
        return next(self.epoch(shuffle=False))[1]

    def epoch(self, shuffle=None):
        shuffle = self.shuffle if shuffle is None else shuffle
        order = None
        if shuffle:
            order = np.argsort(_random.uniform((self.n,), dtype=D.float64).numpy(), kind="stable")
        for step in range(min(self.steps, math.ceil(self.n / self.batch_size))):
            index = slice(step * self.batch_size, min(self.n, (step + 1) * self.batch_size))
            if order is not None:
                index = order[index]
            yield step, tuple(_take(d, index) for d in self.data)


class DatasetAdapter:
    def __init__(self, dataset, steps=None):
        self.dataset = dataset
        card = int(dataset.cardinality())
        self.steps = steps if steps is not None else (card if card >= 0 else None)
        self._persistent = steps is not None
        self._it = None
        if card == -1 and steps is None:
            raise ValueError("When passing an infinitely repeating dataset, please specify a "
                             "`steps_per_epoch` value so that epoch level callbacks continue to work. "
                             "The value can be arbitrary, or a number that you think correctly "
                             "defines the size of an epoch.")

    def first(self):
        element = next(iter(self.dataset), None)
        if element is None:
            raise ValueError("Expected input data to be non-empty.")
        return unpack(element)

    def epoch(self, shuffle=None):
        if not self._persistent:
            for step, element in enumerate(self.dataset):
                yield step, unpack(element)
            return
        for step in range(self.steps):
            if self._it is None:
                self._it = iter(self.dataset)
            element = next(self._it, None)
            if element is None:
                self._it = None
                warnings.warn("Your input ran out of data; interrupting training. Make sure that "
                              "your dataset or generator can generate at least `steps_per_epoch * "
                              "epochs` batches. You may need to use the `.repeat()` function when "
                              "building your dataset.", stacklevel=3)
                return
            yield step, unpack(element)


class PyDatasetAdapter:
    """A ``keras.utils.PyDataset``: batch ``i`` is ``x[i]``; ``on_epoch_end`` after each epoch."""

    def __init__(self, dataset, steps=None):
        self.dataset = dataset
        self.steps = steps if steps is not None else len(dataset)

    def first(self):
        return unpack(self.dataset[0])

    def epoch(self, shuffle=None):
        if hasattr(self.dataset, "on_epoch_begin"):
            self.dataset.on_epoch_begin()
        for step in range(min(self.steps, len(self.dataset))):
            yield step, unpack(self.dataset[step])
        self.dataset.on_epoch_end()


def _is_py_dataset(x):
    return (hasattr(x, "__getitem__") and hasattr(x, "__len__") and hasattr(x, "on_epoch_end")
            and not isinstance(x, (np.ndarray, list, tuple, dict)))


def adapter(x, y=None, sample_weight=None, batch_size=None, shuffle=False, steps=None,
            class_weights=None):
    """The adapter for ``fit``'s data: a dataset (then ``y`` and ``sample_weight`` must be None)
    or arrays."""
    if isinstance(x, Dataset):
        if y is not None:
            raise ValueError("When providing `x` as a tf.data.Dataset, `y` should not be passed. "
                             "Instead, the targets should be included as part of the Dataset `x`.")
        if sample_weight is not None:
            raise ValueError("`sample_weight` argument is not supported when using a dataset.")
        return DatasetAdapter(x, steps)
    if _is_py_dataset(x):
        if y is not None:
            raise ValueError("When providing `x` as a PyDataset, `y` should not be passed. Instead, the "
                             "targets should be included as part of the PyDataset.")
        return PyDatasetAdapter(x, steps)
    data = (arrays(x), arrays(y), arrays(sample_weight))
    if class_weights is not None:
        data = data[:2] + (class_weights(data[1], data[2]),)
    return ArrayAdapter(data, batch_size or 32, shuffle, steps)


__all__ = ["ArrayAdapter", "DatasetAdapter", "PyDatasetAdapter", "adapter", "unpack", "arrays", "num_samples"]
