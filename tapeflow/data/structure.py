"""Elements of a dataset: nested structures of NumPy arrays, and their ``TensorSpec``s.

Inside the pipeline an element is a structure (tuples, dicts, namedtuples) of NumPy arrays:
that is what slicing, stacking and shuffling work on without making tensors per row. It becomes
tapeflow tensors where the user sees it (iteration, ``map``'s function). As in ``tf.data``, a
Python *list* is one tensor (``from_tensor_slices([1., 2.])`` slices a vector), while tuples and
dicts are structure.
"""
import numpy as np

from .. import _nest
from ..ir import dtypes as D
from ..runtime.tensor import Tensor, TensorShape, Variable, convert_to_tensor
from ..tracer.function import TensorSpec


def _is_structure(x):
    return isinstance(x, (tuple, dict))


def _like(template, parts):
    """A dict (``parts`` a dict) or tuple (``parts`` a list) of ``template``'s own type: a dict
    subclass or namedtuple stays one."""
    kind = type(template)
    if isinstance(template, dict):
        return parts if kind is dict else kind(parts)
    return kind(*parts) if hasattr(kind, "_fields") else tuple(parts)


def map_leaves(fn, element):
    """``fn`` on each leaf; lists are leaves (tensors), tuples and dicts are structure."""
    if isinstance(element, dict):
        return _like(element, {k: map_leaves(fn, element[k]) for k in element})
    if isinstance(element, tuple):
        return _like(element, [map_leaves(fn, x) for x in element])
    return fn(element)


def flatten(element):
    if isinstance(element, dict):
        return [leaf for k in sorted(element, key=_nest._sort_key) for leaf in flatten(element[k])]
    if isinstance(element, tuple):
        return [leaf for x in element for leaf in flatten(x)]
    return [element]


def pack(template, leaves):
    it = iter(leaves)
    out = _pack(template, it)
    return out


def _pack(s, it):
    if isinstance(s, dict):
        vals = {k: _pack(s[k], it) for k in sorted(s, key=_nest._sort_key)}
        return _like(s, {k: vals[k] for k in s})
    if isinstance(s, tuple):
        return _like(s, [_pack(x, it) for x in s])
    return next(it)


def to_array(x):
    """A leaf as a NumPy array: arrays kept (no copy), tensors read, Python values converted
    with TensorFlow's dtypes (float -> float32, int -> int32)."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, Variable):
        return np.asarray(x.numpy())
    if isinstance(x, Tensor):
        return np.asarray(x.numpy())
    if hasattr(x, "aval"):
        raise TypeError("tapeflow's tf.data holds concrete values: a dataset cannot be built from a "
                        "symbolic tensor inside a `tf.function` (build it outside)")
    if isinstance(x, np.generic):
        return np.asarray(x)
    return np.asarray(convert_to_tensor(x).numpy())


def to_arrays(element):
    return map_leaves(to_array, element)


def to_tensors(element):
    return map_leaves(lambda a: convert_to_tensor(a) if isinstance(a, (np.ndarray, np.generic)) else a,
                      element)


def to_numpy(element):
    """What ``as_numpy_iterator`` gives: arrays, and NumPy scalars for rank 0."""
    return map_leaves(lambda a: a[()] if isinstance(a, np.ndarray) and a.ndim == 0 else a, element)


def spec_of(array, batch_unknown=False):
    shape = list(array.shape)
    return TensorSpec(shape, D.as_dtype(array.dtype))


def spec_structure(element):
    return map_leaves(spec_of, element)


def relax(spec, other):
    """The most specific spec compatible with both (dims that differ become None)."""
    s1, s2 = spec.shape, other.shape
    if s1.rank is None or s2.rank is None or s1.rank != s2.rank:
        return TensorSpec(None, spec.dtype)
    return TensorSpec([a if a == b else None for a, b in zip(s1, s2)], spec.dtype)


def spec_dims(spec):
    return None if spec.shape.rank is None else list(spec.shape)


def with_leading(spec, dim):
    dims = spec_dims(spec)
    return TensorSpec(None if dims is None else [dim] + dims, spec.dtype)


def without_leading(spec):
    dims = spec_dims(spec)
    if dims is not None and not dims:
        raise ValueError("Cannot unbatch an input with scalar components.")
    return TensorSpec(None if dims is None else dims[1:], spec.dtype)


def check_compatible(spec, array, what):
    dims = spec_dims(spec)
    if array.dtype != spec.dtype.as_numpy_dtype:
        raise TypeError(f"{what}: expected dtype {spec.dtype.name} but got {array.dtype}")
    if dims is not None and (len(dims) != array.ndim or any(
            d is not None and d != n for d, n in zip(dims, array.shape))):
        raise ValueError(f"{what}: `generator` yielded an element of shape {tuple(array.shape)} "
                         f"where an element of shape {tuple(dims)} was expected.")


__all__ = ["map_leaves", "flatten", "pack", "to_arrays", "to_tensors", "to_numpy", "spec_structure",
           "relax", "with_leading", "without_leading", "TensorShape"]
