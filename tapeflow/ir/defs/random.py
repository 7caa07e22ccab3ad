"""Stateless random ops, TensorFlow's V2 op names: values that are a function of a Philox key
and counter alone, TensorFlow's values bit for bit (runtime/philox.py).

``StatelessRandomGetKeyCounter(seed)``: the key (uint64[1]) and counter (uint64[2]) of an
int32/int64 seed of 2, as TensorFlow scrambles it. ``StatelessRandomUniformV2`` /
``StatelessRandomNormalV2`` / ``StatelessTruncatedNormalV2(key, counter)``: floats;
``StatelessRandomUniformIntV2(key, counter, minval, maxval)``: ints in [minval, maxval);
``StatelessRandomUniformFullIntV2(key, counter)``: every bit pattern of the int dtype. Key
and counter may be int64 too (a ``tf.random.Generator``'s state): their bits count. The
output shape is static (``shape``). Pure: the same key and counter give the same values.
"""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import FLOATS, AVal, defop

_WORDS = (D.uint64, D.int64)


def _get_key_counter(avals):
    (seed,) = avals
    if seed.dtype not in (D.int32, D.int64):
        raise InferError(f"Value for attr 'Tseed' of {seed.dtype.name} is not in the list of "
                         f"allowed values: int32, int64")
    if tuple(seed.shape) != (2,):
        raise InferError(f"seed must have shape [2], not {list(seed.shape)}")
    return AVal((1,), D.uint64), AVal((2,), D.uint64)


def _key_counter(key, counter):
    if key.dtype not in _WORDS or counter.dtype not in _WORDS:
        raise InferError(f"key and counter must be uint64 (or int64), got {key.dtype.name} and "
                         f"{counter.dtype.name}")
    if tuple(key.shape) != (1,) or tuple(counter.shape) != (2,):
        raise InferError(f"key must have shape [1] and counter [2] (Philox), got "
                         f"{list(key.shape)} and {list(counter.shape)}")


def _floats(avals, shape, dtype):
    _key_counter(*avals)
    if dtype not in FLOATS:
        raise InferError(f"dtype must be a floating type, got {dtype.name}")
    return AVal(tuple(shape), dtype)


def _uniform_int(avals, shape):
    key, counter, lo, hi = avals
    _key_counter(key, counter)
    if lo.dtype not in (D.int32, D.int64) or hi.dtype != lo.dtype:
        raise InferError(f"minval and maxval must be int32 or int64 of one dtype, got "
                         f"{lo.dtype.name} and {hi.dtype.name}")
    if lo.shape != () or hi.shape != ():
        raise InferError("minval and maxval must be scalars")
    return AVal(tuple(shape), lo.dtype)


def _full_int(avals, shape, dtype):
    _key_counter(*avals)
    if dtype not in (D.int32, D.int64, D.uint32, D.uint64):
        raise InferError(f"dtype must be int32, int64, uint32 or uint64, got {dtype.name}")
    return AVal(tuple(shape), dtype)


defop("StatelessRandomGetKeyCounter", _get_key_counter, multi_output=True)
for _name in ("StatelessRandomUniformV2", "StatelessRandomNormalV2",
              "StatelessTruncatedNormalV2"):
    defop(_name, _floats, arity=2, attrs={"shape": "ints", "dtype": "dtype"})
defop("StatelessRandomUniformIntV2", _uniform_int, arity=4, attrs={"shape": "ints"})
defop("StatelessRandomUniformFullIntV2", _full_int, arity=2,
      attrs={"shape": "ints", "dtype": "dtype"})
