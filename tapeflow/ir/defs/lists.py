"""The op behind ``tf.TensorArray`` inside functions: a list held densely.

A TensorArray in a traced function is one tensor of shape ``[size, *element_shape]`` (every
IR value has a static shape, so the size and the element shape are known when tracing);
``TensorListSetItem`` writes one element, ``TensorListGetItem`` reads one at a tensor index
(a Python index and ``gather`` are ``GatherV2``). TensorFlow's ops of the same names work on
a variant list handle; here the "list" is that dense tensor.
"""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import AVal, check_dtype, defop


def _set_item(avals):
    """set_item(list [n, *e], index int scalar, item [*e]) -> [n, *e]."""
    lst, index, item = avals
    if not lst.shape:
        raise InferError("the list must have rank >= 1 (its elements along axis 0)")
    check_dtype(index, (D.int32, D.int64), "index")
    if index.shape:
        raise InferError(f"index must be a scalar, got shape {list(index.shape)}")
    if item.dtype != lst.dtype:
        raise InferError(f"the list holds {lst.dtype.name} but the item is {item.dtype.name}")
    if tuple(item.shape) != tuple(lst.shape[1:]):
        raise InferError(f"Inconsistent shapes: saw {tuple(item.shape)} but expected "
                         f"{tuple(lst.shape[1:])}")
    return lst


defop("TensorListSetItem", _set_item, arity=3, moves_data=True)


def _get_item(avals):
    """get_item(list [n, *e], index int scalar) -> [*e]."""
    lst, index = avals
    if not lst.shape:
        raise InferError("the list must have rank >= 1 (its elements along axis 0)")
    check_dtype(index, (D.int32, D.int64), "index")
    if index.shape:
        raise InferError(f"index must be a scalar, got shape {list(index.shape)}")
    return AVal(tuple(lst.shape[1:]), lst.dtype)


defop("TensorListGetItem", _get_item, arity=2, moves_data=True)
