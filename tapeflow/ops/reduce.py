"""Reductions: ``reduce_sum`` and friends (``tapeflow.math.reduce_*``)."""
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
        my_max = array.reshape(my_max, _dims.shape_of(result))
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
    """Sum of ``data`` rows into ``num_segments`` buckets; negative ids are dropped.
    ``num_segments`` may be a scalar tensor known only at run time."""
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

__all__ = ["sum_to_shape", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any",
           "reduce_all", "reduce_logsumexp", "reduce_variance", "reduce_std", "argmax", "argmin",
           "unsorted_segment_sum"]
