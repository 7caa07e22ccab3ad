"""Gradients of TensorListSetItem and TensorListGetItem (TensorFlow's list_grad.py, dense).

The written element's gradient is the incoming gradient's row ``index``; the list's is the
incoming gradient with that row zeroed (the old element was overwritten). Both are linear in
``g`` and written with the same ops, so every order follows. Reads the index only.
"""
from ...ops import array as a
from ...ops import creation
from ...ops.tensor_array import tensor_list_set_item
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
