"""``tapeflow.dtypes``: the dtypes, ``as_dtype``, ``cast``, ``saturate_cast`` and ``DType``
(TensorFlow's ``tf.dtypes``)."""
from .ir.dtypes import (DType, as_dtype, bool_ as bool, float16, float32, float64, int8,  # noqa: F401
                        int16, int32, int64, uint8, uint16, uint32, uint64)
from .ops.math import cast  # noqa: F401
from .ops.saturate_cast import saturate_cast  # noqa: F401

double, half = float64, float16

__all__ = ["DType", "as_dtype", "cast", "saturate_cast", "bool", "float16", "half", "float32",
           "float64", "double", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64"]
