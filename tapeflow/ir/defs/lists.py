"""The ops behind ``tf.TensorArray`` inside functions: a list held densely, or padded.

A TensorArray in a traced function is one tensor of shape ``[size, *element_shape]`` while its
elements share one static shape; ``TensorListSetItem`` writes one element,
``TensorListGetItem`` reads one at a tensor index (a Python index and ``gather`` are
``GatherV2``). TensorFlow's ops of the same names work on a variant list handle; here the
"list" is that dense tensor. Elements of different shapes are two tensors, values padded and
their shapes (below): every IR value keeps one static rank, so TensorFlow's variant list is
not a value type here; its TensorList rules live in the RaggedList ops' kernels.
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


# -- a TensorArray whose elements differ in shape: values padded, plus each element's shape --
#
# Inside a function such a list is two tensors: ``values`` [n, *P], each element written into
# the leading corner of its row (P: the largest size written per axis, zeros elsewhere), and
# ``shapes`` [n, 1 + r] int32, row k = [1, *shape of element k] once written, [0, ...] while
# not (TensorFlow's uninitialized element). A write pads both to the new sizes (CropOrPad)
# and sets the row (TensorListSetItem); the readers below crop each element back out, with
# TensorFlow's TensorList rules and errors for uninitialized elements and shape merges.
# ``element_shape`` and ``known_rank`` carry the TensorArray's element shape when the op was
# traced (``known_rank`` False: TensorShape(None)): the static shape of what the op returns,
# and what TensorFlow merges the elements' shapes into.


def _shape_vector(aval, n, what):
    check_dtype(aval, (D.int32, D.int64), what)
    if len(aval.shape) != 1 or aval.shape[0] not in (None, n):
        raise InferError(f"{what} must be a vector of {n} sizes, got a tensor of shape "
                         f"{list(aval.shape)}")


def _crop_or_pad(avals, shape, constant_values=0):
    """crop_or_pad(x, sizes int vector) -> [*shape]: x cut or padded (at the end of each axis,
    with ``constant_values``) to ``sizes``; ``shape`` holds the sizes known while tracing."""
    x, sizes = avals
    if len(shape) != len(x.shape):
        raise InferError(f"CropOrPad keeps the rank: {list(shape)} for an input of shape "
                         f"{list(x.shape)}")
    _shape_vector(sizes, len(shape), "CropOrPad sizes")
    return AVal(tuple(shape), x.dtype)


defop("CropOrPad", _crop_or_pad, arity=2, attrs={"shape": "shape", "constant_values": "number"},
      moves_data=True)


def _ragged(values, shapes):
    """The element rank of a (values, shapes) pair, checked."""
    if not values.shape:
        raise InferError("the values must have rank >= 1 (the elements along axis 0)")
    r = len(values.shape) - 1
    check_dtype(shapes, (D.int32,), "shapes")
    if len(shapes.shape) != 2 or shapes.shape[1] not in (None, 1 + r):
        raise InferError(f"shapes must be [n, {1 + r}] for elements of rank {r}, got "
                         f"{list(shapes.shape)}")
    return r


def _element(r, element_shape, known_rank):
    """The static shape of one element: the TensorArray's element shape, if its rank is known."""
    if not known_rank:
        return (None,) * r
    if len(element_shape) != r:
        raise InferError(f"element_shape {list(element_shape)} for elements of rank {r}")
    return tuple(element_shape)


def _index(aval, what="index"):
    check_dtype(aval, (D.int32, D.int64), what)
    if aval.shape:
        raise InferError(f"{what} must be a scalar, got shape {list(aval.shape)}")


_ES = {"element_shape": "shape", "known_rank": "bool"}


def _ragged_get_item(avals, element_shape, known_rank):
    """get_item(values, shapes, index) -> the element (zeros when uninitialized)."""
    values, shapes, index = avals
    _index(index)
    return AVal(_element(_ragged(values, shapes), element_shape, known_rank), values.dtype)


def _ragged_gather(avals, element_shape, known_rank):
    """gather(values, shapes, indices [k]) -> [k, *element]."""
    values, shapes, indices = avals
    check_dtype(indices, (D.int32, D.int64), "indices")
    if len(indices.shape) != 1:
        raise InferError(f"indices must be a vector, got shape {list(indices.shape)}")
    element = _element(_ragged(values, shapes), element_shape, known_rank)
    return AVal((indices.shape[0],) + element, values.dtype)


def _ragged_stack(avals, element_shape, known_rank):
    """stack(values, shapes) -> [n, *element]: every element, of one shape."""
    values, shapes = avals
    element = _element(_ragged(values, shapes), element_shape, known_rank)
    return AVal((values.shape[0],) + element, values.dtype)


def _ragged_concat(avals, element_shape, known_rank):
    """concat(values, shapes) -> the elements joined along their first axis."""
    values, shapes = avals
    element = _element(_ragged(values, shapes), element_shape, known_rank)
    return AVal((None,) + element[1:], values.dtype)


def _ragged_concat_grad(avals, element_shape, known_rank, shape):
    """concat_grad(g, shapes, sizes) -> [*shape]: ``g``'s rows back in their elements' places
    (zeros elsewhere): the adjoint of concat, ``sizes`` the values' shape."""
    g, shapes, sizes = avals
    if len(shape) < 2 or len(g.shape) != len(shape) - 1:
        raise InferError(f"ConcatGrad: {list(g.shape)} cannot come from values {list(shape)}")
    _ragged(AVal(tuple(shape), g.dtype), shapes)
    _shape_vector(sizes, len(shape), "RaggedListConcatGrad sizes")
    return AVal(tuple(shape), g.dtype)


defop("RaggedListGetItem", _ragged_get_item, arity=3, attrs=_ES, moves_data=True)
defop("RaggedListGather", _ragged_gather, arity=3, attrs=_ES, moves_data=True)
defop("RaggedListStack", _ragged_stack, arity=2, attrs=_ES, moves_data=True)
defop("RaggedListConcat", _ragged_concat, arity=2, attrs=_ES, moves_data=True)
defop("RaggedListConcatGrad", _ragged_concat_grad, arity=3, attrs={**_ES, "shape": "shape"},
      moves_data=True)
