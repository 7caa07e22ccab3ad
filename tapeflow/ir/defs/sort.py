"""TopKV2 (the k largest entries of the last axis, and where they are) and InTopKV2.

``sort`` and ``argsort`` are TF's composites over TopKV2 (tapeflow/ops/sort.py).
"""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import AVal, FLOATS, INTS, NUMERIC, check_dtype, defop


def _top_k(avals, k, sorted=True, index_type=D.int32):
    (x,) = avals
    check_dtype(x, NUMERIC, "input")
    if not x.shape:
        raise InferError("input must have rank >= 1")
    if k < 0:
        raise InferError(f"Need k >= 0, got {k}")
    n = x.shape[-1]
    if n is not None and n < k:
        raise InferError(f"input must have at least k columns. Had {n}, needed {k}")
    shape = tuple(x.shape[:-1]) + (k,)
    return AVal(shape, x.dtype), AVal(shape, D.as_dtype(index_type))


defop("TopKV2", _top_k, attrs={"k": "int", "sorted": "bool", "index_type": "dtype"},
      multi_output=True)


def _in_top_k(avals, k):
    predictions, targets = avals
    check_dtype(predictions, (D.float32,) + FLOATS[2:], "predictions")
    check_dtype(targets, INTS, "targets")
    if len(predictions.shape) != 2 or len(targets.shape) != 1:
        raise InferError(f"predictions must be 2-D and targets 1-D, got shapes "
                         f"{list(predictions.shape)} and {list(targets.shape)}")
    return AVal((predictions.shape[0],), D.bool_)


defop("InTopKV2", _in_top_k, arity=2, attrs={"k": "int"})
