"""TensorFlow's composite functions of ``tf.nn`` and ``tf.math`` that are Python over other ops:
moments and batch normalization, silu/crelu, the weighted and Poisson losses, the distribution
helpers, count_nonzero and friends, and the unsorted segment means.

Each follows TF's Python op for op (float16 inputs of the moments are computed in float32, as
TF does), so values and gradients, their Nones included, are TF's.
"""
from __future__ import annotations

import numpy as np

from ..ir import dtypes as D
from ..runtime.tensor import Tensor
from . import math as m
from .array import concat, expand_dims, gather, reshape, squeeze
from .creation import ones_like, zeros_like
from .nn import relu
from .reduce import reduce_all, reduce_mean, reduce_sum, unsorted_segment_sum
from .special import divide_no_nan, squared_difference


def _axes(axes):
    if hasattr(axes, "numpy"):
        axes = axes.numpy().tolist()
    return [int(a) for a in (axes if isinstance(axes, (list, tuple)) else [axes])]


# -- moments and batch normalization ------------------------------------------------------

def moments(x, axes, shift=None, keepdims=False, name=None) -> tuple[Tensor, Tensor]:
    """Mean and variance of ``x`` over ``axes`` (the variance about the mean held constant).

    >>> mean, variance = tf.nn.moments(tf.constant([1.0, 2.0, 3.0, 6.0]), axes=[0])
    >>> float(mean), float(variance)
    (3.0, 3.5)
    """
    x = m._tensor(x)
    axes = _axes(axes)
    y = m.cast(x, D.float32) if x.dtype == D.float16 else x
    mean = reduce_mean(y, axes, keepdims=True)
    variance = reduce_mean(squared_difference(y, m.stop_gradient(mean)), axes, keepdims=True)
    if not keepdims:
        mean, variance = squeeze(mean, axes), squeeze(variance, axes)
    if x.dtype == D.float16:
        return m.cast(mean, D.float16), m.cast(variance, D.float16)
    return mean, variance


def weighted_moments(x, axes, frequency_weights, keepdims=False, name=None) -> tuple[Tensor, Tensor]:
    """Mean and variance of ``x`` over ``axes`` with each entry counted ``frequency_weights`` times.

    >>> mean, var = tf.nn.weighted_moments(tf.constant([1.0, 3.0]), [0], tf.constant([3.0, 1.0]))
    >>> float(mean), float(var)
    (1.5, 0.75)
    """
    x = m._tensor(x)
    axes = _axes(axes)
    frequency_weights = m._tensor(frequency_weights, dtype_hint=x.dtype)
    dtype = x.dtype
    if dtype == D.float16:
        x, frequency_weights = m.cast(x, D.float32), m.cast(frequency_weights, D.float32)
    frequency_weights = m.cast(frequency_weights, x.dtype)
    weighted_input_sum = reduce_sum(m.multiply(frequency_weights, x), axes, keepdims=True)
    broadcasted_weights = m.add(frequency_weights, zeros_like(x))
    sum_of_weights = reduce_sum(broadcasted_weights, axes, keepdims=True)
    weighted_mean = divide_no_nan(weighted_input_sum, sum_of_weights)
    weighted_distsq = reduce_sum(m.multiply(frequency_weights, squared_difference(x, weighted_mean)),
                                 axes, keepdims=True)
    weighted_variance = divide_no_nan(weighted_distsq, sum_of_weights)
    if not keepdims:
        weighted_mean, weighted_variance = squeeze(weighted_mean, axes), squeeze(weighted_variance, axes)
    if dtype == D.float16:
        return m.cast(weighted_mean, dtype), m.cast(weighted_variance, dtype)
    return weighted_mean, weighted_variance


