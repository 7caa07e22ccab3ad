"""``tf.IndexedSlices``: a sparse gradient, rows ``values`` at ``indices`` of a dense tensor
of shape ``dense_shape``, as TensorFlow's gradient of ``gather`` returns it.

It is no Tensor: ops that take one densify it through ``convert_to_tensor`` (registered
below, TensorFlow's ``_indexed_slices_to_tensor``: a segment sum, duplicates added). The
tape keeps it sparse through the ops whose gradients pass it on and aggregates several the
way TensorFlow does (``aggregate``): all sparse -> concatenated, any dense -> summed dense.
"""
from __future__ import annotations

import numpy as np

from ..ir import dtypes as D
from ..ir.graph import constant_of
from ..runtime.conversions import register_tensor_conversion_function
from ..runtime.tensor import Tensor, convert_to_tensor, wrap
from ..runtime.tensor_shape import TensorShape
from ..runtime.type_spec import TypeSpec
from . import array, math, reduce
from . import dims as _dims


class IndexedSlices:
    """A sparse representation of a set of tensor slices at given indices.

    ``dense[indices[i], ...] += values[i, ...]``: the dense tensor it stands for has shape
    ``dense_shape``; rows not named are zero and a repeated index adds up. The gradient of
    ``tf.gather`` (and ``tf.nn.embedding_lookup``) along axis 0 is one.

    >>> v = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> with tf.GradientTape() as tape:
    ...     y = tf.reduce_sum(tf.gather(v, [2, 0]))
    >>> g = tape.gradient(y, v)
    >>> g.indices
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([2, 0], dtype=int32)>
    >>> tf.convert_to_tensor(g)
    <tf.Tensor: shape=(3, 2), dtype=float32, numpy=
    array([[1., 1.],
           [0., 0.],
           [1., 1.]], dtype=float32)>
    """

    __slots__ = ("_values", "_indices", "_dense_shape")

    def __init__(self, values, indices, dense_shape=None) -> None:
        self._values, self._indices, self._dense_shape = values, indices, dense_shape

    @property
    def values(self):
        return self._values

    @property
    def indices(self):
        return self._indices

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return _dtype_of(self._values)

    @property
    def shape(self) -> TensorShape:
        """The dense tensor's static shape (unknown rank without ``dense_shape``)."""
        return _static_dense_shape(self._dense_shape)

    def get_shape(self):
        return self.shape

    @property
    def device(self):
        return getattr(self._values, "device", "/job:localhost/replica:0/task:0/device:CPU:0")

    @property
    def name(self):
        return self._values.name

    @property
    def op(self):
        return self._values.op

    @property
    def graph(self):
        return self._values.graph

    def _with_values(self, fn):
        """The same slices with ``fn(values)``: how tf.identity, tf.cast, tf.stop_gradient and
        tf.math.scalar_mul treat an IndexedSlices (TensorFlow's dispatch for it)."""
        return IndexedSlices(fn(self._values), self._indices, self._dense_shape)

    def __neg__(self):
        return IndexedSlices(math.negative(self._values), self._indices, self._dense_shape)

    def __str__(self):
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"

    @property
    def _type_spec(self):
        values, indices = convert_to_tensor(self._values), convert_to_tensor(self._indices)
        shape = TensorShape([None] + list(values.shape)[1:])
        ds_dtype = None
        if self._dense_shape is not None:
            ds_dtype = convert_to_tensor(self._dense_shape).dtype
            shape = shape.merge_with(self.shape)
        return IndexedSlicesSpec(shape, values.dtype, indices.dtype, ds_dtype,
                                 indices.shape.merge_with(TensorShape(list(values.shape)[:1])))


class IndexedSlicesSpec(TypeSpec):
    """The type of an IndexedSlices: the dense shape and dtype, the dtypes of its indices and
    dense_shape, the shape of its indices.

    >>> tf.IndexedSlicesSpec([3, 2], tf.float32, tf.int32, tf.int32, [4])
    IndexedSlicesSpec(TensorShape([3, 2]), tf.float32, tf.int32, tf.int32, TensorShape([4]))
    """

    __slots__ = ("_shape", "_values_dtype", "_indices_dtype", "_dense_shape_dtype",
                 "_indices_shape")

    def __init__(self, shape=None, dtype=D.float32, indices_dtype=D.int64,
                 dense_shape_dtype=None, indices_shape=None) -> None:
        self._shape = TensorShape(shape)
        self._values_dtype = D.as_dtype(dtype)
        self._indices_dtype = D.as_dtype(indices_dtype)
        self._dense_shape_dtype = None if dense_shape_dtype is None else D.as_dtype(dense_shape_dtype)
        self._indices_shape = TensorShape([None] if indices_shape is None else indices_shape)

    @property
    def value_type(self):
        return IndexedSlices

    def _serialize(self):
        return (self._shape, self._values_dtype, self._indices_dtype, self._dense_shape_dtype,
                self._indices_shape)


