"""Gradients of the TensorArray ops in functions (TensorFlow's list_grad.py).

Dense list: the written element's gradient is the incoming gradient's row ``index``; the
list's is the incoming gradient with that row zeroed (the old element was overwritten).
Padded list of elements of different shapes (``ops/ragged_list.py``): each reader's gradient
puts ``g`` back where the element sits in the padded values (CropOrPad, TensorListSetItem,
UnsortedSegmentSum, RaggedListConcatGrad), zeros elsewhere and for an uninitialized
element (its zeros depend on no value). All are linear in ``g`` and
written with ops that have gradients, so every order follows. Rules read indices and shapes
only, never the values.
"""
from ...ops import array as a
from ...ops import creation, dims
from ...ops import math as m
from ...ops.ragged_list import concat_grad, crop_or_pad
from ...ops.reduce import unsorted_segment_sum
from ...ops.tensor_array import tensor_list_set_item
from ...runtime.dispatch import apply
from ...runtime.registry import gradient


@gradient("TensorListSetItem", inputs=(1,))
def _set_item(op, g):
    index, item = op.inputs[1], op.in_avals[2]
    row = a.gather(g, index)        # read before the write: a loop then writes g in place
    zeros = creation.zeros(item.shape, item.dtype)
    return [tensor_list_set_item(g, index, zeros), None, row]


@gradient("TensorListGetItem", inputs=(1,))
def _get_item(op, g):
    """The list's gradient is zeros with ``g`` written at ``index`` (TensorFlow's)."""
    lst = op.in_avals[0]
    return [tensor_list_set_item(creation.zeros(lst.shape, lst.dtype), op.inputs[1], g), None]


def _tail(shape):
    """The sizes of one element of a list of ``shape`` (ints, or int32 scalars of the run)."""
    return [dims.dim(shape, k) for k in range(1, len(shape))]


def _es(op):
    return {"element_shape": op.attrs["element_shape"], "known_rank": op.attrs["known_rank"]}


@gradient("CropOrPad")
def _crop_or_pad(op, g):
    """The kept part back in place: ``g`` cut or zero-padded to the input's shape."""
    return [crop_or_pad(g, op.in_avals[0].shape), None]


def _written(shapes, indices, like):
    """1 where the element at each of ``indices`` (None: every one) is initialized, 0 where
    it reads as zeros that no value made; in ``like``'s dtype, shaped to scale its rows."""
    flags = m.cast(a.strided_slice(shapes, ((None, None, None), 0)), like.dtype)
    if indices is not None:
        flags = a.gather(flags, indices)
    lead = (-1,) if flags.shape else ()
    return a.reshape(flags, lead + (1,) * (len(like.shape) - len(lead)))


@gradient("RaggedListGetItem", inputs=(1, 2))
def _ragged_get_item(op, g):
    values = op.in_avals[0]
    row = crop_or_pad(g, _tail(values.shape))
    row = m.multiply(row, _written(op.inputs[1], op.inputs[2], row))
    zeros = creation.zeros(values.shape, values.dtype)
    return [tensor_list_set_item(zeros, op.inputs[2], row), None, None]


@gradient("RaggedListGather", inputs=(1, 2))
def _ragged_gather(op, g):
    """Each gathered row padded back and summed into its element (an index may repeat)."""
    values = op.in_avals[0]
    rows = crop_or_pad(g, [dims.dim(op.out_avals[0].shape, 0)] + _tail(values.shape))
    rows = m.multiply(rows, _written(op.inputs[1], op.inputs[2], rows))
    return [unsorted_segment_sum(rows, op.inputs[2], dims.dim(values.shape, 0)), None, None]


@gradient("RaggedListStack", inputs=(1,))
def _ragged_stack(op, g):
    rows = crop_or_pad(g, op.in_avals[0].shape)
    return [m.multiply(rows, _written(op.inputs[1], None, rows)), None]


@gradient("RaggedListConcat", inputs=(1,))
def _ragged_concat(op, g):
    return [concat_grad(g, op.inputs[1], op.in_avals[0].shape, _es(op)), None]


@gradient("RaggedListConcatGrad", inputs=(1,))
def _ragged_concat_grad(op, g):
    """The adjoint of the adjoint: the concat again."""
    return [apply("RaggedListConcat", [g, op.inputs[1]], _es(op)), None, None]
