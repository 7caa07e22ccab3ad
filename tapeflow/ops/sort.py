"""``tf.math.top_k``, ``tf.sort``, ``tf.argsort`` (TF's composites over TopKV2) and ``in_top_k``."""
from __future__ import annotations

import numpy as np

from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor
from . import math as m
from .array import transpose


def top_k(input, k=1, sorted=True, index_type=D.int32, name=None) -> "_TopKV2":
    """The ``k`` largest entries of the last axis and their indices (ties: the lower index first).

    >>> tf.math.top_k(tf.constant([1.0, 3.0, 2.0]), k=2).indices
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>
    """
    if hasattr(k, "numpy"):
        k = k.numpy()
    values, indices = apply("TopKV2", [input], {"k": int(k), "sorted": bool(sorted),
                                               "index_type": D.as_dtype(index_type)})
    return _TopKV2(values, indices)


class _TopKV2(tuple):
    """TF's ``TopKV2(values, indices)`` named tuple."""
    def __new__(cls, values, indices):
        return super().__new__(cls, (values, indices))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])


def _descending(values, axis, return_argsort):
    rank = len(values.shape)
    axis = axis % rank
    perm = None
    if axis != rank - 1:
        perm = list(range(rank))
        perm[axis], perm[-1] = rank - 1, axis
        values = transpose(values, perm)
    vals, idx = apply("TopKV2", [values], {"k": int(values.shape[-1]), "sorted": True,
                                          "index_type": D.int32})
    out = idx if return_argsort else vals
    return transpose(out, perm) if perm is not None else out


def _sort_or_argsort(values, axis, direction, return_argsort):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError("Argument `direction` should be one of ASCENDING, DESCENDING. "
                         f"Received: direction={direction}")
    if hasattr(axis, "numpy"):
        axis = axis.numpy()
    if np.ndim(axis) != 0:
        raise ValueError(f"Argument `axis` must be a constant scalar. Received: axis={axis}.")
    axis = int(axis)
    values = m._tensor(values)
    if direction == "DESCENDING":
        return _descending(values, axis, return_argsort)
    dt = values.dtype
    if dt.is_integer and dt.name.startswith("uint"):
        offset = m.constant_like(np.iinfo(dt.np).max, values)
        out = _descending(m.subtract(offset, values), axis, return_argsort)
        return out if return_argsort else m.subtract(offset, out)
    if dt.is_integer:
        one = m.constant_like(1, values)
        out = _descending(m.subtract(m.negative(values), one), axis, return_argsort)
        return out if return_argsort else m.subtract(m.negative(out), one)
    out = _descending(m.negative(values), axis, return_argsort)
    return out if return_argsort else m.negative(out)


def sort(values, axis=-1, direction="ASCENDING", name=None) -> Tensor:
    """``values`` sorted along ``axis`` (TF sorts with top_k, so its gradient is top_k's).

    >>> tf.sort(tf.constant([3, 1, 2]))
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([1, 2, 3], dtype=int32)>
    """
    return _sort_or_argsort(values, axis, direction, return_argsort=False)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None) -> Tensor:
    """The indices that sort ``values`` along ``axis`` (always stable, as TF's top_k is).

    >>> tf.argsort(tf.constant([3.0, 1.0, 2.0]))
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([1, 2, 0], dtype=int32)>
    """
    return _sort_or_argsort(values, axis, direction, return_argsort=True)


def in_top_k(targets, predictions, k, name=None) -> Tensor:
    """Whether each target's prediction is among the ``k`` largest of its row (ties all in).

    >>> tf.math.in_top_k([1, 0], tf.constant([[0.1, 0.9, 0.5], [0.2, 0.7, 0.6]]), 2)
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>
    """
    if hasattr(k, "numpy"):
        k = k.numpy()
    return apply("InTopKV2", [predictions, targets], {"k": int(k)})
