"""NumPy kernels of the shape ops."""
import numpy as np

from ...ir.defs.array import expand_spec, split_sizes
from ..registry import kernel

kernel("Const")(lambda value: value)
kernel("Reshape")(lambda x, shape: np.reshape(x, shape))


@kernel("EnsureShape")
def _ensure_shape(x, shape):
    x = np.asarray(x)
    if x.ndim != len(shape) or any(s is not None and d != s for d, s in zip(x.shape, shape)):
        want = "[" + ",".join("?" if s is None else str(s) for s in shape) + "]"
        raise ValueError(f"Shape of tensor {list(x.shape)} is not compatible with expected "
                         f"shape {want}.")
    return x
kernel("Transpose")(lambda x, perm: np.transpose(x, perm))
kernel("ExpandDims")(lambda x, axis: np.expand_dims(x, axis))
kernel("BroadcastTo")(lambda x, shape: np.broadcast_to(x, shape))
kernel("Tile")(lambda x, multiples: np.tile(x, multiples))
kernel("Pad")(lambda x, paddings, constant_values=0: np.pad(x, paddings, constant_values=constant_values))
kernel("ConcatV2")(lambda *xs, axis: np.concatenate(xs, axis=axis))
kernel("Pack")(lambda *xs, axis=0: np.stack(xs, axis=axis))
kernel("Unpack")(lambda x, num, axis: tuple(np.moveaxis(np.asarray(x), axis, 0)))


kernel("Squeeze")(lambda x, axis: np.squeeze(x, axis))


@kernel("Split")
def _split(x, sizes, axis):
    x = np.asarray(x)
    cuts = np.cumsum(split_sizes(x.shape[axis], sizes))[:-1]
    return tuple(np.split(x, cuts, axis=axis))


@kernel("SplitV")
def _split_v(x, s, sizes, axis):
    x = np.asarray(x)
    s = [int(d) for d in s]
    if sum(s) != x.shape[axis] or min(s, default=0) < 0:
        raise ValueError(f"size_splits {s} do not add up to dimension {axis} of shape "
                         f"{list(x.shape)}")
    return tuple(np.split(x, np.cumsum(s)[:-1], axis=axis))


@kernel("GatherV2")
def _gather(params, indices, axis, batch_dims=0):
    """Indices are checked: NumPy would silently wrap negative ones, TensorFlow raises."""
    params, indices = np.asarray(params), np.asarray(indices)
    n = params.shape[axis]
    bad = (indices < 0) | (indices >= n)
    if bad.any():
        pos = tuple(int(i) for i in np.argwhere(bad)[0])
        raise IndexError(f"indices{list(pos)} = {indices[pos]} is not in [0, {n})")
    return np.take(params, indices, axis=axis)


def numpy_key(spec, rank):
    return tuple(slice(*s) if isinstance(s, tuple) else s for s in expand_spec(spec, rank))


kernel("StridedSlice")(lambda x, spec: np.array(np.asarray(x)[numpy_key(spec, np.ndim(x))]))


@kernel("StridedSliceGrad")
def _strided_slice_grad(g, spec, shape):
    """Scatter ``g`` into zeros of the sliced input's shape (basic slices never overlap)."""
    out = np.zeros(shape, np.asarray(g).dtype)
    out[numpy_key(spec, len(shape))] = g
    return out


kernel("DynamicReshape")(lambda x, s, shape: np.reshape(x, tuple(int(d) for d in s)))


@kernel("DynamicBroadcastTo")
def _dynamic_broadcast_to(x, s, shape):
    target = tuple(int(d) for d in s)
    if np.ndim(x) > len(target):
        raise ValueError(f"cannot broadcast a tensor of shape {list(np.shape(x))} to {list(target)}")
    return np.broadcast_to(x, target)


@kernel("SumToShape")
def sum_to_shape(g, s, shape):
    """``g`` summed over the axes a broadcast to its shape added or stretched from 1: the
    gradient of a broadcast, when which axes those are is known only at run time."""
    g = np.asarray(g)
    target = tuple(int(d) for d in s)
    lead = g.ndim - len(target)
    if lead < 0 or any(t not in (1, d) for t, d in zip(target, g.shape[lead:])):
        raise ValueError(f"Incompatible shapes: {list(g.shape)} cannot be summed to {list(target)}")
    axes = tuple(range(lead)) + tuple(lead + i for i, (t, d) in enumerate(zip(target, g.shape[lead:]))
                                      if t == 1 and d != 1)
    return np.sum(g, axis=axes).reshape(target) if axes else g.reshape(target)


kernel("DynamicStridedSliceGrad")(
    lambda g, s, spec, shape: _strided_slice_grad(g, spec, tuple(int(d) for d in s)))
kernel("Shape")(lambda x, out_type: np.asarray(np.shape(x), out_type.np))
kernel("Size")(lambda x, out_type: np.asarray(np.size(x), out_type.np))


@kernel("OneHot")
def _one_hot(indices, depth, on_value, off_value, axis, dtype):
    """Out-of-range indices (negative too) give a row of ``off_value``, as in TensorFlow."""
    hot = np.asarray(indices)[..., None] == np.arange(depth)
    out = np.where(hot, on_value, off_value).astype(dtype.np)
    return out if axis == -1 else np.moveaxis(out, -1, axis)
