"""Batching rules of shape ops: axes move one to the right, shapes gain the batch dim."""
import numpy as np

from ...ir import dtypes as D
from .registry import batching, shift_axis


def _in_rank(node, i=0):
    return len(node.inputs[i].aval.shape)


@batching("Reshape")
def reshape(b, node, inputs, batched):
    return [(b.reshape(inputs[0], (b.size,) + tuple(node.outputs[0].aval.shape)), True)]


@batching("EnsureShape")
def ensure_shape(b, node, inputs, batched):
    return [(b.emit1("EnsureShape", inputs, {"shape": (b.size,) + tuple(node.attrs["shape"])}),
             True)]


@batching("Transpose")
def transpose(b, node, inputs, batched):
    perm = (0,) + tuple(p + 1 for p in node.attrs["perm"])
    return [(b.emit1("Transpose", inputs, {"perm": perm}), True)]


@batching("ExpandDims")
def expand_dims(b, node, inputs, batched):
    axis = node.attrs["axis"] % (_in_rank(node) + 1) + 1
    return [(b.emit1("ExpandDims", inputs, {"axis": axis}), True)]


@batching("Squeeze")
def squeeze(b, node, inputs, batched):
    shape = node.inputs[0].aval.shape
    axes = [i for i, d in enumerate(shape) if d == 1] if node.attrs["axis"] is None \
        else [a % len(shape) for a in node.attrs["axis"]]
    return [(b.emit1("Squeeze", inputs, {"axis": tuple(a + 1 for a in axes)}), True)]


@batching("BroadcastTo")
def broadcast_to(b, node, inputs, batched):
    return [(b.broadcast(inputs[0], True, node.attrs["shape"]), True)]


@batching("Tile")
def tile(b, node, inputs, batched):
    return [(b.emit1("Tile", inputs, {"multiples": (1,) + tuple(node.attrs["multiples"])}), True)]


@batching("Pad")
def pad(b, node, inputs, batched):
    attrs = dict(node.attrs, paddings=((0, 0),) + tuple(tuple(p) for p in node.attrs["paddings"]))
    return [(b.emit1("Pad", inputs, attrs), True)]


@batching("ConcatV2")
def concat(b, node, inputs, batched):
    args = [b.broadcast(v, f, w.aval.shape) for v, f, w in zip(inputs, batched, node.inputs)]
    axis = shift_axis(node.attrs["axis"], _in_rank(node))
    return [(b.emit1("ConcatV2", args, {"axis": axis}), True)]


@batching("Pack")
def pack(b, node, inputs, batched):
    args = [b.broadcast(v, f, w.aval.shape) for v, f, w in zip(inputs, batched, node.inputs)]
    axis = node.attrs["axis"] % (_in_rank(node) + 1) + 1
    return [(b.emit1("Pack", args, {"axis": axis}), True)]


@batching("Unpack", "Split")
def unstack(b, node, inputs, batched):
    attrs = dict(node.attrs, axis=shift_axis(node.attrs["axis"], _in_rank(node)))
    return [(v, True) for v in b.emit(node.op, inputs, attrs)]


@batching("StridedSlice")
def strided_slice(b, node, inputs, batched):
    spec = ((None, None, None),) + tuple(node.attrs["spec"])
    return [(b.emit1("StridedSlice", inputs, {"spec": spec}), True)]


@batching("StridedSliceGrad")
def strided_slice_grad(b, node, inputs, batched):
    attrs = {"spec": ((None, None, None),) + tuple(node.attrs["spec"]),
             "shape": (b.size,) + tuple(node.attrs["shape"])}
    return [(b.emit1("StridedSliceGrad", inputs, attrs), True)]


@batching("GatherV2")
def gather(b, node, inputs, batched):
    params, indices = inputs
    rank = _in_rank(node)
    axis = node.attrs["axis"] % rank
    if batched[0] and not batched[1]:
        return [(b.emit1("GatherV2", inputs, dict(node.attrs, axis=axis + 1)), True)]
    if batched[0]:
        return None  # both batched: the loop
    out = b.emit1("GatherV2", inputs, dict(node.attrs, axis=axis))   # batch dim lands at `axis`
    orank = len(out.aval.shape)
    perm = (axis,) + tuple(i for i in range(orank) if i != axis)
    return [(b.emit1("Transpose", [out], {"perm": perm}), True)]


