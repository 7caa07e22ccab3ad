"""Gradient rules of the shape ops (TensorFlow's array_grad.py, dense).

Shape ops read no tensors, only the input avals, except GatherV2 (its indices).
"""
import numpy as np

from ...ir.shapes import normalize_axis, num_elements
from ...ops import array as a
from ...ops import dims
from ...ops.indexed_slices import gather_gradient
from ...ops import reduce as r
from ...runtime.registry import gradient, not_differentiable, slices_gradient

not_differentiable("Shape", "Size", "OneHot", "Const")   # (Const: no inputs)

# Inside a function traced with None dims, ``op.in_avals[i].shape`` is a DynamicShape whose
# unknown sizes are a tensor of the forward graph; reshape/broadcast_to/ops.dims read them at
# run time, as TensorFlow's rules call ``array_ops.shape``.


def _reshape_to_input(op, g):
    return [a.reshape(g, op.in_avals[0].shape)] + [None] * (len(op.in_avals) - 1)


for _name in ("Reshape", "ExpandDims", "Squeeze", "DynamicReshape"):
    gradient(_name)(_reshape_to_input)


@gradient("EnsureShape")
def _ensure_shape(op, g):
    """TensorFlow's is ``grad``; here a shape is a type, so ``g`` gets the input's back."""
    return [a.ensure_shape(g, op.in_avals[0].shape)]


@slices_gradient("EnsureShape")
def _ensure_shape_slices(op, g):
    """An IndexedSlices passes on as it is (TensorFlow's ``_EnsureShapeGrad``)."""
    return [g]


@gradient("DynamicBroadcastTo")
def _dynamic_broadcast_to(op, g):
    return [g, None]  # the tape sums g back down to the input's shape


@gradient("SumToShape")
def _sum_to_shape(op, g):
    return [a.broadcast_to(g, op.in_avals[0].shape), None]


@gradient("Transpose")
def _transpose(op, g):
    return [a.transpose(g, np.argsort(op.attrs["perm"]))]


@gradient("BroadcastTo")
def _broadcast_to(op, g):
    return [g]  # the tape sums g back down to the input's shape


@gradient("Tile")
def _tile(op, g):
    """Split each tiled axis into (multiple, dim) and sum over the multiples."""
    shape, multiples = op.in_avals[0].shape, op.attrs["multiples"]
    split_shape = dims.pack([v for k, m in enumerate(multiples) for v in (m, dims.dim(shape, k))])
    return [r.reduce_sum(a.reshape(g, split_shape), axis=tuple(range(0, 2 * len(shape), 2)))]


@gradient("Pad")
def _pad(op, g):
    """The padded input's window: ``g[b:-e]`` per axis (a strided slice needs no sizes)."""
    return [a.strided_slice(g, tuple((b, -e if e else None, 1) for b, e in op.attrs["paddings"]))]


@gradient("ConcatV2")
def _concat(op, g):
    if len(op.in_avals) == 1:
        return [g]
    axis = normalize_axis(op.attrs["axis"], len(op.in_avals[0].shape))
    sizes = dims.pack([dims.dim(av.shape, axis) for av in op.in_avals])  # run-time ones: SplitV
    return list(a.split(g, sizes, axis=axis))


@gradient("Pack")
def _pack(op, g):
    return list(a.unstack(g, num=len(op.in_avals), axis=op.attrs["axis"]))


@gradient("Unpack")
def _unpack(op, *grads):
    return [a.stack(list(grads), axis=op.attrs["axis"])]


@gradient("Split")
@gradient("SplitV")
def _split(op, *grads):
    g = a.concat(list(grads), axis=op.attrs["axis"])
    return [g] if op.type == "Split" else [g, None]


@gradient("GatherV2", inputs=(1,))
def _gather(op, g):
    """TensorFlow's: along axis 0 (as written, no batch dims) an IndexedSlices of ``g``'s rows;
    else dense: move ``axis`` first, segment-sum, move it back."""
    shape = op.in_avals[0].shape
    indices = op.inputs[1]
    if op.attrs["axis"] == 0 and op.attrs["batch_dims"] == 0:
        return [gather_gradient(g, indices, op.in_avals[1].shape, shape), None]
    axis = normalize_axis(op.attrs["axis"], len(shape))
    n = dims.num_elements(op.in_avals[1].shape)
    values = a.reshape(g, dims.pack([dims.dim(shape, k) for k in range(axis)] + [n] +
                                    [dims.dim(shape, k) for k in range(axis + 1, len(shape))]))
    perm = [axis] + list(range(axis)) + list(range(axis + 1, len(shape)))
    if axis:
        values = a.transpose(values, perm)
    grad = r.unsorted_segment_sum(values, a.reshape(indices, [-1]), dims.dim(shape, axis))
    if axis:
        grad = a.transpose(grad, np.argsort(perm))
    return [grad, None]


@gradient("StridedSlice")
def _strided_slice(op, g):
    return [a.strided_slice_grad(g, op.attrs["spec"], op.in_avals[0].shape)]


@gradient("StridedSliceGrad")
@gradient("DynamicStridedSliceGrad")
def _strided_slice_grad(op, g):
    return [a.strided_slice(g, op.attrs["spec"])] + [None] * (len(op.in_avals) - 1)
