"""Reductions: ``reduce_sum`` and friends (``tapeflow.math.reduce_*``)."""
from __future__ import annotations

from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.registry import STATIC_FORMS
from ..runtime.tensor import Tensor, convert_to_tensor
from . import array, math
from . import dims as _dims
from .creation import zeros_like


def _axis(axis):
    """Attr form of an axis argument: None, an int, or a tuple of ints (tensors allowed)."""
    if axis is None:
        return None
    if hasattr(axis, "numpy"):
        axis = axis.numpy().tolist()
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) for a in axis)
    return int(axis)


def _reduce(op, x, axis, keepdims):
    return apply(op, [x], {"axis": _axis(axis), "keepdims": bool(keepdims)})


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Sum of ``input_tensor``'s entries over ``axis`` (all axes if None).

    Args:
      input_tensor: the tensor to reduce.
      axis: an int, a list of ints, or None (every axis).
      keepdims: keep the reduced axes with size 1.

    Returns:
      The reduced tensor, of ``input_tensor``'s dtype.

    >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.reduce_sum(x)
    <tf.Tensor: shape=(), dtype=float32, numpy=10.0>
    >>> tf.reduce_sum(x, axis=0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([4., 6.], dtype=float32)>
    """
    return _reduce("Sum", input_tensor, axis, keepdims)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Mean of ``input_tensor``'s entries over ``axis`` (all axes if None).

    Integer means truncate toward zero, as in TensorFlow.

    Args:
      input_tensor: the tensor to reduce.
      axis: an int, a list of ints, or None (every axis).
      keepdims: keep the reduced axes with size 1.

    >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.reduce_mean(x)
    <tf.Tensor: shape=(), dtype=float32, numpy=2.5>
    >>> tf.reduce_mean(x, axis=1, keepdims=True)
    <tf.Tensor: shape=(2, 1), dtype=float32, numpy=
    array([[1.5],
           [3.5]], dtype=float32)>
    """
    return _reduce("Mean", input_tensor, axis, keepdims)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Largest entry of ``input_tensor`` over ``axis`` (all axes if None).

    >>> tf.reduce_max(tf.constant([[1.0, 2.0], [3.0, 4.0]]), axis=0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 4.], dtype=float32)>
    """
    return _reduce("Max", input_tensor, axis, keepdims)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Smallest entry of ``input_tensor`` over ``axis`` (all axes if None).

    >>> tf.reduce_min(tf.constant([[1.0, 2.0], [3.0, 4.0]]), axis=0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
    """
    return _reduce("Min", input_tensor, axis, keepdims)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Product of ``input_tensor``'s entries over ``axis`` (all axes if None).

    >>> tf.reduce_prod(tf.constant([[1.0, 2.0], [3.0, 4.0]]), axis=1)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 2., 12.], dtype=float32)>
    """
    return _reduce("Prod", input_tensor, axis, keepdims)


def reduce_any(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Logical or of ``input_tensor``'s entries over ``axis`` (all axes if None).

    >>> tf.reduce_any(tf.constant([[True, False], [False, False]]), axis=1)
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>
    """
    return _reduce("Any", input_tensor, axis, keepdims)