@batching("OneHot")
def one_hot(b, node, inputs, batched):
    axis = node.attrs["axis"]
    attrs = dict(node.attrs, axis=-1 if axis == -1 else axis + 1)
    return [(b.emit1("OneHot", inputs, attrs), True)]


@batching("Shape", "Size")
def shape_of(b, node, inputs, batched):
    """Shapes do not depend on the values: the unbatched answer, as a constant."""
    shape = node.inputs[0].aval.shape
    if any(d is None for d in shape):   # sizes known at run time: the batched value's, less B
        (x,) = inputs
        if not batched[0]:
            return [(b.emit1(node.op, inputs, node.attrs), False)]
        sizes = b.emit1("StridedSlice", [b.emit1("Shape", [x], node.attrs)],
                        {"spec": ((1, None, 1),)})
        if node.op == "Shape":
            return [(sizes, False)]
        return [(b.emit1("Prod", [sizes], {"axis": None, "keepdims": False}), False)]
    dt = D.as_dtype(node.attrs["out_type"]).np
    value = np.array(shape, dt) if node.op == "Shape" else np.array(int(np.prod(shape)), dt)
    return [(b.graph.const(value), False)]


# -- ops taking a shape as a tensor: the batch size joins the front of the shape --------------

def _with_batch(b, sizes):
    """The int vector ``sizes`` with the batch size in front."""
    front = b.graph.const(np.array([b.size], D.as_dtype(sizes.aval.dtype).np))
    return b.emit1("ConcatV2", [front, sizes], {"axis": 0})


@batching("DynamicReshape")
def dynamic_reshape(b, node, inputs, batched):
    if batched[1]:
        return None   # a shape per row: the loop
    x, sizes = inputs
    attrs = {"shape": (b.size,) + tuple(node.attrs["shape"])}
    return [(b.emit1("DynamicReshape", [x, _with_batch(b, sizes)], attrs), True)]


@batching("DynamicBroadcastTo")
def dynamic_broadcast_to(b, node, inputs, batched):
    if batched[1]:
        return None
    x, sizes = inputs
    shape = tuple(node.attrs["shape"])
    # unit axes where x has fewer dims than the target: after the batch axis when batched,
    # in front of everything when not (every row the same); ExpandDims needs no sizes
    for _ in range(len(shape) + 1 - len(x.aval.shape)):
        x = b.emit1("ExpandDims", [x], {"axis": 1 if batched[0] else 0})
    attrs = {"shape": (b.size,) + shape}
    return [(b.emit1("DynamicBroadcastTo", [x, _with_batch(b, sizes)], attrs), True)]


@batching("DynamicStridedSliceGrad")
def dynamic_strided_slice_grad(b, node, inputs, batched):
    if batched[1]:
        return None
    g, sizes = inputs
    attrs = {"spec": ((None, None, None),) + tuple(node.attrs["spec"]),
             "shape": (b.size,) + tuple(node.attrs["shape"])}
    return [(b.emit1("DynamicStridedSliceGrad", [g, _with_batch(b, sizes)], attrs), True)]


@batching("SplitV")
def split_v(b, node, inputs, batched):
    if batched[1]:
        return None
    attrs = dict(node.attrs, axis=shift_axis(node.attrs["axis"], _in_rank(node)))
    return [(v, True) for v in b.emit("SplitV", inputs, attrs)]


@batching("SumToShape")
def sum_to_shape(b, node, inputs, batched):
    """The axes ``g`` has beyond the target's rank are summed first, so the batch axis lines
    up with the batch size put in front of the target shape."""
    if batched[1]:
        return None
    g, sizes = inputs
    shape = tuple(node.attrs["shape"])
    lead = _in_rank(node) - len(shape)
    if lead:
        g = b.emit1("Sum", [g], {"axis": tuple(range(1, lead + 1)), "keepdims": False})
    attrs = {"shape": (b.size,) + shape}
    return [(b.emit1("SumToShape", [g, _with_batch(b, sizes)], attrs), True)]
