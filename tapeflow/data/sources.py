"""Where datasets start: in-memory tensors, ranges, counters, generators, random numbers, and
the combinations of several datasets (zip, concatenate, choose/sample)."""
import itertools

import numpy as np

from .. import random as _random
from ..ir import dtypes as D
from ..tracer.function import TensorSpec
from . import structure as S
from .base import INFINITE, UNKNOWN, Dataset, ElementError, register


@register("from_tensor_slices")
class TensorSliceDataset(Dataset):
    """Row ``i`` of every array: views of the arrays, never copies."""

    def __init__(self, tensors):
        if isinstance(tensors, Dataset):
            raise TypeError("`from_tensor_slices` takes tensors, not a `tf.data.Dataset`")
        self._arrays = S.to_arrays(tensors)
        leaves = S.flatten(self._arrays)
        if not leaves:
            raise ValueError("Invalid `tensors`: the structure has no components.")
        for a in leaves:
            if a.ndim == 0:
                raise ValueError(f"Unbatching a tensor is only supported for rank >= 1, "
                                 f"but got a rank-0 tensor of shape {tuple(a.shape)}")
        sizes = {a.shape[0] for a in leaves}
        if len(sizes) != 1:
            raise ValueError(f"Dimensions {leaves[0].shape[0]} and "
                             f"{[s for s in sizes if s != leaves[0].shape[0]][0]} are not compatible")
        self._n = sizes.pop()
        super().__init__(S.map_leaves(lambda a: TensorSpec(list(a.shape[1:]), D.as_dtype(a.dtype)),
                                      self._arrays))

    def _cardinality(self):
        return self._n

    def index_plan(self):
        return self._arrays, lambda: iter(range(self._n))


@register("from_tensors")
class TensorDataset(Dataset):
    """One element: the tensors themselves."""

    def __init__(self, tensors):
        self._value = S.to_arrays(tensors)
        super().__init__(S.spec_structure(self._value))

    def _cardinality(self):
        return 1

    def _iterate(self):
        yield self._value


class ListDataset(Dataset):
    """Elements kept in a list (a window, a group of ``group_by_window``): shapes may differ."""

    def __init__(self, elements, element_spec):
        self._list = list(elements)
        super().__init__(element_spec)

    def _cardinality(self):
        return len(self._list)

    def _iterate(self):
        return iter(self._list)


@register("range")
class RangeDataset(Dataset):
    """``range(start, stop, step)`` as int64 scalars (or ``output_type``)."""

    def __init__(self, *args, output_type=D.int64, name=None):
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Invalid `args`. The length of `args` should be between 1 and 3 but "
                             f"was {len(args)}.")
        self._range = range(*[int(np.asarray(getattr(a, "numpy", lambda a=a: a)())) for a in args])
        self._dtype = D.as_dtype(output_type)
        super().__init__(TensorSpec([], self._dtype))

    def _cardinality(self):
        return len(self._range)

    def _iterate(self):
        np_dtype = self._dtype.as_numpy_dtype
        return (np.asarray(i, np_dtype) for i in self._range)


@register("counter")
class CounterDataset(Dataset):
    def __init__(self, start, step, dtype):
        self._start, self._step, self._dtype = int(start), int(step), D.as_dtype(dtype)
        super().__init__(TensorSpec([], self._dtype))

    def _cardinality(self):
        return INFINITE

    def _iterate(self):
        np_dtype = self._dtype.as_numpy_dtype
        return (np.asarray(i, np_dtype) for i in itertools.count(self._start, self._step))


def _signature_from_types(output_types, output_shapes):
    if output_shapes is None:
        output_shapes = S.map_leaves(lambda _: None, output_types)
    types = S.flatten(output_types)
    shapes = _flatten_shapes(output_shapes, output_types)
    specs = [TensorSpec(None if s is None else list(s), t) for t, s in zip(types, shapes)]
    return S.pack(output_types, specs)


