"""Indexing ops: ReverseV2, Roll, GatherNd, ScatterNd and the TensorScatter* family.

Axes, shifts and ScatterNd's shape are attributes (TF's are tensors, almost always constants).
An index out of range is an error, as on TF's CPU.
"""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import AVal, NUMERIC, check_dtype, defop

INDEX = (D.int32, D.int64)
ANY = NUMERIC + (D.bool_,)


def _axes(axes, rank, what):
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise InferError(f"{what}: axis {a} is out of range for a tensor of rank {rank}")
        out.append(a % rank)
    return out


def _reverse(avals, axis):
    (x,) = avals
    axes = _axes(axis, len(x.shape), "ReverseV2")
    if len(set(axes)) != len(axes):
        raise InferError(f"ReverseV2: axis {list(axis)} specified more than once")
    return AVal(tuple(x.shape), x.dtype)


def _roll(avals, shift, axis):
    (x,) = avals
    if len(shift) != len(axis):
        raise InferError(f"Roll: shift and axis must have the same size, got {len(shift)} "
                         f"and {len(axis)}")
    _axes(axis, len(x.shape), "Roll")
    return AVal(tuple(x.shape), x.dtype)


defop("ReverseV2", _reverse, attrs={"axis": "ints"}, moves_data=True)
defop("Roll", _roll, attrs={"shift": "ints", "axis": "ints"}, moves_data=True)


def _index_depth(params_shape, indices, what):
    check_dtype(indices, INDEX, "indices")
    if not indices.shape:
        raise InferError(f"{what}: indices must be at least a vector, got a scalar")
    k = indices.shape[-1]
    if k is None or k > len(params_shape):
        raise InferError(f"{what}: index innermost dimension length must be <= params rank; "
                         f"saw: {k} vs. {len(params_shape)}")
    if k == 0:
        raise InferError(f"{what}: indices with an innermost dimension of 0 are not supported")
    return k


def _gather_nd(avals):
    params, indices = avals
    k = _index_depth(params.shape, indices, "GatherNd")
    return AVal(tuple(indices.shape[:-1]) + tuple(params.shape[k:]), params.dtype)


defop("GatherNd", _gather_nd, arity=2, moves_data=True)


def _check_updates(shape, indices, updates, what):
    k = _index_depth(shape, indices, what)
    want = tuple(indices.shape[:-1]) + tuple(shape[k:])
    if tuple(updates.shape) != want:
        raise InferError(f"{what}: updates has shape {list(updates.shape)}, expected "
                         f"indices.shape[:-1] + shape[{k}:] = {list(want)}")


def _scatter_nd(avals, shape):
    indices, updates = avals
    check_dtype(updates, NUMERIC, "updates")
    _check_updates(shape, indices, updates, "ScatterNd")
    return AVal(tuple(shape), updates.dtype)


defop("ScatterNd", _scatter_nd, arity=2, attrs={"shape": "shape"})


def _tensor_scatter(allowed):
    def infer(avals):
        tensor, indices, updates = avals
        check_dtype(tensor, allowed, "tensor")
        if updates.dtype != tensor.dtype:
            raise InferError(f"updates has dtype {updates.dtype.name} but tensor has "
                             f"{tensor.dtype.name}")
        _check_updates(tensor.shape, indices, updates, "TensorScatter")
        return AVal(tuple(tensor.shape), tensor.dtype)
    return infer


defop("TensorScatterUpdate", _tensor_scatter(ANY), arity=3, same_dtype=(0, 2))
for _name in ("TensorScatterAdd", "TensorScatterSub", "TensorScatterMax", "TensorScatterMin"):
    defop(_name, _tensor_scatter(NUMERIC), arity=3, same_dtype=(0, 2))
