"""``tf.math.cumsum``, ``cumprod`` and ``cumulative_logsumexp`` (TF's signatures)."""
from __future__ import annotations

from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor


def _axis(axis):
    if hasattr(axis, "numpy"):
        axis = axis.numpy()
    return int(axis)


def _scan(op, x, axis, exclusive, reverse):
    return apply(op, [x], {"axis": _axis(axis), "exclusive": bool(exclusive),
                           "reverse": bool(reverse)})


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None) -> Tensor:
    """Running sums along ``axis``; ``exclusive`` leaves each element out, ``reverse`` scans from the end.

    >>> tf.math.cumsum(tf.constant([1, 2, 3]), exclusive=True, reverse=True)
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([5, 3, 0], dtype=int32)>
    """
    return _scan("Cumsum", x, axis, exclusive, reverse)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None) -> Tensor:
    """Running products along ``axis`` (``exclusive`` and ``reverse`` as in ``cumsum``).

    >>> tf.math.cumprod(tf.constant([2.0, 3.0, 4.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([ 2.,  6., 24.], dtype=float32)>
    """
    return _scan("Cumprod", x, axis, exclusive, reverse)


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None) -> Tensor:
    """Running ``log(sum(exp(x)))`` along ``axis``; an exclusive scan starts from -inf.

    >>> tf.math.cumulative_logsumexp(tf.constant([0.0, 0.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.       , 0.6931472], dtype=float32)>
    """
    return _scan("CumulativeLogsumexp", x, axis, exclusive, reverse)


__all__ = ["cumsum", "cumprod", "cumulative_logsumexp"]
