"""NumPy kernels of the indexing ops (ir/defs/indexing.py).

Indices are checked as TF's CPU kernels check them (NumPy would wrap negative ones);
duplicate indices add in ScatterNd/TensorScatterAdd and the last one wins in
TensorScatterUpdate, in index order.
"""
import numpy as np

from ..registry import kernel
from .math import _quiet


@kernel("ReverseV2")
def _reverse(x, axis):
    return np.ascontiguousarray(np.flip(x, tuple(axis))) if len(axis) else np.array(x, copy=True)


@kernel("Roll")
def _roll(x, shift, axis):
    return np.roll(x, tuple(shift), tuple(axis)) if len(axis) else np.array(x, copy=True)


def _flat_indices(indices, dims, what):
    """Row numbers of ``indices[..., :k]`` in a (prod(dims), rest) view; checked."""
    idx = np.asarray(indices).reshape(-1, len(dims)).astype(np.int64)
    bad = (idx < 0) | (idx >= np.asarray(dims, np.int64))
    if bad.any():
        row = int(np.argwhere(bad.any(axis=1))[0][0])
        raise IndexError(f"{what}: indices[{row}] = {idx[row].tolist()} does not index into "
                         f"shape {list(dims)}")
    flat = np.zeros(len(idx), np.int64)
    for d, n in enumerate(dims):
        flat = flat * n + idx[:, d]
    return flat


@kernel("GatherNd")
def _gather_nd(params, indices):
    params, indices = np.asarray(params), np.asarray(indices)
    k = indices.shape[-1]
    flat = _flat_indices(indices, params.shape[:k], "GatherNd")
    rows = params.reshape((-1,) + params.shape[k:])[flat]
    return rows.reshape(indices.shape[:-1] + params.shape[k:])


def _scatter_into(out, indices, updates, combine, what):
    indices, updates = np.asarray(indices), np.asarray(updates)
    k = indices.shape[-1]
    flat = _flat_indices(indices, out.shape[:k], what)
    view = out.reshape((-1,) + out.shape[k:])     # a view: ``out`` is C-contiguous
    rows = updates.reshape((len(flat),) + out.shape[k:])
    if combine is None:
        for i, r in enumerate(flat):     # in index order: the last duplicate wins
            view[r] = rows[i]
    else:
        combine.at(view, flat, rows)
    return out


@kernel("ScatterNd")
def _scatter_nd(indices, updates, shape):
    out = np.zeros(tuple(shape), np.asarray(updates).dtype)
    return _scatter_into(out, indices, updates, np.add, "ScatterNd")


for _name, _combine in (("TensorScatterUpdate", None), ("TensorScatterAdd", np.add),
                        ("TensorScatterSub", np.subtract), ("TensorScatterMax", np.maximum),
                        ("TensorScatterMin", np.minimum)):
    kernel(_name)(_quiet(lambda tensor, indices, updates, _c=_combine, _n=_name: _scatter_into(
        np.array(tensor, copy=True, order="C"), indices, updates, _c, _n)))