def _flatten_shapes(shapes, types):
    """Shapes in the structure of ``types`` (a shape is itself a list or TensorShape)."""
    if isinstance(types, dict):
        return [s for k in sorted(types) for s in _flatten_shapes(shapes[k], types[k])]
    if isinstance(types, tuple):
        return [s for sh, t in zip(shapes, types) for s in _flatten_shapes(sh, t)]
    if shapes is not None and hasattr(shapes, "as_list"):
        shapes = shapes.as_list() if shapes.rank is not None else None
    return [shapes]


@register("from_generator")
class GeneratorDataset(Dataset):
    """Elements from calling ``generator(*args)`` afresh per iteration, checked against the spec."""

    def __init__(self, generator, output_types, output_shapes, args, output_signature):
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        if output_signature is not None:
            if output_types is not None or output_shapes is not None:
                raise TypeError("The `output_types` and `output_shapes` arguments can not be used "
                                "together with the `output_signature` argument.")
            spec = output_signature
        elif output_types is not None:
            spec = _signature_from_types(output_types, output_shapes)
        else:
            raise TypeError("Missing required argument: `output_signature`.")
        self._generator, self._args = generator, tuple(args or ())
        super().__init__(spec)

    def _iterate(self):
        specs = S.flatten(self._element_spec)
        args = [S.to_array(a) for a in self._args]
        for value in self._generator(*args):
            if not isinstance(value, tuple) and isinstance(self._element_spec, tuple):
                value = tuple(value)
            leaves = S.flatten(value) if isinstance(value, (tuple, dict)) else [value]
            if len(leaves) != len(specs):
                raise TypeError(f"`generator` yielded an element that did not match the expected "
                                f"structure. The expected structure was {self._element_spec}, but "
                                f"the yielded element was {value}.")
            arrays = []
            for leaf, spec in zip(leaves, specs):
                a = np.asarray(S.to_array(leaf), dtype=spec.dtype.as_numpy_dtype)
                S.check_compatible(spec, a, "from_generator")
                arrays.append(a)
            yield S.pack(self._element_spec, arrays)


def _seed_sequence(seed):
    """A NumPy seed from an op seed and the global seed (``tf.random.set_seed``), as TensorFlow
    pairs them; None when neither is set (then every iteration differs)."""
    global_seed = _random._global_seed
    if seed is None and global_seed is None:
        return None
    return [int(seed) if seed is not None else 0, global_seed if global_seed is not None else 87654321]


@register("random")
class RandomDataset(Dataset):
    """Infinite uniformly random int64 scalars in [0, 2**32), as TensorFlow's are."""

    def __init__(self, seed, rerandomize_each_iteration):
        self._seed = _seed_sequence(seed)
        self._rerandomize = bool(rerandomize_each_iteration)
        self._epoch = 0
        super().__init__(TensorSpec([], D.int64))

    def _cardinality(self):
        return INFINITE

    def _iterate(self):
        seed = self._seed + [self._epoch] if self._seed and self._rerandomize else self._seed
        self._epoch += 1
        rng = np.random.default_rng(seed)
        while True:
            yield np.asarray(rng.integers(0, 2 ** 32, dtype=np.int64))


@register("zip")
class ZipDataset(Dataset):
    """Elements of several datasets side by side, until the shortest ends."""

    def __init__(self, *args, datasets=None):
        if datasets is not None and args:
            raise TypeError("Both `*args` and `datasets` cannot be set.")
        if datasets is None:
            datasets = args[0] if len(args) == 1 else args
        self._datasets = datasets
        leaves = S.flatten(datasets)
        if not leaves or not all(isinstance(d, Dataset) for d in leaves):
            raise TypeError(f"Invalid `datasets`. `datasets` is expected to be a (nested) structure of "
                            f"`tf.data.Dataset` objects. Received: {datasets}")
        self._leaves = leaves
        super().__init__(S.map_leaves(lambda d: d.element_spec, datasets))

    def _cardinality(self):
        cards = [d._cardinality() for d in self._leaves]
        finite = [c for c in cards if c >= 0]
        if finite:
            return min(finite)
        return UNKNOWN if UNKNOWN in cards else INFINITE

    def _iterate(self):
        for parts in zip(*[d._elements() for d in self._leaves]):
            failed = next((p for p in parts if isinstance(p, ElementError)), None)
            yield failed if failed is not None else S.pack(self._datasets, parts)


