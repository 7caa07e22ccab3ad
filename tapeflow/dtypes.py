"""``tapeflow.dtypes``: the dtypes, ``as_dtype``, ``cast`` and ``DType`` (TensorFlow's ``tf.dtypes``)."""
from .ir.dtypes import (DType, as_dtype, bool_ as bool, float16, float32, float64, int8,  # noqa: F401
                        int16, int32, int64, uint8, uint16, uint32, uint64)
from .ops.math import cast  # noqa: F401
from .runtime.tensor import Tensor

double, half = float64, float16


def saturate_cast(value, dtype, name=None) -> Tensor:
    """``value`` cast to ``dtype``, first clamped to the range ``dtype`` can hold (float limits
    rounded inward to a value of the input's dtype, as TensorFlow does).

    >>> tf.dtypes.saturate_cast(tf.constant([300.0, -5.0, 3.7]), tf.uint8)
    <tf.Tensor: shape=(3,), dtype=uint8, numpy=array([255,   0,   3], dtype=uint8)>
    """
    import numpy as np  # noqa  (kept local: this module only re-exports otherwise)
    from .ops import math as _m  # noqa  (ops are a layer below; kept with its one user)
    value = _m._tensor(value)
    dtype = as_dtype(dtype)
    src = value.dtype
    if src == dtype:
        return value

    def limits(dt):
        return (np.finfo(dt.np) if dt.is_floating else np.iinfo(dt.np))

    lo_out, hi_out = limits(dtype).min, limits(dtype).max
    lo_in, hi_in = limits(src).min, limits(src).max
    if lo_out > lo_in:
        lo = np.dtype(src.np).type(lo_out)
        if float(lo) < lo_out:
            lo = np.nextafter(lo, np.dtype(src.np).type(0))
        value = _m.maximum(value, _m.constant_like(lo, value))
    if hi_out < hi_in:
        hi = np.dtype(src.np).type(hi_out)
        if float(hi) > hi_out:
            hi = np.nextafter(hi, np.dtype(src.np).type(0))
        value = _m.minimum(value, _m.constant_like(hi, value))
    return _m.cast(value, dtype)

__all__ = ["DType", "as_dtype", "cast", "bool", "float16", "half", "float32", "float64", "double",
           "int8", "int16", "int32", "int64", "uint8", "saturate_cast", "uint16", "uint32", "uint64"]
