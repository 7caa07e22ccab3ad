"""``tf.TensorArraySpec`` and ``tf.type_spec_from_value``: the TypeSpec of a value.

The spec classes of other values live with them (``TensorSpec`` in tracer/function.py,
``IndexedSlicesSpec`` in ops/indexed_slices.py, ``DatasetSpec`` in data/base.py); this module
knows them all, to answer for any value.
"""
from __future__ import annotations

import numpy as np

from .data import Dataset, DatasetSpec
from .ir import dtypes as D
from .ops.indexed_slices import IndexedSlices
from .ops.tensor_array import TensorArray
from .runtime.tensor import Tensor, TensorShape, Variable, convert_to_tensor
from .runtime.type_spec import TypeSpec
from .tracer.function import TensorSpec


class TensorArraySpec(TypeSpec):
    """The type of a TensorArray: its element shape, dtype, ``dynamic_size`` and
    ``infer_shape``.

    >>> tf.TensorArraySpec([2], tf.int32)
    TensorArraySpec(TensorShape([2]), tf.int32, False, True)
    >>> tf.type_spec_from_value(tf.TensorArray(tf.float32, size=2, element_shape=[3]))
    TensorArraySpec(TensorShape([3]), tf.float32, False, True)
    """

    __slots__ = ("_element_shape", "_dtype", "_dynamic_size", "_infer_shape")

    def __init__(self, element_shape=None, dtype=D.float32, dynamic_size=False,
                 infer_shape=True) -> None:
        self._element_shape = TensorShape(element_shape)
        self._dtype = D.as_dtype(dtype)
        self._dynamic_size, self._infer_shape = bool(dynamic_size), bool(infer_shape)

    @property
    def value_type(self):
        return TensorArray

    def _serialize(self):
        return (self._element_shape, self._dtype, self._dynamic_size, self._infer_shape)

    @staticmethod
    def from_value(value):
        return TensorArraySpec(value.element_shape, value.dtype, value.dynamic_size,
                               value._infer_shape)


def type_spec_from_value(value) -> TypeSpec:
    """The TypeSpec of ``value``: a ``TensorSpec`` for a tensor or anything convertible to one
    (NumPy arrays, Python numbers and lists), an ``IndexedSlicesSpec``, a ``TensorArraySpec``,
    a ``tf.data.DatasetSpec``; a TypeError for anything else.

    >>> tf.type_spec_from_value(tf.constant([1.0, 2.0]))
    TensorSpec(shape=(2,), dtype=tf.float32, name=None)
    >>> tf.type_spec_from_value([1, 2])
    TensorSpec(shape=(2,), dtype=tf.int32, name=None)
    """
    if isinstance(value, IndexedSlices):
        return value._type_spec
    if isinstance(value, TensorArray):
        return TensorArraySpec.from_value(value)
    if isinstance(value, Dataset):
        return DatasetSpec.from_value(value)
    if isinstance(value, Variable):    # TensorFlow's VariableSpec is not a tapeflow name
        raise TypeError(f"Could not build a TypeSpec for {value!r}: tapeflow has no "
                        f"VariableSpec (TensorFlow's type of a variable); read it for a "
                        f"TensorSpec.")
    if isinstance(value, Tensor) or hasattr(value, "aval"):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, (bool, int, float, list, tuple, np.ndarray, np.generic)):
        try:
            t = convert_to_tensor(value)
        except (TypeError, ValueError):
            t = None
        if t is not None:
            return TensorSpec(t.shape, t.dtype)
    raise TypeError(f"Could not build a TypeSpec for {value!r} of unsupported type "
                    f"{type(value)}.")


__all__ = ["TensorArraySpec", "type_spec_from_value"]
