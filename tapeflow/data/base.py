"""``tf.data.Dataset``: the public class, its iterators, and the table its methods build from.

A dataset is a recipe: each iteration (``iter(ds)``, a ``for`` loop, an epoch of ``fit``) runs
it afresh, as in TensorFlow (so ``shuffle`` reshuffles per iteration). Every dataset knows its
``element_spec`` and its cardinality without running. The transformations live in sources.py
and transforms.py, which register their classes into ``BUILD``; the methods here only look
them up, so this module imports neither.

A dataset of in-memory arrays (``from_tensor_slices``, then ``shuffle``/``take``/``skip``/
``repeat``/``shard``) also runs as a stream of row *indices* into those arrays (``index_plan``),
so ``batch`` makes each batch with one slice (a view, when the rows are consecutive) or one
gather, never a copy of the whole data.
"""
import numpy as np

from ..errors import InvalidArgumentError, OutOfRangeError
from ..ir import dtypes as D
from ..runtime.tensor import convert_to_tensor
from ..tracer.context import current as _current_trace
from . import structure as S

INFINITE = -1
UNKNOWN = -2
AUTOTUNE = -1

BUILD = {}  # method name -> the class (or function) that makes that dataset; filled by sources/transforms
TRACED = {}  # "loop", "iterator_loop", "next" -> traced.py's functions for use inside a function


def _build(name, *args, **kwargs):
    return BUILD[name](*args, **kwargs)


def register(name):
    """A class decorator (sources.py, transforms.py, windows.py): ``BUILD[name]`` makes the
    dataset of method ``name``."""
    def deco(obj):
        BUILD[name] = obj
        return obj
    return deco


class ElementError:
    """An element whose computation raised an op error (a ``map`` function's
    ``check_numerics``, say). It travels down the pipeline in the element's place, as
    ``tf.data`` returns an error status for that one element: the iterator that meets it raises
    the error and can go on to the next element, and ``ignore_errors`` drops it. A batch with
    one dropped whole (TF fuses ``map`` and ``batch``, which fails the batch), and ``take``/``skip``
    count only elements that are not errors."""

    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error


def checked(element):
    """``element``, or the error it stands for raised."""
    if isinstance(element, ElementError):
        raise element.error
    return element


