"""tapeflow dtypes: thin, hashable wrappers over NumPy dtypes with TensorFlow's names."""
from __future__ import annotations

import numpy as np


class DType:
    """A tensor element type (``tapeflow.float32`` ...), comparable with NumPy dtypes.

    >>> tf.float32, tf.float32.name, tf.float32.is_floating
    (tf.float32, 'float32', True)
    >>> tf.as_dtype("int64").as_numpy_dtype
    <class 'numpy.int64'>
    """

    __slots__ = ("name", "np")

    def __init__(self, name: str) -> None:
        self.name = name
        self.np = np.dtype(name)

    @property
    def as_numpy_dtype(self):
        return self.np.type

    @property
    def is_floating(self):
        return self.np.kind == "f"

    @property
    def is_integer(self):
        return self.np.kind in "iu"

    @property
    def is_bool(self):
        return self.np.kind == "b"

    @property
    def base_dtype(self):
        return self

    @property
    def size(self):
        return self.np.itemsize

    @property
    def min(self):
        return np.finfo(self.np).min if self.is_floating else np.iinfo(self.np).min

    @property
    def max(self):
        return np.finfo(self.np).max if self.is_floating else np.iinfo(self.np).max

    def __repr__(self):
        return f"tf.{self.name}"

    def __str__(self):
        return f"<dtype: '{self.name}'>"  # as TensorFlow prints a dtype

    def __eq__(self, other):
        if other is self:
            return True
        try:
            return self.np == as_dtype(other).np
        except TypeError:
            return False

    def __hash__(self):
        return hash(self.name)

    def __reduce__(self):
        return as_dtype, (self.name,)


float16 = DType("float16")
float32 = DType("float32")
float64 = DType("float64")
int8 = DType("int8")
int16 = DType("int16")
int32 = DType("int32")
int64 = DType("int64")
uint8 = DType("uint8")
uint16 = DType("uint16")
uint32 = DType("uint32")
uint64 = DType("uint64")
bool_ = DType("bool")

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool_)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"half": float16, "float": float32, "double": float64})


def as_dtype(x) -> DType:
    """The tapeflow DType for a DType, NumPy dtype/type, or name; TypeError otherwise.

    >>> tf.as_dtype("float64")
    tf.float64
    >>> tf.as_dtype(np.int32)
    tf.int32
    """
    if isinstance(x, DType):
        return x
    if isinstance(x, str) and x in _BY_NAME:
        return _BY_NAME[x]
    if x is float:
        return float32
    if x is int:
        return int32
    if x is bool:
        return bool_
    try:
        d = _BY_NP.get(np.dtype(x))
    except TypeError:
        d = None
    if d is None:
        names = ", ".join(sorted(v.name for v in ALL))
        raise TypeError(f"Cannot convert {x!r} to a tapeflow dtype; expected one of {names}")
    return d