def _dtype_of(x):
    return x.dtype if hasattr(x, "dtype") and isinstance(x.dtype, D.DType) else \
        convert_to_tensor(x).dtype


def _static_dense_shape(dense_shape):
    if dense_shape is None:
        return TensorShape(None)
    if isinstance(dense_shape, Tensor):
        return TensorShape([int(d) for d in np.asarray(dense_shape._value)])
    if hasattr(dense_shape, "aval"):      # a traced tensor: the sizes the graph says
        known = constant_of(getattr(getattr(dense_shape, "value", None), "node", None))
        if known is not None:
            return TensorShape([int(d) for d in known])
        return TensorShape(list(_dims.known_sizes(dense_shape)))
    return TensorShape([int(d) for d in np.asarray(dense_shape)])


def _rows(dense_shape):
    """The dense tensor's number of rows: an int, or a scalar tensor known at run time."""
    first = _static_dense_shape(dense_shape)[0] if dense_shape is not None else None
    if first is not None:
        return int(first)
    return array.strided_slice(dense_shape, (0,))


def to_dense(value: IndexedSlices, dtype=None, name=None, as_ref=False):
    """The dense tensor ``value`` stands for: ``unsorted_segment_sum(values, indices, rows)``."""
    if dtype is not None and D.as_dtype(dtype) != value.dtype:
        raise ValueError(f"Incompatible tensor conversion requested to `dtype` "
                         f"{D.as_dtype(dtype).name} for IndexedSlices ({value}) with dtype "
                         f"{value.dtype.name}")
    if value.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices for argument `value` "
                         f"without dense_shape: {value!s}")
    return reduce.unsorted_segment_sum(value.values, value.indices, _rows(value.dense_shape))


register_tensor_conversion_function(IndexedSlices, to_dense, priority=0)


def dense(g):
    """``g`` as a Tensor (densified if it is IndexedSlices); None and tensors as they are."""
    return to_dense(g) if isinstance(g, IndexedSlices) else g


def _int64_indices(slices):
    """TensorFlow's ``_as_indexed_slices_list``: if any indices are int64, all become int64."""
    if all(s.indices.dtype == D.int32 for s in slices):
        return slices
    return [s if s.indices.dtype == D.int64 else
            IndexedSlices(s.values, math.cast(s.indices, D.int64), s.dense_shape) for s in slices]


def aggregate(grads):
    """Several gradients of one tensor as one, TensorFlow's ``_aggregate_grads``: tensors alone
    are added; with any IndexedSlices, a dense one among them makes the sum dense, else the
    slices are concatenated (values and indices, in the order they arrived)."""
    grads = [g for g in grads if g is not None]
    if len(grads) == 1:
        return grads[0]
    if not any(isinstance(g, IndexedSlices) for g in grads) or \
            any(not isinstance(g, IndexedSlices) for g in grads):
        total = dense(grads[0])
        for g in grads[1:]:
            total = math.add(total, dense(g))
        return total
    grads = _int64_indices(grads)
    return IndexedSlices(array.concat([g.values for g in grads], 0),
                         array.concat([g.indices for g in grads], 0), grads[0].dense_shape)


def shape_tensor(shape):
    """A shape (ints, or a DynamicShape inside a trace) as an int32 tensor, the dense_shape
    TensorFlow's gather gradient carries."""
    if None not in tuple(shape):
        return wrap(np.asarray(tuple(shape), np.int32))
    return math.cast(shape.tensor, D.int32) if shape.tensor.dtype != D.int32 else shape.tensor


def gather_gradient(g, indices, indices_shape, params_shape):
    """TensorFlow's ``_GatherV2Grad`` for axis 0: the rows of ``g`` as slices at ``indices``."""
    n = _dims.num_elements(indices_shape)
    rest = [_dims.dim(params_shape, k) for k in range(1, len(params_shape))]
    values = array.reshape(g, _dims.pack([n] + rest))
    return IndexedSlices(values, array.reshape(indices, [-1]), shape_tensor(params_shape))


__all__ = ["IndexedSlices", "IndexedSlicesSpec", "to_dense", "dense", "aggregate", "gather_gradient"]
