"""Seedable random tensors: ``tapeflow.random.set_seed/normal/uniform``.

One NumPy generator per process, reset by ``set_seed``; an op-level ``seed``
combines with the global seed so a program with fixed seeds is repeatable.
"""
from __future__ import annotations

import numpy as np

from .ir import dtypes as D
from .ops import array as _array, math as _math, reduce as _reduce
from .ops.creation import _shape
from .runtime.tensor import Tensor, wrap

_global_seed = None
_rng = np.random.default_rng()


def set_seed(seed: int | None) -> None:
    """Make every later random op repeatable (as ``tf.random.set_seed``).

    >>> tf.random.set_seed(7)
    >>> a = tf.random.uniform([3])
    >>> tf.random.set_seed(7)
    >>> bool(tf.reduce_all(a == tf.random.uniform([3])))
    True
    """
    global _global_seed, _rng
    _global_seed = None if seed is None else int(seed)
    _rng = np.random.default_rng(_global_seed)


def _generator(seed):
    if seed is None:
        return _rng
    return np.random.default_rng([int(seed), _global_seed or 0])


def normal(shape, mean=0.0, stddev=1.0, dtype=D.float32, seed=None, name=None) -> Tensor:
    """Samples of a normal distribution with ``mean`` and ``stddev``, of ``shape``.

    >>> tf.random.normal([2, 3], seed=1).shape
    TensorShape([2, 3])
    """
    dt = D.as_dtype(dtype)
    return wrap(_generator(seed).normal(float(mean), float(stddev), _shape(shape)).astype(dt.np))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=D.float32, seed=None, name=None) -> Tensor:
    """Normal samples redrawn until within two standard deviations of the mean.

    >>> x = tf.random.truncated_normal([1000], seed=1)
    >>> bool(tf.reduce_all(tf.abs(x) <= 2.0))
    True
    """
    g = _generator(seed)
    shape = _shape(shape)
    x = g.standard_normal(shape)
    bad = np.abs(x) > 2
    while bad.any():
        x[bad] = g.standard_normal(int(bad.sum()))
        bad = np.abs(x) > 2
    return wrap((float(mean) + float(stddev) * x).astype(D.as_dtype(dtype).np))


def uniform(shape, minval=0, maxval=None, dtype=D.float32, seed=None, name=None) -> Tensor:
    """Samples uniform in ``[minval, maxval)`` (``[0, 1)`` for floats by default), of ``shape``.

    >>> x = tf.random.uniform([4], minval=2.0, maxval=3.0, seed=1)
    >>> bool(tf.reduce_all((x >= 2.0) & (x < 3.0)))
    True
    """
    dt = D.as_dtype(dtype)
    g = _generator(seed)
    if dt.is_integer:
        if maxval is None:
            raise ValueError("Must specify maxval for integer dtype")
        return wrap(g.integers(int(minval), int(maxval), _shape(shape)).astype(dt.np))
    maxval = 1.0 if maxval is None else maxval
    return wrap(g.uniform(float(minval), float(maxval), _shape(shape)).astype(dt.np))


def categorical(logits, num_samples: int, dtype=None, seed=None, name=None) -> Tensor:
    """``num_samples`` class indices per row of ``logits`` ([batch, classes], unnormalized
    log-probabilities): a [batch, num_samples] int64 tensor (``dtype``: int32 or int64).
    The Gumbel-max trick on this module's generator: argmax of the logits plus Gumbel noise,
    so it runs in functions too (where, as this module's other ops, the noise is drawn once
    per trace); the draws are not TensorFlow's (its stateful streams are its own).

    >>> tf.random.categorical(tf.math.log([[0.0, 1.0]]), 3, seed=1)
    <tf.Tensor: shape=(1, 3), dtype=int64, numpy=array([[1, 1, 1]])>
    """
    dt = D.as_dtype(dtype or D.int64)
    if dt not in (D.int32, D.int64):
        raise ValueError(f"categorical: dtype must be int32 or int64, got {dt.name}")
    logits = _math._tensor(logits)
    if len(logits.shape) != 2:
        raise ValueError(f"logits should be a matrix, got shape {logits.shape}")
    batch, classes = logits.shape
    g = _generator(seed)
    u = g.uniform(np.finfo(np.float64).tiny, 1.0, (batch, int(num_samples), classes))
    gumbel = wrap((-np.log(-np.log(u))).astype(logits.dtype.np))
    scores = _array.expand_dims(logits, 1) + gumbel
    return _math.cast(_reduce.argmax(scores, axis=-1), dt)


def shuffle(value, seed=None, name=None) -> Tensor:
    """``value`` with its first dimension randomly permuted (a gather by a permutation from
    this module's generator; not TensorFlow's draw).

    >>> sorted(tf.random.shuffle(tf.range(5), seed=3).numpy().tolist())
    [0, 1, 2, 3, 4]
    """
    value = _math._tensor(value)
    if not value.shape:
        return value
    n = value.shape[0]
    if n is None:
        raise ValueError("shuffle: the first dimension must be known")
    perm = wrap(_generator(seed).permutation(int(n)).astype(np.int32))
    return _array.gather(value, perm)


from .ops.random import (Algorithm, Generator, create_rng_state, fold_in,  # noqa: E402
                         get_global_generator, set_global_generator, split, stateless_normal,
                         stateless_truncated_normal, stateless_uniform)

__all__ = ["set_seed", "normal", "truncated_normal", "uniform", "categorical", "shuffle",
           "Algorithm", "Generator", "create_rng_state", "fold_in", "get_global_generator",
           "set_global_generator", "split", "stateless_normal", "stateless_truncated_normal",
           "stateless_uniform"]
