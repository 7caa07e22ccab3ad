"""Batching rules of TensorListSetItem: a select on the one-hot of the index; of
TensorListGetItem: a gather along the list's axis (of the batched list or by the batched index).

Any of list, index and item may carry the batch; ``where(one_hot(index, n), item, list)``
covers every combination with existing ops (an index out of range writes nothing here,
where the op would raise).
"""
from ...ir import dtypes as D
from .registry import batching


@batching("TensorListSetItem")
def set_item(b, node, inputs, batched):
    lst, index, item = inputs
    lst_b, index_b, item_b = batched
    shape = tuple(node.inputs[0].aval.shape)             # [n, *e], unbatched
    n, rank = shape[0], len(shape)
    hot = b.emit1("OneHot", [index], {"depth": n, "on_value": True, "off_value": False,
                                      "axis": -1, "dtype": D.bool_})
    lead = (b.size,) if index_b else ()
    hot = b.reshape(hot, lead + (n,) + (1,) * (rank - 1))
    if item_b:
        item = b.reshape(item, (b.size, 1) + shape[1:])
    else:
        item = b.reshape(item, (1,) + shape[1:])
    out = b.emit1("SelectV2", [hot, item, lst])
    out = b.broadcast(out, True, shape) if tuple(out.aval.shape) != (b.size,) + shape else out
    return [(out, True)]


@batching("TensorListGetItem")
def get_item(b, node, inputs, batched):
    lst, index = inputs
    if batched[0] and batched[1]:
        return None         # a row's own index into its own list: the reported loop
    axis = 1 if batched[0] else 0
    return [(b.emit1("GatherV2", [lst, index], {"axis": axis, "batch_dims": 0}), True)]
