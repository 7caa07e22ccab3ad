"""Batching rules of TensorListSetItem: a select on the one-hot of the index; of
TensorListGetItem: a gather along the list's axis (of the batched list or by the batched index);
of the padded list's ops (CropOrPad, RaggedList*): the batch as an axis of every element.

Any of list, index and item may carry the batch; ``where(one_hot(index, n), item, list)``
covers every combination with existing ops (an index out of range writes nothing here,
where the op would raise).
"""
import numpy as np

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


# -- the padded list of elements of different shapes (ops/ragged_list.py) -------------------
# Values batched [B, n, *P] over shared shapes and indices are one list whose elements carry
# the batch as an axis of their own (axis ``at`` of each element; every shape row gets B
# there), so the unbatched op computes every row at once; the batch axis is then moved to
# the front. A batched shapes or index input (each row its own layout) is the reported loop.

def _const(b, value):
    return b.graph.const(np.asarray(value, np.int32))


def _shapes(b, shapes, attrs, at, rank):
    """(shapes, attrs) of a list whose elements (of ``rank`` dims) get the batch at axis ``at``."""
    full = (None, None, None)
    flag = b.emit1("StridedSlice", [shapes], {"spec": (full, (0, 1, None))})
    column = b.emit1("Mul", [flag, _const(b, b.size)])      # uninitialized rows stay 0
    head = b.emit1("StridedSlice", [shapes], {"spec": (full, (0, 1 + at, None))})
    tail = b.emit1("StridedSlice", [shapes], {"spec": (full, (1 + at, None, None))})
    shapes = b.emit1("ConcatV2", [head, column, tail], {"axis": 1})
    es = tuple(attrs["element_shape"]) if attrs["known_rank"] else (None,) * rank
    return shapes, {"element_shape": es[:at] + (b.size,) + es[at:], "known_rank": True}


def _inside(b, values, shapes, attrs, at):
    """(values, shapes, attrs) of the list whose elements hold the batch at axis ``at``."""
    rank = len(values.aval.shape)
    perm = (1,) + tuple(range(2, 2 + at)) + (0,) + tuple(range(2 + at, rank))
    moved = b.emit1("Transpose", [values], {"perm": perm})
    return (moved,) + _shapes(b, shapes, attrs, at, rank - 2)


def _front(b, v, at):
    """``v`` with its axis ``at`` moved to the front."""
    rank = len(v.aval.shape)
    perm = (at,) + tuple(k for k in range(rank) if k != at)
    return b.emit1("Transpose", [v], {"perm": perm})


@batching("RaggedListGetItem")
def ragged_get_item(b, node, inputs, batched):
    if batched[1] or batched[2]:
        return None
    values, shapes, es = _inside(b, inputs[0], inputs[1], node.attrs, 0)
    return [(b.emit1("RaggedListGetItem", [values, shapes, inputs[2]], es), True)]


@batching("RaggedListGather")
def ragged_gather(b, node, inputs, batched):
    if batched[1] or batched[2]:
        return None
    values, shapes, es = _inside(b, inputs[0], inputs[1], node.attrs, 0)
    return [(_front(b, b.emit1("RaggedListGather", [values, shapes, inputs[2]], es), 1), True)]


@batching("RaggedListStack")
def ragged_stack(b, node, inputs, batched):
    if batched[1]:
        return None
    values, shapes, es = _inside(b, inputs[0], inputs[1], node.attrs, 0)
    return [(_front(b, b.emit1("RaggedListStack", [values, shapes], es), 1), True)]


@batching("RaggedListConcat")
def ragged_concat(b, node, inputs, batched):
    """The batch after each element's first axis, so concatenation stays along axis 0."""
    if batched[1] or len(inputs[0].aval.shape) < 3:
        return None
    values, shapes, es = _inside(b, inputs[0], inputs[1], node.attrs, 1)
    return [(_front(b, b.emit1("RaggedListConcat", [values, shapes], es), 1), True)]


@batching("RaggedListConcatGrad")
def ragged_concat_grad(b, node, inputs, batched):
    g, shapes, sizes = inputs
    if batched[1] or batched[2] or len(node.attrs["shape"]) < 3:
        return None
    rank = len(g.aval.shape)
    g = b.emit1("Transpose", [g], {"perm": (1, 0) + tuple(range(2, rank))})
    shapes, es = _shapes(b, shapes, node.attrs, 1, len(node.attrs["shape"]) - 1)
    front = b.emit1("StridedSlice", [sizes], {"spec": ((0, 2, None),)})
    back = b.emit1("StridedSlice", [sizes], {"spec": ((2, None, None),)})
    sizes = b.emit1("ConcatV2", [front, _const(b, [b.size]), back], {"axis": 0})
    shape = tuple(node.attrs["shape"])
    attrs = {**es, "shape": shape[:2] + (b.size,) + shape[2:]}
    out = b.emit1("RaggedListConcatGrad", [g, shapes, sizes], attrs)
    return [(_front(b, out, 2), True)]


@batching("CropOrPad")
def crop_or_pad(b, node, inputs, batched):
    if batched[1]:
        return None   # sizes per row: the loop
    x, sizes = inputs
    attrs = {**node.attrs, "shape": (b.size,) + tuple(node.attrs["shape"])}
    sizes = b.emit1("ConcatV2", [_const(b, [b.size]), sizes], {"axis": 0})
    return [(b.emit1("CropOrPad", [x, sizes], attrs), True)]