def sufficient_statistics(x, axes, shift=None, keepdims=False, name=None) -> tuple:
    """(count, sum, sum of squares, shift) of ``x`` over ``axes``; with ``shift``, of ``x - shift``.

    >>> n, s, ss, _ = tf.nn.sufficient_statistics(tf.constant([1.0, 2.0, 3.0]), [0])
    >>> float(n), float(s), float(ss)
    (3.0, 6.0, 14.0)
    """
    x = m._tensor(x)
    axes = _axes(axes)
    shape = x.shape
    if any(shape[a] is None for a in axes):
        raise ValueError("sufficient_statistics needs the sizes of the reduced axes")
    counts = m.constant_like(float(np.prod([shape[a] for a in axes])), x)
    if shift is not None:
        shift = m._tensor(shift, dtype_hint=x.dtype)
        m_ss = reduce_sum(m.subtract(x, shift), axes, keepdims=keepdims)
        v_ss = reduce_sum(squared_difference(x, shift), axes, keepdims=keepdims)
    else:
        m_ss = reduce_sum(x, axes, keepdims=keepdims)
        v_ss = reduce_sum(m.square(x), axes, keepdims=keepdims)
    return counts, m_ss, v_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None) -> tuple[Tensor, Tensor]:
    """Mean and variance from sufficient statistics (``shift`` added back to the mean).

    >>> mean, var = tf.nn.normalize_moments(3.0, tf.constant(6.0), tf.constant(14.0), None)
    >>> float(mean), round(float(var), 4)
    (2.0, 0.6667)
    """
    mean_ss = m._tensor(mean_ss)
    divisor = m.reciprocal(m._tensor(counts, dtype_hint=mean_ss.dtype))
    shifted_mean = m.multiply(mean_ss, divisor)
    mean = m.add(shifted_mean, shift) if shift is not None else shifted_mean
    variance = m.subtract(m.multiply(variance_ss, divisor), m.square(shifted_mean))
    return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None) -> Tensor:
    """``scale * (x - mean) / sqrt(variance + variance_epsilon) + offset`` (TF's arrangement).

    >>> tf.nn.batch_normalization(tf.constant([1.0, 3.0]), 2.0, 1.0, 0.5, 2.0, 0.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-1.5,  2.5], dtype=float32)>
    """
    x = m._tensor(x)
    variance = m._tensor(variance, dtype_hint=x.dtype)
    inv = m.rsqrt(m.add(variance, m.constant_like(variance_epsilon, variance)))
    if scale is not None:
        inv = m.multiply(inv, scale)
    inv = m.cast(inv, x.dtype)
    shift = (m.subtract(offset, m.multiply(mean, inv)) if offset is not None
             else m.multiply(m.negative(m._tensor(mean, dtype_hint=x.dtype)), inv))
    return m.add(m.multiply(x, inv), m.cast(shift, x.dtype))


# -- activations and losses -----------------------------------------------------------------

def silu(features, beta=1.0) -> Tensor:
    """``features * sigmoid(beta * features)`` (swish).

    >>> tf.nn.silu(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.       , 0.7310586], dtype=float32)>
    """
    features = m._tensor(features)
    beta = m._tensor(beta, dtype_hint=features.dtype)
    return m.multiply(features, m.sigmoid(m.multiply(beta, features)))


swish = silu


