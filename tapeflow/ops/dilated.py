"""Dilation by moving space into the batch: ``tf.nn.with_space_to_batch``,
``tf.required_space_to_batch_paddings``, ``tf.space_to_batch_nd`` and ``tf.nn.pool`` (whose
dilated windows TensorFlow computes this way), composed as TensorFlow composes them.

A window dilated by ``rate`` over an input is an undilated window over each of the
``rate``-strided sub-grids of that input; SpaceToBatchND puts those sub-grids side by side in
the batch, the op runs on them with VALID padding, BatchToSpaceND puts them back. The
paddings are computed from static sizes (a function's shapes are known when it is traced).
"""
from __future__ import annotations

import numpy as np

from ..ir import dtypes as D
from ..runtime.tensor import Tensor, constant
from . import array
from .conv import (_tensor, avg_pool, avg_pool3d, batch_to_space, max_pool, max_pool3d,
                   space_to_batch)
from .static_values import get_static_value


def _static_ints(value, what):
    """A list or tensor of ints known before running, as an int32 NumPy array."""
    v = get_static_value(value) if hasattr(value, "aval") or isinstance(value, Tensor) \
        else value
    if v is None:
        raise TypeError(f"`{what}` must be known before the program runs (a list of ints or a "
                        f"constant tensor), got {value!r}")
    return np.asarray(v, dtype=np.int64).astype(np.int32)


def _required_paddings(input_shape, block_shape, base_paddings):
    pad_start = base_paddings[:, 0]
    orig_pad_end = base_paddings[:, 1]
    full = input_shape + pad_start + orig_pad_end
    extra = (block_shape - full % block_shape) % block_shape
    paddings = np.stack([pad_start, orig_pad_end + extra], axis=1).astype(np.int32)
    crops = np.stack([np.zeros_like(extra), extra], axis=1).astype(np.int32)
    return paddings, crops


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None,
                                     name=None) -> tuple[Tensor, Tensor]:
    """(paddings, crops), int32 [N, 2]: ``base_paddings`` plus what the end needs so each
    padded size is a multiple of ``block_shape``; ``crops`` undoes the extra.

    >>> p, c = tf.required_space_to_batch_paddings([5, 4], [2, 3], [[1, 0], [0, 0]])
    >>> p.numpy().tolist(), c.numpy().tolist()
    ([[1, 0], [0, 2]], [[0, 0], [0, 2]])
    """
    block = _static_ints(block_shape, "block_shape")
    if block.ndim != 1:
        raise ValueError(f"Shape {list(block.shape)} must have rank 1")
    m = block.shape[0]
    if m == 0:
        z = np.zeros([0, 2], np.int32)
        return constant(z), constant(z)
    shape = _static_ints(input_shape, "input_shape")
    if shape.shape != (m,):
        raise ValueError(f"Shapes {list(shape.shape)} and [{m}] are incompatible")
    base = np.zeros([m, 2], np.int32) if base_paddings is None else \
        _static_ints(base_paddings, "base_paddings")
    if base.shape != (m, 2):
        raise ValueError(f"Shapes {list(base.shape)} and [{m}, 2] are incompatible")
    paddings, crops = _required_paddings(shape, block, base)
    return constant(paddings, D.int32), constant(crops, D.int32)


def space_to_batch_nd(input, block_shape, paddings, name=None) -> Tensor:
    """SpaceToBatchND: ``tf.space_to_batch`` (TensorFlow's V2 name for the same op).

    >>> tf.space_to_batch_nd(tf.ones([1, 4, 4, 1]), [2, 2], [[0, 0], [0, 0]]).shape
    TensorShape([4, 2, 2, 1])
    """
    return space_to_batch(input, block_shape, paddings)


