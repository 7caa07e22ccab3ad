"""Reductions: ``reduce_sum`` and friends (``tapeflow.math.reduce_*``)."""
from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor, convert_to_tensor
from . import array, math
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


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce("Sum", input_tensor, axis, keepdims)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    """Integer means truncate toward zero, as in TensorFlow."""
    return _reduce("Mean", input_tensor, axis, keepdims)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce("Max", input_tensor, axis, keepdims)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce("Min", input_tensor, axis, keepdims)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce("Prod", input_tensor, axis, keepdims)


def reduce_any(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce("Any", input_tensor, axis, keepdims)


def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce("All", input_tensor, axis, keepdims)


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """TensorFlow's composite, op for op, so gradients (and their None/zeros) match.

    The max is shifted out for stability but behind stop_gradient, and replaced by 0
    where it is not finite (all -inf, or inf/nan) to keep the shift itself finite.
    """
    raw_max = reduce_max(input_tensor, axis, keepdims=True)
    my_max = math.stop_gradient(math.where(math.is_finite(raw_max), raw_max, zeros_like(raw_max)))
    result = math.log(reduce_sum(math.exp(math.subtract(input_tensor, my_max)), axis, keepdims))
    if not keepdims:
        my_max = array.reshape(my_max, result.shape)
    return math.add(result, my_max)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """TF's composite: mean of squared deviations from the (kept-dims) mean."""
    x = input_tensor if isinstance(input_tensor, Tensor) else convert_to_tensor(input_tensor)
    if not x.dtype.is_floating:
        raise TypeError(f"Input must be either real or complex. Received integer type {x.dtype.name}.")
    means = reduce_mean(x, axis, keepdims=True)
    return reduce_mean(math.square(math.subtract(x, means)), axis, keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    return math.sqrt(reduce_variance(input_tensor, axis, keepdims))


def _arg(op, x, axis, output_type):
    return apply(op, [x], {"axis": 0 if axis is None else int(_axis(axis)),
                           "output_type": D.as_dtype(output_type)})


def argmax(input, axis=None, output_type=D.int64, name=None):
    return _arg("ArgMax", input, axis, output_type)


def argmin(input, axis=None, output_type=D.int64, name=None):
    return _arg("ArgMin", input, axis, output_type)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sum of ``data`` rows into ``num_segments`` buckets; negative ids are dropped."""
    return apply("UnsortedSegmentSum", [data, segment_ids], {"num_segments": int(num_segments)})


__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any",
           "reduce_all", "reduce_logsumexp", "reduce_variance", "reduce_std", "argmax", "argmin",
           "unsorted_segment_sum"]
