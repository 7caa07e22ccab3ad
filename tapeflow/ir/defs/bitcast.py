"""Bitcast (TensorFlow's op): the same bytes read as another dtype. A wider type eats the last
axis (its size must be the ratio), a narrower one adds a last axis of the ratio."""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import AVal, NUMERIC, defop

# TensorFlow's DataType numbers, which its error message prints
TF_ENUM = {D.float32: 1, D.float64: 2, D.int32: 3, D.uint8: 4, D.int16: 5, D.int8: 6,
           D.int64: 9, D.uint16: 17, D.float16: 19, D.uint32: 22, D.uint64: 23}


def _bitcast(avals, type):
    (x,) = avals
    out = D.as_dtype(type)
    for what, dt in (("T", x.dtype), ("type", out)):
        if dt not in NUMERIC:
            raise InferError(f"Value for attr '{what}' of {dt.name} is not in the list of allowed "
                             "values: bfloat16, half, float, double, int64, int32, uint8, uint16, "
                             "uint32, uint64, int8, int16, complex64, complex128")
    n_in, n_out = x.dtype.size, out.size
    if n_in == n_out:
        return AVal(x.shape, out)
    if n_in > n_out:
        return AVal(x.shape + (n_in // n_out,), out)
    if not x.shape or x.shape[-1] not in (None, n_out // n_in):
        raise InferError(f"Cannot bitcast from {TF_ENUM[x.dtype]} to {TF_ENUM[out]}")
    return AVal(x.shape[:-1], out)


defop("Bitcast", _bitcast, attrs={"type": "dtype"}, moves_data=True)