def crelu(features, axis=-1, name=None) -> Tensor:
    """``relu`` of ``features`` and of ``-features``, concatenated along ``axis``.

    >>> tf.nn.crelu(tf.constant([1.0, -2.0]))
    <tf.Tensor: shape=(4,), dtype=float32, numpy=array([1., 0., 0., 2.], dtype=float32)>
    """
    features = m._tensor(features)
    return relu(concat([features, m.negative(features)], axis))


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None) -> Tensor:
    """``exp(log_input) - log_input * targets``, plus Stirling's term for targets > 1 if full.

    >>> tf.nn.log_poisson_loss(tf.constant([2.0]), tf.constant([0.0]))
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([1.], dtype=float32)>
    """
    log_input = m._tensor(log_input)
    targets = m._tensor(targets, dtype_hint=log_input.dtype)
    if tuple(targets.shape) != tuple(log_input.shape) and None not in tuple(targets.shape) + tuple(log_input.shape):
        raise ValueError(f"`log_input` and `targets` must have the same shape, received "
                         f"({log_input.shape} vs {targets.shape}).")
    result = m.subtract(m.exp(log_input), m.multiply(log_input, targets))
    if compute_full_loss:
        point_five = m.constant_like(0.5, targets)
        two_pi = m.constant_like(2 * np.pi, targets)
        stirling = m.add(m.subtract(m.multiply(targets, m.log(targets)), targets),
                         m.multiply(point_five, m.log(m.multiply(two_pi, targets))))
        zeros, ones = zeros_like(targets), ones_like(targets)
        cond = m.logical_and(m.greater_equal(targets, zeros), m.less_equal(targets, ones))
        result = m.add(result, m.where(cond, zeros, stirling))
    return result


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None) -> Tensor:
    """Sigmoid cross entropy with the positive term weighted by ``pos_weight``.

    >>> tf.nn.weighted_cross_entropy_with_logits(tf.constant([1.0]), tf.constant([0.0]), 2.0)
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([1.3862944], dtype=float32)>
    """
    logits = m._tensor(logits)
    labels = m._tensor(labels, dtype_hint=logits.dtype)
    if tuple(labels.shape) != tuple(logits.shape):
        raise ValueError(f"`logits` and `labels` must have the same shape, received "
                         f"({logits.shape} vs {labels.shape}).")
    one = m.constant_like(1, logits)
    log_weight = m.add(one, m.multiply(m.subtract(pos_weight, one), labels))
    return m.add(m.multiply(m.subtract(one, labels), logits),
                 m.multiply(log_weight, m.add(m.log1p(m.exp(m.negative(m.abs(logits)))),
                                              relu(m.negative(logits)))))


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None) -> Tensor:
    """The sum of (weighted) per-example losses over the global batch size (one replica here).

    >>> tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=2.0>
    """
    per_example_loss = m._tensor(per_example_loss)
    if per_example_loss.shape.rank == 0:
        raise ValueError("Invalid value passed for `per_example_loss`. Expected a tensor with "
                         f"at least rank 1. Received: {per_example_loss}.")
    if sample_weight is not None:
        sample_weight = m.cast(m._tensor(sample_weight), per_example_loss.dtype)
        per_example_loss = m.multiply(per_example_loss, sample_weight)
    if global_batch_size is None:
        global_batch_size = per_example_loss.shape[0]
    total = reduce_sum(per_example_loss)
    return divide_no_nan(total, m.constant_like(global_batch_size, total))


def scale_regularization_loss(regularization_loss) -> Tensor:
    """The summed regularization loss divided by the number of replicas (one here).

    >>> tf.nn.scale_regularization_loss([tf.constant(1.0), tf.constant(2.0)])
    <tf.Tensor: shape=(), dtype=float32, numpy=3.0>
    """
    if isinstance(regularization_loss, (list, tuple)):
        regularization_loss = m.add_n(regularization_loss)
    loss = reduce_sum(regularization_loss)
    return m.divide(loss, m.constant_like(1, loss))


def embedding_lookup(params, ids, max_norm=None, name=None) -> Tensor:
    """Rows of ``params`` at ``ids``; a list of shards is split by rows in order ("div").

    >>> tf.nn.embedding_lookup(tf.constant([[1.0, 2.0], [3.0, 4.0]]), [1, 1])
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[3., 4.],
           [3., 4.]], dtype=float32)>
    """
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("Length of `params` must be > 0.")
        params = params[0] if len(params) == 1 else concat(list(params), 0)
    rows = gather(params, ids)
    if max_norm is not None:
        inner = list(range(len(np.shape(ids) if not hasattr(ids, "shape") else ids.shape),
                           len(rows.shape)))
        norms = m.sqrt(reduce_sum(m.square(rows), axis=inner, keepdims=True))
        scale = m.minimum(m.constant_like(1, norms), divide_no_nan(m.constant_like(max_norm, norms), norms))
        rows = m.multiply(rows, scale)
    return rows


# -- tf.math ------------------------------------------------------------------------------

def count_nonzero(input, axis=None, keepdims=None, dtype=D.int64, name=None) -> Tensor:
    """The number of entries that are not zero (not False), over ``axis``.

    >>> tf.math.count_nonzero(tf.constant([[0, 1], [2, 0]]), axis=1)
    <tf.Tensor: shape=(2,), dtype=int64, numpy=array([1, 1])>
    """
    input = m._tensor(input)
    zero = m.constant_like(0, input)
    nonzero = m.cast(m.not_equal(input, zero), D.int64)
    return m.cast(reduce_sum(nonzero, axis=axis, keepdims=bool(keepdims)), dtype)


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """``sqrt(sum(x ** 2))`` over ``axis`` (integers: computed in float64, truncated back).

    >>> tf.math.reduce_euclidean_norm(tf.constant([3.0, 4.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=5.0>
    """
    x = m._tensor(input_tensor)
    if x.dtype.is_integer:
        norm = reduce_euclidean_norm(m.cast(x, D.float64), axis, keepdims)
        return m.cast(norm, x.dtype)
    return m.sqrt(reduce_sum(m.square(x), axis=axis, keepdims=keepdims))


