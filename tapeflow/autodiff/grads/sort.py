"""Gradient rules of TopKV2 (TF's ``nn_grad._TopKGrad``: the values' gradient scattered back to
where they came from) and InTopKV2 (none)."""
import numpy as np

from ...ops import array
from ...ops import indexing as ix
from ...ops import math as m
from ...runtime.registry import gradient, not_differentiable

not_differentiable("InTopKV2")


@gradient("TopKV2", outputs=(1,))
def _top_k(op, g, _):
    in_shape = tuple(op.in_avals[0].shape)
    k = op.out_avals[1].shape[-1]
    n = in_shape[-1]
    rows = int(np.prod(in_shape[:-1], dtype=np.int64))
    ind_2d = m.cast(array.reshape(op.outputs[1], [-1, k]), "int64")
    offsets = m.constant_like(np.arange(0, rows * n, n, dtype=np.int64)[:, None], ind_2d)
    ind = array.reshape(m.add(ind_2d, offsets), [-1])
    flat = ix.scatter_nd(array.expand_dims(ind, -1), array.reshape(g, [-1]), [rows * n])
    return [array.reshape(flat, in_shape)]