def _adjust(orig, fill, spatial_dims):
    """TensorFlow's ``_with_space_to_batch_adjust``: rows of ``orig`` for the spatial
    dimensions, ``fill`` rows for the dimensions between them (from dimension 1 on)."""
    orig = np.asarray(orig)
    parts, prev, i = [], 0, 0
    while i < len(spatial_dims):
        start = i
        if spatial_dims[i] > 1:
            parts.append(np.full([spatial_dims[i] - 1 - prev] + list(orig.shape[1:]), fill,
                                 orig.dtype))
        while i + 1 < len(spatial_dims) and spatial_dims[i + 1] == spatial_dims[i] + 1:
            i += 1
        parts.append(orig[start:i + 1])
        prev = spatial_dims[i]
        i += 1
    return np.concatenate(parts)


def _base_paddings(padding, filter_shape, rate, n, data_format):
    if isinstance(padding, str):
        if padding == "SAME":
            if filter_shape is None:
                raise ValueError(f"`filter_shape` must be specified for `padding='SAME'`. "
                                 f"Received: filter_shape={filter_shape} and padding={padding}")
            fs = _static_ints(filter_shape, "filter_shape")[:n]
            extra = (fs - 1) * rate
            start = extra // 2
            return np.stack([start, extra - start], axis=1)
        if padding == "VALID":
            return np.zeros([n, 2], np.int32)
        raise ValueError(f"`padding` must be one of 'SAME' or 'VALID'. Received: "
                         f"padding={padding}")
    pads = np.asarray(padding, np.int32).reshape(n + 2, 2)
    return pads[2:] if data_format is not None and data_format.startswith("NC") else pads[1:-1]


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None, spatial_dims=None,
                        data_format=None) -> Tensor:
    """``op(converted_input, num_spatial_dims, "VALID")`` on the input's ``dilation_rate``
    sub-grids moved into the batch, the result moved back: a dilated op from an undilated
    one. With every rate 1 it is ``op(input, num_spatial_dims, padding)``.

    >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> y = tf.nn.with_space_to_batch(x, [2, 2], "VALID",
    ...     lambda v, n, p: tf.nn.max_pool2d(v, 2, 1, p))
    >>> y[0, :, :, 0]
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[10., 11.],
           [14., 15.]], dtype=float32)>
    """
    x = _tensor(input)
    rate = _static_ints(dilation_rate, "dilation_rate")
    if rate.ndim != 1:
        raise ValueError(f"`dilation_rate.shape.rank` must be 1. Received: "
                         f"dilation_rate={dilation_rate} of rank {rate.ndim}")
    n = rate.shape[0]
    first_spatial = 2 if data_format is not None and data_format.startswith("NC") else 1
    if spatial_dims is None:
        spatial_dims = range(first_spatial, n + first_spatial)
    orig = list(spatial_dims)
    dims = sorted(set(int(v) for v in orig))
    if dims != orig or any(v < 1 for v in dims):
        raise ValueError(f"`spatial_dims` must be a monotonically increasing sequence of "
                         f"positive integers. Received: spatial_dims={orig}")
    want = dims[-1] if first_spatial == 2 else dims[-1] + 1
    if len(x.shape) < want:
        raise ValueError(f"`input.shape.rank` must be at least {want}. Received: "
                         f"input.shape={x.shape} with rank {len(x.shape)}")
    if np.any(rate < 1):
        raise ValueError(f"`dilation_rate` must be positive. Received: dilation_rate={rate}")
    if np.all(rate == 1):
        return op(x, n, padding)
    base = _base_paddings(padding, filter_shape, rate, n, data_format)
    sizes = np.array([x.shape[i] for i in dims], np.int32)
    paddings, crops = _required_paddings(sizes, rate, base.astype(np.int32))
    block = _adjust(rate, 1, dims)
    converted = space_to_batch(x, block, _adjust(paddings, 0, dims))
    result = op(converted, n, "VALID")
    return batch_to_space(result, block, _adjust(crops, 0, dims))