def reduce_all(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Logical and of ``input_tensor``'s entries over ``axis`` (all axes if None).

    >>> tf.reduce_all(tf.constant([[True, False], [True, True]]), axis=1)
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>
    """
    return _reduce("All", input_tensor, axis, keepdims)


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """``log(sum(exp(input_tensor)))`` over ``axis``, computed without overflow.

    TensorFlow's composite, op for op, so gradients (and their None/zeros) match.

    The max is shifted out for stability but behind stop_gradient, and replaced by 0
    where it is not finite (all -inf, or inf/nan) to keep the shift itself finite.

    >>> tf.reduce_logsumexp(tf.constant([0.0, 0.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.6931472>
    """
    raw_max = reduce_max(input_tensor, axis, keepdims=True)
    my_max = math.stop_gradient(math.where(math.is_finite(raw_max), raw_max, zeros_like(raw_max)))
    result = math.log(reduce_sum(math.exp(math.subtract(input_tensor, my_max)), axis, keepdims))
    if not keepdims:
        my_max = array.reshape(my_max, _dims.shape_of(result))
    return math.add(result, my_max)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Variance (population, as TensorFlow) over ``axis`` (all axes if None).

    TF's composite: mean of squared deviations from the (kept-dims) mean.

    >>> tf.math.reduce_variance(tf.constant([1.0, 3.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    x = input_tensor if isinstance(input_tensor, Tensor) else convert_to_tensor(input_tensor)
    if not x.dtype.is_floating:
        raise TypeError(f"Input must be either real or complex. Received integer type {x.dtype.name}.")
    means = reduce_mean(x, axis, keepdims=True)
    return reduce_mean(math.square(math.subtract(x, means)), axis, keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Standard deviation (population, as TensorFlow) over ``axis`` (all axes if None).

    >>> tf.math.reduce_std(tf.constant([1.0, 3.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    return math.sqrt(reduce_variance(input_tensor, axis, keepdims))


def _arg(op, x, axis, output_type):
    return apply(op, [x], {"axis": 0 if axis is None else int(_axis(axis)),
                           "output_type": D.as_dtype(output_type)})


def argmax(input, axis=None, output_type=D.int64, name=None) -> Tensor:
    """Index of the largest entry along ``axis`` (default 0), as ``output_type``.

    >>> tf.argmax(tf.constant([[1.0, 5.0], [7.0, 2.0]]), axis=1)
    <tf.Tensor: shape=(2,), dtype=int64, numpy=array([1, 0])>
    """
    return _arg("ArgMax", input, axis, output_type)


def argmin(input, axis=None, output_type=D.int64, name=None) -> Tensor:
    """Index of the smallest entry along ``axis`` (default 0), as ``output_type``.

    >>> tf.argmin(tf.constant([[1.0, 5.0], [7.0, 2.0]]), axis=1)
    <tf.Tensor: shape=(2,), dtype=int64, numpy=array([0, 1])>
    """
    return _arg("ArgMin", input, axis, output_type)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None) -> Tensor:
    """Sums of ``data``'s rows grouped by ``segment_ids``.

    Sum of ``data`` rows into ``num_segments`` buckets; negative ids are dropped.
    ``num_segments`` may be a scalar tensor known only at run time.

    >>> tf.math.unsorted_segment_sum(tf.constant([1.0, 2.0, 3.0]), tf.constant([0, 1, 0]), 2)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([4., 2.], dtype=float32)>
    """
    if _dims.is_symbolic(num_segments):
        return apply("DynamicUnsortedSegmentSum", [data, segment_ids, num_segments],
                     {"num_segments": None})
    return apply("UnsortedSegmentSum", [data, segment_ids], {"num_segments": _int(num_segments)})


def _int(value):
    return int(value.numpy()) if hasattr(value, "numpy") else int(value)


STATIC_FORMS["DynamicUnsortedSegmentSum"] = \
    lambda data, ids, n, num_segments: unsorted_segment_sum(data, ids, n)


def sum_to_shape(g, shape):
    """``g`` summed down to ``shape`` (a shape it was broadcast from): the gradient of a
    broadcast. Static shapes (and unknown dims whose role is clear while tracing: a known
    size against an unknown one) give Sum and Reshape; otherwise the SumToShape op decides
    at run time which axes were stretched from 1, as TensorFlow's BroadcastGradientArgs."""
    gshape = tuple(g.shape)
    if getattr(shape, "fits", False) and gshape == tuple(shape):
        return g     # the gradient of an elementwise op of one tensor has its shape already
    dims, sizes = _dims.resolve(shape)
    if sizes is None and None not in gshape:
        lead = len(gshape) - len(dims)
        axes = list(range(lead)) + [i + lead for i, d in enumerate(dims)
                                    if d == 1 and gshape[i + lead] != 1]
        if axes:
            g = reduce_sum(g, axis=axes, keepdims=False)
        return g if tuple(g.shape) == dims else array.reshape(g, dims)
    lead = len(gshape) - len(dims)
    if lead < 0:
        raise ValueError(f"cannot sum a tensor of shape {list(gshape)} to {list(dims)}")
    pairs = list(zip(dims, gshape[lead:]))
    if any(t is None and d != 1 for t, d in pairs):   # a stretched axis, or not: run time
        return apply("SumToShape", [g, sizes], {"shape": dims})
    if lead:
        g = reduce_sum(g, axis=list(range(lead)), keepdims=False)
    ones = [i for i, (t, d) in enumerate(pairs) if t == 1 and d != 1]
    if ones:
        g = reduce_sum(g, axis=ones, keepdims=True)
    if sizes is None and tuple(g.shape) != dims:
        g = array.reshape(g, dims)   # the sizes an unknown dim of g must have
    return g


STATIC_FORMS["SumToShape"] = lambda g, sizes, shape: sum_to_shape(g, sizes)

__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any",
           "reduce_all", "reduce_logsumexp", "reduce_variance", "reduce_std", "argmax", "argmin",
           "unsorted_segment_sum"]
