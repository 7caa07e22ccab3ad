"""Creating tensors: zeros, ones, fill, eye, linspace, range (constants, never recorded)."""
from __future__ import annotations

import numpy as np

from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor, Variable, convert_to_tensor, wrap
from . import dims as _dims


def _shape(shape):
    if hasattr(shape, "numpy"):
        shape = shape.numpy().tolist()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def _filled(shape, value):
    """``value`` (a scalar tensor) in every element of ``shape``: a constant when the shape
    and value are known while tracing, else a broadcast read at run time (TensorFlow's Fill)."""
    dims, sizes = _dims.resolve(shape)
    if sizes is None and not _dims.is_symbolic(value):
        return wrap(np.full(dims, value._value, dtype=value.dtype.np))
    if sizes is None:
        return apply("BroadcastTo", [value], {"shape": dims})
    return apply("DynamicBroadcastTo", [value, sizes], {"shape": dims})


def zeros(shape, dtype=D.float32, name=None) -> Tensor:
    """A tensor of zeros of ``shape`` and ``dtype`` (float32 by default).

    >>> tf.zeros([2, 1])
    <tf.Tensor: shape=(2, 1), dtype=float32, numpy=
    array([[0.],
           [0.]], dtype=float32)>
    """
    return _filled(shape, wrap(np.zeros((), D.as_dtype(dtype).np)))


def ones(shape, dtype=D.float32, name=None) -> Tensor:
    """A tensor of ones of ``shape`` and ``dtype`` (float32 by default).

    >>> tf.ones([2])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 1.], dtype=float32)>
    """
    return _filled(shape, wrap(np.ones((), D.as_dtype(dtype).np)))


def _like(x):
    return x if isinstance(x, (Tensor, Variable)) or _dims.is_symbolic(x) else convert_to_tensor(x)


def zeros_like(input, dtype=None, name=None) -> Tensor:
    """Zeros with the shape (and by default the dtype) of ``input``.

    >>> tf.zeros_like(tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 0.], dtype=float32)>
    """
    x = _like(input)
    return _filled(_dims.shape_of(x), wrap(np.zeros((), D.as_dtype(dtype or x.dtype).np)))


def ones_like(input, dtype=None, name=None) -> Tensor:
    """Ones with the shape (and by default the dtype) of ``input``.

    >>> tf.ones_like(tf.constant([1, 2]))
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 1], dtype=int32)>
    """
    x = _like(input)
    return _filled(_dims.shape_of(x), wrap(np.ones((), D.as_dtype(dtype or x.dtype).np)))


def fill(dims, value, name=None) -> Tensor:
    """A tensor of shape ``dims`` with every entry ``value`` (a tensor of the trace too;
    ``dims`` may hold sizes known only at run time).

    >>> tf.fill([2, 2], 7)
    <tf.Tensor: shape=(2, 2), dtype=int32, numpy=
    array([[7, 7],
           [7, 7]], dtype=int32)>
    """
    v = value if _dims.is_symbolic(value) else convert_to_tensor(value)
    if len(v.shape) != 0:
        raise ValueError(f"value must be a scalar, got shape {list(v.shape)}")
    return _filled(dims, v)


def eye(num_rows, num_columns=None, batch_shape=None, dtype=D.float32, name=None) -> Tensor:
    """An identity matrix (or a batch of them), ``num_rows`` by ``num_columns``.

    >>> tf.eye(2)
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[1., 0.],
           [0., 1.]], dtype=float32)>
    """
    m = np.eye(int(num_rows), None if num_columns is None else int(num_columns), dtype=D.as_dtype(dtype).np)
    if batch_shape is not None:
        m = np.broadcast_to(m, _shape(batch_shape) + m.shape).copy()
    return wrap(m)


def linspace(start, stop, num, name=None, axis=0) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive.

    >>> tf.linspace(0.0, 1.0, 3)
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0. , 0.5, 1. ], dtype=float32)>
    """
    s, e = convert_to_tensor(start), convert_to_tensor(stop)
    dt = s.dtype if s.dtype.is_floating else D.float32
    return wrap(np.linspace(s._value, e._value, int(num), axis=axis).astype(dt.np))


def range(start, limit=None, delta=1, dtype=None, name="range") -> Tensor:
    """Numbers from ``start`` up to (not including) ``limit`` in steps of ``delta``.

    >>> tf.range(5)
    <tf.Tensor: shape=(5,), dtype=int32, numpy=array([0, 1, 2, 3, 4], dtype=int32)>
    >>> tf.range(1.0, 2.0, 0.5)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1. , 1.5], dtype=float32)>
    """
    if limit is None:
        start, limit = 0, start
    vals = [convert_to_tensor(v) for v in (start, limit, delta)]
    if dtype is None:
        order = [D.int32, D.int64, D.float16, D.float32, D.float64]
        dtype = max((v.dtype for v in vals), key=lambda d: order.index(d) if d in order else 0)
    dtype = D.as_dtype(dtype)
    if not all(hasattr(v, "_value") for v in vals):
        # a symbolic bound: the length is data, and every tensor of a traced graph has a static
        # shape; a `for` statement iterates such a range without making it (tracer/pyfor.py)
        raise TypeError("tf.range with a symbolic tensor bound inside tapeflow.function can "
                        "only be iterated by a `for` statement (directly or through "
                        "enumerate/zip); its length is not known when tracing")
    return wrap(np.arange(*(v._value for v in vals)).astype(dtype.np))


__all__ = ["zeros", "ones", "zeros_like", "ones_like", "fill", "eye", "linspace", "range"]