def _strides_and_rates(n, strides, rates):
    """TensorFlow's ``_get_strides_and_dilation_rate``."""
    rates = _positive_ints(rates, n, "dilation_rate")
    strides = _positive_ints(strides, n, "strides")
    if np.any(strides > 1) and np.any(rates > 1):
        raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
                         f"Received: strides={strides} and dilation_rate={rates}")
    return strides, rates


def _positive_ints(values, n, name):
    """``values`` (None: all ones) as ``n`` positive int32s, with TensorFlow's errors naming ``name``."""
    if values is None:
        values = [1] * n
    elif len(values) != n:
        raise ValueError(f"`len({name})` should be {n}. Received: {name}={values} "
                         f"of length {len(values)}")
    values = np.array(values, dtype=np.int32)
    if np.any(values < 1):
        raise ValueError(f"all values of `{name}` must be positive. Received: {name}={values}")
    return values


def pool(input, window_shape, pooling_type, strides=None, padding="VALID", data_format=None,
         dilations=None, name=None) -> Tensor:
    """N-D max or average pooling, ``window_shape`` and ``strides`` over the spatial
    dimensions; ``dilations`` above 1 (VALID padding only) through with_space_to_batch, as
    TensorFlow computes them.

    >>> tf.nn.pool(tf.ones([1, 6, 6, 2]), [2, 3], "MAX", strides=[2, 3]).shape
    TensorShape([1, 3, 2, 2])
    >>> tf.nn.pool(tf.reshape(tf.range(5.0), [1, 5, 1]), [2], "MAX", dilations=[2])[0, :, 0]
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([2., 3., 4.], dtype=float32)>
    """
    x = _tensor(input)
    window_shape = [int(v) for v in window_shape]
    n = len(window_shape)
    if n < 1 or n > 3:
        raise ValueError(f"`len(window_shape)` must be 1, 2, or 3. Received: "
                         f"window_shape={window_shape} of length {n}")
    if len(x.shape) != n + 2:
        raise ValueError(f"Shape {x.shape} must have rank {n + 2}")
    strides, rates = _strides_and_rates(n, strides, dilations)
    if padding == "SAME" and np.any(rates > 1):
        raise ValueError(f"pooling with 'SAME' padding is not implemented for `dilation_rate` > "
                         f"1. Received: padding={padding} and dilation_rate={rates}")
    if np.any(strides > np.array(window_shape)):
        raise ValueError(f"`strides` > `window_shape` not supported due to inconsistency "
                         f"between CPU and GPU implementations. Received: strides={strides} "
                         f"and window_shape={window_shape}")
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"{n}-D {pooling_type} pooling is not supported.")
    first = data_format is not None and data_format.startswith("NC")
    lead = [1, 1] if first else [1]
    ksize = lead + window_shape + ([] if first else [1])
    step = lead + strides.tolist() + ([] if first else [1])
    spatial = list(range(2, n + 2) if first else range(1, n + 1))
    if n == 1:
        if data_format not in (None, "NWC", "NCW"):
            raise ValueError(f"data_format must be either 'NWC' or 'NCW'. Received: "
                             f"data_format={data_format}")
        fmt = "NCHW" if data_format == "NCW" else "NHWC"
        ksize, step = [1] + ksize, [1] + step
    else:
        fmt = data_format
    fn = {("MAX", 3): max_pool3d, ("AVG", 3): avg_pool3d}.get(
        (pooling_type, n), max_pool if pooling_type == "MAX" else avg_pool)

    def op(converted, _, converted_padding):
        if n == 1:
            converted = array.expand_dims(converted, spatial[0])
        y = fn(converted, ksize, step, converted_padding, data_format=fmt)
        return array.squeeze(y, [spatial[0]]) if n == 1 else y

    return with_space_to_batch(x, rates, padding, op, spatial_dims=spatial,
                               filter_shape=window_shape)


__all__ = ["pool", "with_space_to_batch"]