class Dataset:
    """A sequence of elements, each a structure of tensors; made from data by the ``from_*``
    and ``range`` class methods, transformed by the others.

    >>> ds = tf.data.Dataset.from_tensor_slices([1, 2, 3, 4, 5]).map(lambda x: x * 2).batch(2)
    >>> [b.tolist() for b in ds.as_numpy_iterator()]
    [[2, 4], [6, 8], [10]]
    """

    def __init__(self, element_spec):
        self._element_spec = element_spec
        self._options = None

    # -- what a subclass provides -------------------------------------------------------
    def _iterate(self):
        """A fresh generator of elements (structures of NumPy arrays)."""
        raise NotImplementedError

    def _cardinality(self):
        return UNKNOWN

    def index_plan(self):
        """``(arrays, indices)`` when each element is ``arrays`` at one row index and
        ``indices()`` is a fresh iterator of those indices; else None."""
        return None

    def _inputs(self):
        return []

    # -- reading ------------------------------------------------------------------------
    @property
    def element_spec(self):
        return self._element_spec

    def cardinality(self):
        """The number of elements as an int64 tensor; -1 if infinite, -2 if unknown."""
        return convert_to_tensor(np.int64(self._cardinality()))

    def __len__(self):
        n = self._cardinality()
        if n == INFINITE:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self):
        return True

    def __iter__(self):
        return OwnedIterator(self)

    def _traced_for(self):
        """``for x in dataset`` inside a function: a TensorIter over elements fed per call, or
        None (unrolled while tracing); tracer/pyfor.py asks."""
        return TRACED["loop"](self)

    def as_numpy_iterator(self):
        """The elements as NumPy arrays (NumPy scalars for rank 0)."""
        return NumpyIterator(self)

    def _elements(self):
        plan = self.index_plan()
        if plan is not None:
            arrays, indices = plan
            return (S.map_leaves(lambda a, k=k: a[k], arrays) for k in indices())
        return self._iterate()

    def __repr__(self):
        return f"<_{type(self).__name__} element_spec={_spec_repr(self._element_spec)}>"

    # -- the transformations (built by the classes registered in BUILD) -----------------
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        return _build("from_tensor_slices", tensors)

    @staticmethod
    def from_tensors(tensors, name=None):
        return _build("from_tensors", tensors)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None,
                       output_signature=None, name=None):
        return _build("from_generator", generator, output_types, output_shapes, args, output_signature)

    @staticmethod
    def range(*args, **kwargs):
        return _build("range", *args, **kwargs)

    @staticmethod
    def zip(*args, datasets=None, name=None):
        return _build("zip", *args, datasets=datasets)

    @staticmethod
    def counter(start=0, step=1, dtype=D.int64, name=None):
        return _build("counter", start, step, dtype)

    @staticmethod
    def random(seed=None, rerandomize_each_iteration=None, name=None):
        return _build("random", seed, rerandomize_each_iteration)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        return _build("choose_from_datasets", datasets, choice_dataset, stop_on_empty_dataset)

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None):
        return _build("sample_from_datasets", datasets, weights, seed, stop_on_empty_dataset)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None,
              name=None):
        return _build("batch", self, batch_size, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False,
                     name=None):
        return _build("padded_batch", self, batch_size, padded_shapes, padding_values, drop_remainder)

    def unbatch(self, name=None):
        return _build("unbatch", self)

    def rebatch(self, batch_size, drop_remainder=False, name=None):
        return _build("rebatch", self, batch_size, drop_remainder)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, synchronous=None,
            use_unbounded_threadpool=False, name=None):
        return _build("map", self, map_func)

    def filter(self, predicate, name=None):
        return _build("filter", self, predicate)

    def flat_map(self, map_func, name=None):
        return _build("flat_map", self, map_func)

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                   deterministic=None, name=None):
        return _build("interleave", self, map_func, cycle_length, block_length)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        return _build("shuffle", self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count=None, name=None):
        return _build("repeat", self, count)

    def take(self, count, name=None):
        return _build("take", self, count)

    def skip(self, count, name=None):
        return _build("skip", self, count)

    def take_while(self, predicate, name=None):
        return _build("take_while", self, predicate)

    def shard(self, num_shards, index, name=None):
        return _build("shard", self, num_shards, index)

    def prefetch(self, buffer_size, name=None):
        """The same elements: with everything in memory there is nothing to fetch ahead (a
        dataset of its own all the same, as in TF, where it keeps ``map`` and ``batch`` apart)."""
        return _build("prefetch", self)

    def cache(self, filename="", name=None):
        return _build("cache", self, filename)

    def enumerate(self, start=0, name=None):
        return Dataset.zip(Dataset.counter(start), self)

    def concatenate(self, dataset, name=None):
        return _build("concatenate", self, dataset)

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        return _build("window", self, size, shift, stride, drop_remainder)

    def reduce(self, initial_state, reduce_func, name=None):
        return _build("reduce", self, initial_state, reduce_func)

    def scan(self, initial_state, scan_func, name=None):
        return _build("scan", self, initial_state, scan_func)

    def unique(self, name=None):
        return _build("unique", self)

    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None,
                        name=None):
        return _build("group_by_window", self, key_func, reduce_func, window_size, window_size_func)

    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries, bucket_batch_sizes,
                                  padded_shapes=None, padding_values=None, pad_to_bucket_boundary=False,
                                  no_padding=False, drop_remainder=False, name=None):
        return _build("bucket_by_sequence_length", self, element_length_func, bucket_boundaries,
                      bucket_batch_sizes, padded_shapes, padding_values, pad_to_bucket_boundary,
                      no_padding, drop_remainder)

    def ignore_errors(self, log_warning=False, name=None):
        return _build("ignore_errors", self, log_warning)

    def rejection_resample(self, class_func, target_dist, initial_dist=None, seed=None, name=None):
        return _build("rejection_resample", self, class_func, target_dist, initial_dist, seed)

    def get_single_element(self, name=None):
        it = iter(self._elements())
        first = next(it, None)
        if first is None:
            raise _invalid_argument("Dataset was empty.")
        if next(it, None) is not None:
            raise _invalid_argument("Dataset had more than one element.")
        return S.to_tensors(checked(first))

    def apply(self, transformation_func):
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError("`transformation_func` must return a `tf.data.Dataset` object.")
        return out

    def options(self):
        return self._options if self._options is not None else Options()

    def with_options(self, options, name=None):
        out = _build("identity", self)
        out._options = options
        return out


