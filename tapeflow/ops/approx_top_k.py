"""``tf.math.approx_max_k``/``approx_min_k`` and ``tf.approx_top_k``: on the CPU TensorFlow's
ApproxTopK is exact (TopK's answer: the lower index first among ties, NaN the largest), so here
it is ``top_k`` along ``reduction_dimension`` and its gradient is TopK's (the values' gradient
scattered back to where they came from, TF's ``_ApproxTopKGradient``).

TensorFlow's CPU kernel takes only the last axis and ``is_max_k``; its XLA kernel (what
``jit_compile=True`` runs) takes any axis and the min, with the same exact answer, which is
what these give for every call. ``recall_target`` and ``reduction_input_size_override`` only
tune the approximation, so they change nothing; with ``aggregate_to_topk=False`` TF's CPU
kernel returns the same k results (its XLA kernel would return the whole sorted axis).
"""
from __future__ import annotations

from ..errors import InvalidArgumentError
from ..ir import dtypes as D
from . import math as m
from .array import transpose
from .sort import _TopKV2, top_k

_FLOATS = (D.float16, D.float32)


def approx_top_k(input, k, reduction_dimension=-1, recall_target=0.95, is_max_k=True,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None) -> ApproxTopK:
    """The ``k`` largest (``is_max_k``) or smallest entries along ``reduction_dimension`` and
    their int32 indices, sorted.

    >>> tf.approx_top_k(tf.constant([[1.0, 5.0, 3.0, 5.0]]), 2)
    ApproxTopK(values=<tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[5., 5.]], dtype=float32)>, indices=<tf.Tensor: shape=(1, 2), dtype=int32, numpy=array([[1, 3]], dtype=int32)>)
    """
    x = m._tensor(input)
    if x.dtype not in _FLOATS:
        raise InvalidArgumentError(f"Value for attr 'T' of {x.dtype.name} is not in the list of "
                                   "allowed values: half, bfloat16, float")
    k = int(k.numpy() if hasattr(k, "numpy") else k)
    if k < 0:
        raise InvalidArgumentError(f"Value for attr 'k' of {k} must be at least minimum 0")
    rank = len(x.shape)
    if not -rank <= int(reduction_dimension) < rank:
        raise InvalidArgumentError(f"reduction_dimension {reduction_dimension} is out of range "
                                   f"for an input of rank {rank}")
    axis = int(reduction_dimension) % rank
    n = x.shape[axis]
    if n is not None and n < k:
        raise InvalidArgumentError(f"input must have at least k columns. Had {n}, needed {k}")
    perm = None
    if axis != rank - 1:
        perm = list(range(rank))
        perm[axis], perm[-1] = rank - 1, axis
        x = transpose(x, perm)
    values, indices = top_k(x if is_max_k else m.negative(x), k)
    if not is_max_k:
        values = m.negative(values)
    if perm is not None:
        values, indices = transpose(values, perm), transpose(indices, perm)
    return ApproxTopK(values, indices)


class ApproxTopK(_TopKV2):
    """TF's ``ApproxTopK(values, indices)`` named tuple."""

    def __repr__(self):
        return f"ApproxTopK(values={self.values!r}, indices={self.indices!r})"


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None) -> ApproxTopK:
    """The ``k`` largest entries of ``operand`` along ``reduction_dimension`` and their indices.

    >>> tf.math.approx_max_k(tf.constant([[4.0, 2.0, 8.0, 0.0]]), 2)[0]
    <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[8., 4.]], dtype=float32)>
    """
    return approx_top_k(operand, k, reduction_dimension, recall_target, True,
                        reduction_input_size_override, aggregate_to_topk)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None) -> ApproxTopK:
    """The ``k`` smallest entries of ``operand`` along ``reduction_dimension`` and their indices.

    >>> tf.math.approx_min_k(tf.constant([[4.0, 2.0, 8.0, 0.0]]), 2)[1]
    <tf.Tensor: shape=(1, 2), dtype=int32, numpy=array([[3, 1]], dtype=int32)>
    """
    return approx_top_k(operand, k, reduction_dimension, recall_target, False,
                        reduction_input_size_override, aggregate_to_topk)


__all__ = ["approx_top_k", "approx_max_k", "approx_min_k"]
