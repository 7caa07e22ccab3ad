"""The transformations of one dataset: batching, mapping, shuffling, slicing, windows, folds.

A user function given to ``map``/``filter``/``take_while``/``reduce``/``scan`` is traced once
with ``tapeflow.function`` from the input's element spec (unknown dims stay unknown), as
``tf.data`` traces it into a graph: its Python side effects happen once, and each element then
runs the compiled program. Functions that return datasets (``flat_map``, ``interleave``, the
``reduce_func`` of ``group_by_window``) are called in Python per element, on tensors.
"""
import itertools

import numpy as np

from ..runtime.tensor import Tensor, convert_to_tensor
from ..tracer.function import TensorSpec
from ..tracer.function import function as _function
from . import structure as S
from ..errors import OpError
from .base import INFINITE, UNKNOWN, Dataset, DatasetSpec, ElementError, register
from .sources import ListDataset, _compatible_spec, _seed_sequence


def _count(value, what):
    return int(np.asarray(S.to_array(value)))


# -- a user function, traced once ------------------------------------------------------------

def _call_element(fn, element):
    """``fn(*element)`` for a plain tuple (as tf.data unpacks it), else ``fn(element)``."""
    return fn(*element) if type(element) is tuple else fn(element)


def _to_structure(value):
    """A function's result as an element: lists become tuples, as tf.data makes them."""
    if isinstance(value, list):
        return tuple(_to_structure(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_structure(v) for k, v in value.items()}
    if isinstance(value, tuple) and not hasattr(type(value), "_fields"):
        return tuple(_to_structure(v) for v in value)
    return value


class TracedFunction:
    """``fn`` on elements of ``spec``, compiled once; ``output_spec`` is its element spec."""

    def __init__(self, fn, spec, extra_specs=()):
        self._spec, self._fn = spec, fn
        specs = [s for group in (*extra_specs, spec) for s in S.flatten(group)]
        self._groups = list(extra_specs) + [spec]

        def flat(leaves):
            it = iter(leaves)
            parts = [S.pack(group, [next(it) for _ in S.flatten(group)]) for group in self._groups]
            *extra, element = parts
            if extra:       # reduce/scan: fn(state, element), the element whole (TF 2.21)
                return _to_structure(fn(*extra, element))
            return _to_structure(_call_element(fn, element))
        flat.__name__ = getattr(fn, "__name__", "map_fn")
        self._compiled = _function(flat, input_signature=[specs])
        concrete = self._compiled.get_concrete_function()
        outputs = concrete.graph.outputs

        def spec_of(leaf):
            if hasattr(leaf, "index"):
                value = outputs[leaf.index]
                return TensorSpec(list(value.shape) if value.shape is not None else None, value.dtype)
            return S.spec_of(S.to_array(leaf.value))
        self.output_spec = S.map_leaves(spec_of, _to_structure(concrete.out_template))

    def __call__(self, element, *extra):
        leaves = [convert_to_tensor(a) for group in (*extra, element) for a in S.flatten(group)]
        out = _to_structure(self._compiled(leaves))
        return S.map_leaves(lambda t: np.asarray(t.numpy()) if isinstance(t, Tensor) or hasattr(t, "numpy")
                            else S.to_array(t), out)


# -- batching -------------------------------------------------------------------------------

def _gather(arrays, index):
    """Rows ``index`` of each array: a view for consecutive rows, else one gather."""
    index = np.asarray(index, dtype=np.int64)
    if index.size and index[-1] - index[0] == index.size - 1 and np.all(np.diff(index) == 1):
        rows = slice(int(index[0]), int(index[-1]) + 1)
        return S.map_leaves(lambda a: a[rows], arrays)
    return S.map_leaves(lambda a: np.take(a, index, axis=0), arrays)


def _chunks(iterator, size, drop_remainder):
    while True:
        chunk = list(itertools.islice(iterator, size))
        if not chunk or (drop_remainder and len(chunk) < size):
            return
        yield chunk


def _chunks_until_errors(iterator, size, drop_remainder):
    """Chunks as ``_chunks``, but an ``ElementError`` comes out in place of the chunk it
    interrupts, whose elements so far are dropped (tf.data's batch returns the error)."""
    chunk = []
    for element in iterator:
        if isinstance(element, ElementError):
            chunk = []
            yield element
            continue
        chunk.append(element)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk and not drop_remainder:
        yield chunk


def _stack(elements, template):
    columns = zip(*[S.flatten(e) for e in elements])
    return S.pack(template, [np.stack(c) for c in columns])


@register("batch")
class BatchDataset(Dataset):
    def __init__(self, input_dataset, batch_size, drop_remainder):
        self._input, self._size = input_dataset, _count(batch_size, "batch_size")
        if self._size <= 0:
            raise ValueError(f"Invalid `batch_size`: {self._size}; it must be positive.")
        self._drop = bool(drop_remainder)
        dim = self._size if self._drop else None
        super().__init__(S.map_leaves(lambda s: S.with_leading(s, dim), input_dataset.element_spec))

    def _cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        return n // self._size if self._drop else -(-n // self._size)

    def _iterate(self):
        plan = self._input.index_plan()
        if plan is not None:
            arrays, indices = plan
            for chunk in _chunks(indices(), self._size, self._drop):
                yield _gather(arrays, chunk)
            return
        template = self._input.element_spec
        if isinstance(self._input, MapDataset):
            # TF fuses map and batch: an element that fails fails its whole batch
            for chunk in _chunks(iter(self._input._elements()), self._size, self._drop):
                failed = next((e for e in chunk if isinstance(e, ElementError)), None)
                yield failed if failed is not None else _stack(chunk, template)
            return
        for chunk in _chunks_until_errors(iter(self._input._elements()), self._size, self._drop):
            yield chunk if isinstance(chunk, ElementError) else _stack(chunk, template)


def _pad_to(array, shape, value):
    if array.ndim == 0:
        return array                  # a scalar has nothing to pad
    pads = [(0, int(t) - n) for n, t in zip(array.shape, shape)]
    if any(p < 0 for _, p in pads):
        raise ValueError(f"Attempted to pad to a smaller size than the input element: "
                         f"{tuple(array.shape)} to {tuple(shape)}")
    return np.pad(array, pads, constant_values=value)


@register("padded_batch")
class PaddedBatchDataset(Dataset):
    """Batches whose components are padded (with ``padding_values``, 0 by default) to the
    largest in the batch, or to ``padded_shapes`` where it gives a size."""

    def __init__(self, input_dataset, batch_size, padded_shapes, padding_values, drop_remainder):
        self._input, self._size, self._drop = input_dataset, _count(batch_size, "batch_size"), bool(drop_remainder)
        spec = input_dataset.element_spec
        specs = S.flatten(spec)
        if padded_shapes is None:
            shapes = [S.spec_dims(s) for s in specs]
            if any(d is None for d in shapes):
                raise ValueError("You must provide `padded_shapes` argument because component has "
                                 "unknown rank.")
        else:
            shapes = _flatten_like(padded_shapes, spec)
            shapes = [None if s is None else [None if d is None or int(d) < 0 else int(d)
                                              for d in (s.as_list() if hasattr(s, "as_list") else s)]
                      for s in shapes]
        self._shapes = [[None for _ in s] if padded_shapes is None else s for s in shapes]
        if padding_values is None:
            self._values = [0 for _ in specs]
        else:
            values = _flatten_like(padding_values, spec) if isinstance(padding_values, (tuple, dict)) \
                else [padding_values] * len(specs)
            self._values = [np.asarray(S.to_array(v)).item() for v in values]
        dim = self._size if self._drop else None
        out = [TensorSpec([dim] + [p if p is not None else None for p in shape], s.dtype)
               for shape, s in zip(self._shapes, specs)]
        super().__init__(S.pack(spec, out))

    def _cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        return n // self._size if self._drop else -(-n // self._size)

    def _iterate(self):
        for chunk in _chunks_until_errors(iter(self._input._elements()), self._size, self._drop):
            if isinstance(chunk, ElementError):
                yield chunk
                continue
            columns = list(zip(*[S.flatten(e) for e in chunk]))
            out = []
            for column, shape, value in zip(columns, self._shapes, self._values):
                target = [p if p is not None else max(a.shape[i] for a in column)
                          for i, p in enumerate(shape)]
                out.append(np.stack([_pad_to(a, target, value) for a in column]))
            yield S.pack(self._element_spec, out)


def _flatten_like(value, spec):
    """``value`` in ``spec``'s structure, each leaf kept whole (a shape list is one leaf)."""
    if isinstance(spec, dict):
        return [x for k in sorted(spec) for x in _flatten_like(value[k], spec[k])]
    if isinstance(spec, tuple):
        return [x for v, s in zip(value, spec) for x in _flatten_like(v, s)]
    return [value]


@register("unbatch")
class UnbatchDataset(Dataset):
    def __init__(self, input_dataset):
        self._input = input_dataset
        super().__init__(S.map_leaves(S.without_leading, input_dataset.element_spec))

    def _cardinality(self):
        return INFINITE if self._input._cardinality() == INFINITE else UNKNOWN

    def _iterate(self):
        for element in self._input._elements():
            if isinstance(element, ElementError):
                yield element
                continue
            leaves = S.flatten(element)
            for k in range(leaves[0].shape[0]):
                yield S.pack(element, [a[k] for a in leaves])


@register("rebatch")
def _rebatch(input_dataset, batch_size, drop_remainder):
    return BatchDataset(UnbatchDataset(input_dataset), batch_size, drop_remainder)


# -- mapping and filtering -----------------------------------------------------------------

@register("map")
class MapDataset(Dataset):
    def __init__(self, input_dataset, map_func):
        self._input = input_dataset
        self._fn = TracedFunction(map_func, input_dataset.element_spec)
        super().__init__(self._fn.output_spec)

    def _cardinality(self):
        return self._input._cardinality()

    def _iterate(self):
        fn = self._fn
        for e in self._input._elements():
            if isinstance(e, ElementError):
                yield e
                continue
            try:
                out = fn(e)
            except OpError as error:        # this element fails; the next ones still run
                out = ElementError(error)
            yield out


class _Predicate:
    def __init__(self, predicate, spec):
        self._fn = TracedFunction(predicate, spec)
        out = self._fn.output_spec
        if not isinstance(out, TensorSpec) or out.dtype.name != "bool" or out.shape.rank != 0:
            raise ValueError(f"Invalid `predicate`. `predicate` must return a `tf.bool` scalar "
                             f"tensor, but its return type was {out}.")

    def __call__(self, element):
        return bool(self._fn(element))


@register("filter")
class FilterDataset(Dataset):
    def __init__(self, input_dataset, predicate):
        self._input, self._predicate = input_dataset, _Predicate(predicate, input_dataset.element_spec)
        super().__init__(input_dataset.element_spec)

    def _cardinality(self):
        return INFINITE if self._input._cardinality() == INFINITE else UNKNOWN

    def _iterate(self):
        for e in self._input._elements():
            if isinstance(e, ElementError):
                yield e
                continue
            try:
                keep = self._predicate(e)
            except OpError as error:
                yield ElementError(error)
                continue
            if keep:
                yield e


@register("take_while")
class TakeWhileDataset(Dataset):
    def __init__(self, input_dataset, predicate):
        self._input, self._predicate = input_dataset, _Predicate(predicate, input_dataset.element_spec)
        super().__init__(input_dataset.element_spec)

    def _iterate(self):
        return itertools.takewhile(self._predicate, self._input._elements())


def _example(spec):
    """A stand-in element of ``spec`` (unknown dims 1) to learn a dataset-returning function's
    element spec from, as TensorFlow learns it by tracing."""
    def leaf(s):
        if isinstance(s, DatasetSpec):
            return _register_window_example(s)
        dims = S.spec_dims(s)
        return np.zeros([1 if d is None else d for d in (dims or [])], s.dtype.as_numpy_dtype)
    return S.map_leaves(leaf, spec)


def _register_window_example(spec):
    return ListDataset([], spec.element_spec)


def _dataset_fn(fn, spec, what):
    out = _call_element(fn, S.to_tensors(_example(spec)))
    if not isinstance(out, Dataset):
        raise TypeError(f"The `{what}` function must return a `tf.data.Dataset` object.")
    return out.element_spec


@register("flat_map")
class FlatMapDataset(Dataset):
    def __init__(self, input_dataset, map_func):
        self._input, self._fn = input_dataset, map_func
        super().__init__(_dataset_fn(map_func, input_dataset.element_spec, "map_func"))

    def _iterate(self):
        for element in self._input._elements():
            if isinstance(element, ElementError):
                yield element
                continue
            yield from _call_element(self._fn, S.to_tensors(element))._elements()


@register("interleave")
class InterleaveDataset(Dataset):
    """``cycle_length`` inner datasets open at once, ``block_length`` elements from each in turn."""

    def __init__(self, input_dataset, map_func, cycle_length, block_length):
        self._input, self._fn = input_dataset, map_func
        self._cycle = None if cycle_length in (None, -1) else _count(cycle_length, "cycle_length")
        self._block = 1 if block_length is None else _count(block_length, "block_length")
        super().__init__(_dataset_fn(map_func, input_dataset.element_spec, "map_func"))

    def _iterate(self):
        outer = iter(self._input._elements())
        cycle = self._cycle or 8
        open_ = []
        for element in itertools.islice(outer, cycle):
            open_.append(iter(_call_element(self._fn, S.to_tensors(element))._elements()))
        k = 0
        while open_:
            k %= len(open_)
            it, exhausted = open_[k], False
            for _ in range(self._block):
                item = next(it, None)
                if item is None:
                    exhausted = True
                    break
                yield item
            if exhausted:
                nxt = next(outer, None)
                if nxt is None:
                    open_.pop(k)
                    continue
                open_[k] = iter(_call_element(self._fn, S.to_tensors(nxt))._elements())
            k += 1


# -- order and counting --------------------------------------------------------------------

def _shuffled(items, buffer_size, rng):
    """TensorFlow's buffered shuffle: fill a buffer, emit a random entry, refill its place."""
    buffer = list(itertools.islice(items, buffer_size))
    for item in items:
        k = int(rng.integers(len(buffer)))
        yield buffer[k]
        buffer[k] = item
    rng.shuffle(buffer) if buffer else None
    yield from buffer


@register("shuffle")
class ShuffleDataset(Dataset):
    def __init__(self, input_dataset, buffer_size, seed, reshuffle_each_iteration):
        self._input, self._buffer = input_dataset, _count(buffer_size, "buffer_size")
        if self._buffer <= 0 and self._buffer != -1:
            raise ValueError(f"buffer_size must be greater than zero. Received: {self._buffer}")
        self._seed = _seed_sequence(seed)
        if self._seed is None:
            self._seed = [int(np.random.SeedSequence().entropy % (2 ** 63))]
            self._fresh = bool(reshuffle_each_iteration)
        else:
            self._fresh = False
        self._reshuffle = bool(reshuffle_each_iteration) if reshuffle_each_iteration is not None else True
        self._epoch = 0
        super().__init__(input_dataset.element_spec)

    def _cardinality(self):
        return self._input._cardinality()

    def _rng(self):
        seed = self._seed + [self._epoch] if self._reshuffle else self._seed
        self._epoch += 1
        return np.random.default_rng(seed)

    def _size(self):
        n = self._input._cardinality()
        return n if self._buffer == -1 and n >= 0 else max(self._buffer, 1)

    def index_plan(self):
        plan = self._input.index_plan()
        if plan is None:
            return None
        arrays, indices = plan
        return arrays, lambda: _shuffled(iter(indices()), self._size(), self._rng())

    def _iterate(self):
        return _shuffled(iter(self._input._elements()), self._size(), self._rng())


class _IndexTransform(Dataset):
    """A transformation of the element order only: it runs on indices when its input can."""

    def __init__(self, input_dataset):
        self._input = input_dataset
        super().__init__(input_dataset.element_spec)

    def _reorder(self, items_factory):
        raise NotImplementedError

    def index_plan(self):
        plan = self._input.index_plan()
        if plan is None:
            return None
        arrays, indices = plan
        return arrays, lambda: self._reorder(indices)

    def _iterate(self):
        return self._reorder(self._input._elements)


@register("repeat")
class RepeatDataset(_IndexTransform):
    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._times = -1 if count is None else _count(count, "count")

    def _cardinality(self):
        n = self._input._cardinality()
        if self._times < 0:
            return 0 if n == 0 else INFINITE
        return n * self._times if n >= 0 else n

    def _reorder(self, items_factory):
        epochs = itertools.count() if self._times < 0 else range(self._times)
        for _ in epochs:
            empty = True
            for item in items_factory():
                empty = False
                yield item
            if empty:
                return


def _counting_values(items, n, keep):
    """The first ``n`` items (``keep``) or the rest after them, counting only items that are not
    ``ElementError``s (tf.data's take and skip count elements, not errors, which pass through)."""
    seen = 0
    if keep and n == 0:
        return
    for item in items:
        if isinstance(item, ElementError):
            yield item
            continue
        if seen >= n:
            if not keep:
                yield item
                continue
            return
        seen += 1
        if keep:
            yield item
            if seen >= n:
                return


@register("take")
class TakeDataset(_IndexTransform):
    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._n = _count(count, "count")

    def _cardinality(self):
        n = self._input._cardinality()
        if self._n < 0:
            return n
        if n == INFINITE:
            return self._n
        return UNKNOWN if n == UNKNOWN else min(n, self._n)

    def _reorder(self, items_factory):
        if self._n < 0:
            return iter(items_factory())
        return _counting_values(items_factory(), self._n, keep=True)


@register("skip")
class SkipDataset(_IndexTransform):
    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._n = _count(count, "count")

    def _cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        return 0 if self._n < 0 else max(0, n - self._n)

    def _reorder(self, items_factory):
        if self._n < 0:
            return iter(())
        return _counting_values(items_factory(), self._n, keep=False)


@register("shard")
class ShardDataset(_IndexTransform):
    def __init__(self, input_dataset, num_shards, index):
        super().__init__(input_dataset)
        self._shards, self._index = _count(num_shards, "num_shards"), _count(index, "index")
        if self._shards <= 0:
            raise ValueError(f"num_shards must be > 0 (got {self._shards})")
        if not 0 <= self._index < self._shards:
            raise ValueError(f"index must be in [0, num_shards) (got {self._index})")

    def _cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        return n // self._shards + (1 if n % self._shards > self._index else 0)

    def _reorder(self, items_factory):
        return itertools.islice(items_factory(), self._index, None, self._shards)


@register("identity")
class _Identity(_IndexTransform):
    def _cardinality(self):
        return self._input._cardinality()

    def _reorder(self, items_factory):
        return iter(items_factory())


@register("prefetch")
class PrefetchDataset(_Identity):
    pass


@register("cache")
class CacheDataset(Dataset):
    """The input's elements, kept in memory after the first complete iteration."""

    def __init__(self, input_dataset, filename):
        self._input, self._cached = input_dataset, None
        super().__init__(input_dataset.element_spec)

    def _cardinality(self):
        return self._input._cardinality()

    def _iterate(self):
        if self._cached is not None:
            yield from self._cached
            return
        seen = []
        for element in self._input._elements():
            seen.append(element)
            yield element
        self._cached = seen


@register("unique")
class UniqueDataset(Dataset):
    def __init__(self, input_dataset):
        spec = input_dataset.element_spec
        if not isinstance(spec, TensorSpec) or spec.shape.rank != 0 or not spec.dtype.is_integer:
            raise TypeError(f"Unique transformation only supports scalar elements of type int32, "
                            f"int64 or string. Received: {spec}")
        self._input = input_dataset
        super().__init__(spec)

    def _cardinality(self):
        return INFINITE if self._input._cardinality() == INFINITE else UNKNOWN

    def _iterate(self):
        seen = set()
        for e in self._input._elements():
            key = int(e)
            if key not in seen:
                seen.add(key)
                yield e


__all__ = ["TracedFunction", "BatchDataset", "PaddedBatchDataset", "UnbatchDataset", "MapDataset",
           "FilterDataset", "TakeWhileDataset", "FlatMapDataset", "InterleaveDataset", "ShuffleDataset",
           "RepeatDataset", "TakeDataset", "SkipDataset", "ShardDataset", "CacheDataset", "UniqueDataset",
           "UNKNOWN", "_compatible_spec"]