def _invalid_argument(message):
    return InvalidArgumentError(message)


def _spec_repr(spec):
    if isinstance(spec, dict):
        return "{" + ", ".join(f"{k!r}: {_spec_repr(v)}" for k, v in spec.items()) + "}"
    if isinstance(spec, tuple):
        inner = ", ".join(_spec_repr(v) for v in spec)
        return f"({inner},)" if len(spec) == 1 else f"({inner})"
    return repr(spec)


class Options:
    """``tf.data.Options``: accepted and kept; in-memory pipelines have nothing to tune."""

    def __init__(self):
        self.deterministic = None
        self.experimental_deterministic = None
        self.experimental_distribute = None
        self.experimental_optimization = None
        self.experimental_slack = False
        self.experimental_external_state_policy = None
        self.experimental_warm_start = False
        self.threading = ThreadingOptions()
        self.autotune = None

    def merge(self, options):
        out = Options()
        out.__dict__.update(self.__dict__)
        out.__dict__.update({k: v for k, v in options.__dict__.items() if v is not None})
        return out


class ThreadingOptions:
    def __init__(self):
        self.max_intra_op_parallelism = None
        self.private_threadpool_size = None


class OwnedIterator:
    """``iter(dataset)``: ``next`` gives the next element as tensors; ``get_next`` too, and
    ``get_next_as_optional`` is not provided."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._made_in_trace = _current_trace() is not None   # then fresh at each call (traced.py)
        self._it = iter(dataset._elements())

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def __iter__(self):
        return self

    def __next__(self):
        if _current_trace() is not None:
            element = TRACED["next"](self)      # inside a function: fed at each call
            if element is not None:
                return element
        return S.to_tensors(checked(next(self._it)))

    def _traced_for(self):
        """``for x in iterator`` inside a function (see Dataset._traced_for)."""
        return TRACED["iterator_loop"](self)

    def get_next(self):
        try:
            return next(self)
        except StopIteration:
            raise OutOfRangeError("End of sequence") from None


Iterator = OwnedIterator

class NumpyIterator:
    """``dataset.as_numpy_iterator()``."""

    def __init__(self, dataset):
        self._it = iter(dataset._elements())

    def __iter__(self):
        return self

    def __next__(self):
        return S.to_numpy(checked(next(self._it)))

    next = __next__


class DatasetSpec:
    """``tf.data.DatasetSpec``: the type of a dataset (its element spec)."""

    def __init__(self, element_spec, dataset_shape=()):
        self.element_spec, self.shape = element_spec, dataset_shape

    @staticmethod
    def from_value(value):
        return DatasetSpec(value.element_spec)

    def __eq__(self, other):
        return isinstance(other, DatasetSpec) and repr(self) == repr(other)

    def __hash__(self):
        return hash(repr(self))

    def __repr__(self):
        return f"DatasetSpec({_spec_repr(self.element_spec)}, TensorShape({list(self.shape)}))"


class IteratorSpec:
    """``tf.data.IteratorSpec``: the type of an iterator (its element spec)."""

    def __init__(self, element_spec):
        self.element_spec = element_spec

    @staticmethod
    def from_value(value):
        return IteratorSpec(value.element_spec)

    def __repr__(self):
        return f"IteratorSpec({_spec_repr(self.element_spec)})"


__all__ = ["Dataset", "ElementError", "checked", "Options", "ThreadingOptions", "OwnedIterator", "Iterator", "NumpyIterator",
           "DatasetSpec", "IteratorSpec", "AUTOTUNE", "INFINITE", "UNKNOWN", "BUILD", "TRACED"]
