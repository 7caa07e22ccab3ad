"""Transformations that see many elements at once: windows, groups by key, and folds
(``reduce``, ``scan``) whose state runs through a function traced once."""
import numpy as np

from ..ir import dtypes as D
from ..ops import math as M
from ..runtime.tensor import convert_to_tensor
from ..tracer.function import TensorSpec
from . import structure as S
from ..tracer.context import current as _current_trace
from .base import BUILD, TRACED, UNKNOWN, Dataset, DatasetSpec, ElementError, checked, register
from .sources import ListDataset
from .transforms import PaddedBatchDataset, TracedFunction, _count


def _slices(elements, spec):
    """A dataset per component of a window's elements (``tf.data``'s nested windows)."""
    columns = list(zip(*[S.flatten(e) for e in elements]))
    return S.pack(spec, [ListDataset(c, s) for c, s in zip(columns, S.flatten(spec))])


@register("window")
class WindowDataset(Dataset):
    """Windows of ``size`` elements (every ``stride``-th), starting every ``shift``; each is a
    structure of datasets, one per component."""

    def __init__(self, input_dataset, size, shift, stride, drop_remainder):
        self._input = input_dataset
        self._size = _count(size, "size")
        self._shift = self._size if shift is None else _count(shift, "shift")
        self._stride = _count(stride, "stride")
        if min(self._size, self._shift, self._stride) <= 0:
            raise ValueError("`size`, `shift` and `stride` must be positive.")
        self._drop = bool(drop_remainder)
        super().__init__(S.map_leaves(lambda s: DatasetSpec(s), input_dataset.element_spec))

    def _cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        span = (self._size - 1) * self._stride + 1
        if self._drop:
            return 0 if n < span else (n - span) // self._shift + 1
        return -(-n // self._shift)

    def _iterate(self):
        span = (self._size - 1) * self._stride + 1
        buffer, start = [], 0
        for element in self._input._elements():
            buffer.append(element)
            while len(buffer) >= span:
                yield _slices(buffer[:span:self._stride], self._input.element_spec)
                del buffer[:self._shift]
                start += self._shift
        while buffer and not self._drop:
            yield _slices(buffer[:span:self._stride], self._input.element_spec)
            del buffer[:self._shift]


def _state_specs(state):
    return S.map_leaves(lambda a: TensorSpec(list(a.shape), D.as_dtype(a.dtype)), state)


def _fold_function(fn, state, spec):
    """``fn(state, *element)`` traced once for the state's shapes (its dims relaxed to None
    where a first step changes them)."""
    traced = TracedFunction(fn, spec, extra_specs=(_state_specs(state),))
    return traced


def _check_state(old, new, what):
    old_l, new_l = S.flatten(old), S.flatten(new)
    if len(old_l) != len(new_l) or any(a.dtype != b.dtype for a, b in zip(old_l, new_l)):
        raise TypeError(f"The element types for the new state must match the initial state. Expected "
                        f"{[a.dtype.name for a in old_l]}; got {[b.dtype.name for b in new_l]}.")


def reduce_dataset(dataset, initial_state, reduce_func):
    if _current_trace() is not None:        # inside a function: one loop (traced.py)
        out = TRACED["reduce"](dataset, initial_state, reduce_func)
        if out is not None:
            return out
    state = S.to_arrays(initial_state)
    traced = _fold_function(reduce_func, state, dataset.element_spec)
    for element in dataset._elements():
        new = traced(checked(element), state)
        _check_state(state, new, "reduce")
        if any(a.shape != b.shape for a, b in zip(S.flatten(state), S.flatten(new))):
            traced = _fold_function(reduce_func, new, dataset.element_spec)
        state = new
    return S.to_tensors(state)


BUILD["reduce"] = reduce_dataset


@register("scan")
class ScanDataset(Dataset):
    """``(state, output) = scan_func(state, element)`` per element; the outputs are the elements."""

    def __init__(self, input_dataset, initial_state, scan_func):
        self._input, self._fn = input_dataset, scan_func
        self._initial = S.to_arrays(initial_state)
        self._traced = _fold_function(scan_func, self._initial, input_dataset.element_spec)
        out = self._traced.output_spec
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError("The scan function must return a pair comprising the new state and the "
                            "output value.")
        super().__init__(out[1])

    def _cardinality(self):
        return self._input._cardinality()

    def _iterate(self):
        state, traced = self._initial, self._traced
        for element in self._input._elements():
            if isinstance(element, ElementError):       # the state stays; the error goes on
                yield element
                continue
            new, output = traced(element, state)
            _check_state(state, new, "scan")
            state = new
            yield output


@register("group_by_window")
class GroupByWindowDataset(Dataset):
    """Elements grouped by ``key_func``; a group of ``window_size`` (or at the end, any left in
    the order their keys first appeared) goes through ``reduce_func(key, window_dataset)``."""

    def __init__(self, input_dataset, key_func, reduce_func, window_size, window_size_func):
        if (window_size is None) == (window_size_func is None):
            raise ValueError("Either the `window_size` argument or the `window_size_func` argument "
                             "must be specified.")
        self._input = input_dataset
        self._key = TracedFunction(key_func, input_dataset.element_spec)
        self._reduce_func = reduce_func
        self._window_size = window_size
        self._window_size_func = window_size_func
        spec = input_dataset.element_spec
        example = ListDataset([], spec)
        out = reduce_func(convert_to_tensor(np.int64(0)), example)
        if not isinstance(out, Dataset):
            raise TypeError("`reduce_func` must return a `tf.data.Dataset` object.")
        super().__init__(out.element_spec)

    def _cardinality(self):
        return UNKNOWN

    def _size_for(self, key):
        if self._window_size is not None:
            return _count(self._window_size, "window_size")
        return int(np.asarray(self._window_size_func(convert_to_tensor(np.int64(key)))))

    def _flush(self, key, elements):
        window = _as_dataset(elements, self._input.element_spec)
        return self._reduce_func(convert_to_tensor(np.int64(key)), window)._elements()

    def _iterate(self):
        groups = {}
        for element in self._input._elements():
            key = int(self._key(element))
            group = groups.setdefault(key, [])
            group.append(element)
            if len(group) >= self._size_for(key):
                del groups[key]
                yield from self._flush(key, group)
        for key, group in groups.items():
            yield from self._flush(key, group)


def _as_dataset(elements, spec):
    return ListDataset(elements, spec)


@register("bucket_by_sequence_length")
def bucket_by_sequence_length(dataset, element_length_func, bucket_boundaries, bucket_batch_sizes,
                              padded_shapes, padding_values, pad_to_bucket_boundary, no_padding,
                              drop_remainder):
    """Batches of elements of similar length: bucket ``i`` holds lengths in
    ``[boundaries[i-1], boundaries[i])`` and batches ``bucket_batch_sizes[i]`` of them, padded."""
    boundaries = [int(b) for b in bucket_boundaries]
    sizes = [int(b) for b in bucket_batch_sizes]
    if len(sizes) != len(boundaries) + 1:
        raise ValueError(f"`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` but "
                         f"`len(bucket_batch_sizes)={len(sizes)}` and "
                         f"`len(bucket_boundaries)={len(boundaries)}`.")
    edges = [0] + boundaries + [np.iinfo(np.int32).max]

    def key(*element):
        length = element_length_func(*element)
        bucket = convert_to_tensor(np.int64(0))
        for b in boundaries:
            bucket = M.add(bucket, M.cast(M.greater_equal(M.cast(length, "int64"), b), "int64"))
        return bucket

    def reduce(bucket, window):
        k = int(bucket)
        if no_padding:
            return window.batch(sizes[k], drop_remainder=drop_remainder)
        shapes = padded_shapes
        if pad_to_bucket_boundary:
            if k == len(boundaries):
                raise ValueError("When pad_to_bucket_boundary=True, elements must have length < "
                                 "max(bucket_boundaries).")
            shapes = S.map_leaves(lambda s: [edges[k + 1] - 1] + [None] * (len(S.spec_dims(s)) - 1),
                                  window.element_spec)
        return PaddedBatchDataset(window, sizes[k], shapes, padding_values, drop_remainder)

    return BUILD["group_by_window"](dataset, key, reduce, None, lambda k: sizes[int(k)])


__all__ = ["WindowDataset", "ScanDataset", "GroupByWindowDataset", "reduce_dataset",
           "bucket_by_sequence_length"]
