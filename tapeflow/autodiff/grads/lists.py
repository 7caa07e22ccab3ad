"""Gradient of TensorListSetItem (TensorFlow's list_grad.py, dense).

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
    zeros = creation.zeros(item.shape, item.dtype)
    return [tensor_list_set_item(g, index, zeros), None, a.gather(g, index)]
