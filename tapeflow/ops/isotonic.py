"""``tf.nn.isotonic_regression``: TF's wrapper over the IsotonicRegression op (``axis`` moved
last by swapping it with the last axis, ``decreasing=False`` by negating in and out)."""
from __future__ import annotations

from collections import namedtuple

from ..runtime.dispatch import apply
from . import math as m
from .array import transpose

IsotonicRegression = namedtuple("IsotonicRegression", ["output", "segments"])


def isotonic_regression(inputs, decreasing=True, axis=-1) -> IsotonicRegression:
    """The closest non-increasing (``decreasing``) or non-decreasing sequence along ``axis`` in
    the squared error, and the int32 ids of its constant segments (from 0 in each row).

    Integer inputs give float32 (int8, int16) or float64 results, as in TensorFlow.

    >>> y, segments = tf.nn.isotonic_regression([[1.0, 3.0, 2.0, 4.0]])
    >>> y
    <tf.Tensor: shape=(1, 4), dtype=float32, numpy=array([[2.5, 2.5, 2.5, 2.5]], dtype=float32)>
    >>> segments
    <tf.Tensor: shape=(1, 4), dtype=int32, numpy=array([[0, 0, 0, 0]], dtype=int32)>
    """
    x = m._tensor(inputs)
    rank = len(x.shape)
    perm = None
    if rank and int(axis) % rank != rank - 1:
        perm = list(range(rank))
        perm[int(axis) % rank], perm[-1] = rank - 1, int(axis) % rank
        x = transpose(x, perm)
    if not decreasing:
        x = m.negative(x)
    output, segments = apply("IsotonicRegression", [x], {})
    if not decreasing:
        output = m.negative(output)
    if perm is not None:
        output, segments = transpose(output, perm), transpose(segments, perm)
    return IsotonicRegression(output, segments)


__all__ = ["isotonic_regression"]
