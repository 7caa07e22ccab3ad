"""ParallelConcat (TensorFlow's op behind ``tf.parallel_stack``): inputs of shape [1, ...]
concatenated along axis 0 into the fully defined ``shape``."""
from ...errors import InferError
from ..opdef import AVal, check_same_dtype, defop


def _parallel_concat(avals, shape):
    if not avals:
        raise InferError("ParallelConcat needs at least one input")
    check_same_dtype(avals)
    if any(d is None for d in shape):
        raise InferError("shape attr must be fully defined.")
    first = avals[0].shape
    for a in avals:
        if not a.shape or a.shape[0] not in (1, None):
            raise InferError(f"Each input must have a first dimension of 1, got {list(a.shape)}")
        if len(a.shape) != len(first):
            raise InferError(f"Shapes must be equal rank, but are {len(a.shape)} and {len(first)}")
        for j, (d, e) in enumerate(zip(a.shape, first)):
            if d is not None and e is not None and d != e:
                raise InferError(f"Dimension {j} in both shapes must be equal, but are {d} and {e}")
    if tuple(shape) != (len(avals),) + tuple(first[1:]) and None not in first:
        raise InferError(f"shape {list(shape)} does not hold {len(avals)} inputs of shape "
                         f"{list(first)}")
    return AVal(tuple(shape), avals[0].dtype)


defop("ParallelConcat", _parallel_concat, arity=None, attrs={"shape": "shape"}, moves_data=True)