def _compatible_spec(a, b, what):
    sa, sb = S.flatten(a), S.flatten(b)
    if len(sa) != len(sb) or any(x.dtype != y.dtype for x, y in zip(sa, sb)):
        raise TypeError(f"Incompatible dataset elements:\n  {a} vs.\n  {b}" if what is None else what)
    return S.pack(a, [S.relax(x, y) for x, y in zip(sa, sb)])


@register("concatenate")
class ConcatenateDataset(Dataset):
    def __init__(self, first, second):
        self._first, self._second = first, second
        super().__init__(_compatible_spec(first.element_spec, second.element_spec, None))

    def _cardinality(self):
        a, b = self._first._cardinality(), self._second._cardinality()
        if INFINITE in (a, b):
            return INFINITE
        return UNKNOWN if UNKNOWN in (a, b) else a + b

    def _iterate(self):
        yield from self._first._elements()
        yield from self._second._elements()


@register("choose_from_datasets")
class ChooseDataset(Dataset):
    """Element from ``datasets[choice]`` for each choice in ``choice_dataset`` (int64)."""

    def __init__(self, datasets, choice_dataset, stop_on_empty_dataset):
        datasets = list(datasets)
        if not datasets:
            raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
        spec = choice_dataset.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype != D.int64 or spec.shape.rank != 0:
            raise TypeError(f"Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar "
                            f"of `tf.int64` dtype. Received: {spec}.")
        out = datasets[0].element_spec
        for d in datasets[1:]:
            out = _compatible_spec(out, d.element_spec, None)
        self._datasets, self._choices, self._stop = datasets, choice_dataset, stop_on_empty_dataset
        super().__init__(out)

    def _iterate(self):
        its = [iter(d._elements()) for d in self._datasets]
        done = [False] * len(its)
        for choice in self._choices._elements():
            k = int(choice)
            if not 0 <= k < len(its):
                raise ValueError(f"Selector index out of range: {k}")
            if done[k]:
                continue
            item = next(its[k], None)
            if item is None:
                done[k] = True
                if self._stop or all(done):
                    return
                continue
            yield item


@register("sample_from_datasets")
class SampleDataset(Dataset):
    """An element from a dataset drawn at random with ``weights`` (uniform by default)."""

    def __init__(self, datasets, weights, seed, stop_on_empty_dataset):
        datasets = list(datasets)
        if not datasets:
            raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
        out = datasets[0].element_spec
        for d in datasets[1:]:
            out = _compatible_spec(out, d.element_spec, None)
        w = np.ones(len(datasets)) if weights is None else np.asarray(S.to_array(weights), np.float64)
        if w.shape != (len(datasets),):
            raise ValueError(f"Invalid `weights`. The shape of `weights` should be compatible with "
                             f"`[len(datasets)]` but is {w.shape}.")
        self._datasets, self._weights, self._stop = datasets, w, stop_on_empty_dataset
        self._seed = _seed_sequence(seed)
        self._epoch = 0
        super().__init__(out)

    def _iterate(self):
        rng = np.random.default_rng(None if self._seed is None else self._seed + [self._epoch])
        self._epoch += 1
        its = [iter(d._elements()) for d in self._datasets]
        w = self._weights.copy()
        while w.sum() > 0:
            k = int(rng.choice(len(its), p=w / w.sum()))
            item = next(its[k], None)
            if item is None:
                if self._stop:
                    return
                w[k] = 0
                continue
            yield item


__all__ = ["ListDataset", "TensorSliceDataset", "TensorDataset", "RangeDataset", "CounterDataset", "GeneratorDataset",
           "RandomDataset", "ZipDataset", "ConcatenateDataset", "ChooseDataset", "SampleDataset"]