def _pairs_flat(x, compare):
    x = reshape(m._tensor(x), [-1])
    n = x.shape[0]
    if n is not None and n < 2:
        return m._tensor(True)
    return reduce_all(compare(x[:-1], x[1:]))


def is_non_decreasing(x, name=None) -> Tensor:
    """Whether ``x``, read in row-major order, never decreases (True for fewer than 2 entries).

    >>> tf.math.is_non_decreasing([1, 2, 2, 3])
    <tf.Tensor: shape=(), dtype=bool, numpy=True>
    """
    return _pairs_flat(x, m.less_equal)


def is_strictly_increasing(x, name=None) -> Tensor:
    """Whether ``x``, read in row-major order, always increases (True for fewer than 2 entries).

    >>> tf.math.is_strictly_increasing([1, 2, 2, 3])
    <tf.Tensor: shape=(), dtype=bool, numpy=False>
    """
    return _pairs_flat(x, m.less)


def zero_fraction(value, name=None) -> Tensor:
    """The fraction of entries of ``value`` that are zero, as float32.

    >>> tf.math.zero_fraction(tf.constant([0.0, 1.0, 0.0, 2.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.5>
    """
    value = m._tensor(value)
    return reduce_mean(m.cast(m.equal(value, m.constant_like(0, value)), D.float32))


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None) -> Tensor:
    """The elementwise sum of ``inputs`` (TF 2.21: ``add_n``; ``shape``/``tensor_dtype`` checked).

    >>> tf.math.accumulate_n([tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([4., 6.], dtype=float32)>
    """
    inputs = [m._tensor(x) for x in inputs]
    if not inputs:
        raise ValueError("accumulate_n needs at least one input")
    if tensor_dtype is not None and D.as_dtype(tensor_dtype) != inputs[0].dtype:
        raise TypeError(f"tensor_dtype {tensor_dtype} does not match the inputs' "
                        f"{inputs[0].dtype.name}")
    if shape is not None and tuple(shape) != tuple(inputs[0].shape):
        raise ValueError(f"shape {tuple(shape)} does not match the inputs' {tuple(inputs[0].shape)}")
    return m.add_n(inputs)


def _segment_counts(data, segment_ids, num_segments):
    """max(count of ids per segment, 1), shaped to broadcast against the segment sums."""
    ids = m._tensor(segment_ids)
    ones = ones_like(ids, dtype=data.dtype)
    n = unsorted_segment_sum(ones, ids, num_segments)
    extra = len(data.shape) - len(ids.shape)
    for _ in range(extra):          # TF reshapes to [num_segments, 1, ...]: a run-time count too
        n = expand_dims(n, -1)
    return m.maximum(n, m.constant_like(1, n))


def unsorted_segment_mean(data, segment_ids, num_segments, name=None) -> Tensor:
    """The mean of the rows of ``data`` in each segment (0 for an empty one).

    >>> tf.math.unsorted_segment_mean(tf.constant([1.0, 2.0, 6.0]), [0, 0, 2], 3)
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([1.5, 0. , 6. ], dtype=float32)>
    """
    data = m._tensor(data)
    n = _segment_counts(data, segment_ids, num_segments)
    return m.divide(unsorted_segment_sum(data, segment_ids, num_segments), n)


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None) -> Tensor:
    """The sum of the rows of ``data`` in each segment over the root of their number.

    >>> tf.math.unsorted_segment_sqrt_n(tf.constant([1.0, 3.0]), [0, 0], 1)
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([2.828427], dtype=float32)>
    """
    data = m._tensor(data)
    n = _segment_counts(data, segment_ids, num_segments)
    return m.divide(unsorted_segment_sum(data, segment_ids, num_segments), m.sqrt(n))
