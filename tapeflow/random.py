"""Seedable random tensors: ``tapeflow.random.set_seed/normal/uniform``.

Eagerly: one NumPy generator per process, reset by ``set_seed``; an op-level ``seed``
combines with the global seed so a program with fixed seeds is repeatable.

Inside a function being traced a draw must be an op of the program that gives new values at
each call (TensorFlow's stateful random ops), not a constant drawn once while tracing. There
the samplers draw from a ``Generator`` (ops/random.py: a state variable the program reads
and advances, so loops carry it too), one per op-level seed, seeded from the NumPy generator
so that ``set_seed`` makes a run repeatable. The values are not TensorFlow's (its stateful
kernels seed themselves from graph-level op counters); the stateless and ``Generator``
names give TensorFlow's numbers bit for bit.
"""
from __future__ import annotations

import numpy as np

from .ir import dtypes as D
from .ops import array as _array
from .ops import samplers as _samplers
from .ops.creation import _shape
from .ops.random import Generator as _Generator
from .ops.sort import argsort as _argsort
from .runtime.recorder import STATE, init_scope
from .runtime.tensor import Tensor, convert_to_tensor, wrap

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
    with init_scope():
        for op_seed, g in _in_functions.items():    # traced functions keep their generator
            g.reset_from_seed(_function_seed(op_seed))


def _generator(seed):
    if seed is None:
        return _rng
    return np.random.default_rng([int(seed), _global_seed or 0])


_in_functions = {}      # op-level seed -> the Generator draws inside functions use


def _function_seed(op_seed):
    return int(_generator(op_seed).integers(0, 1 << 62))


def _traced_generator(seed):
    """The generator a draw inside a function being traced uses, or None when not tracing."""
    if not STATE.traces:
        return None
    key = None if seed is None else int(seed)
    if key not in _in_functions:
        with init_scope():          # its state variable lives outside every function
            _in_functions[key] = _Generator.from_seed(_function_seed(key))
    return _in_functions[key]


def _shape_of(x):
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _seed_pair(g):
    """A [2] seed for a stateless sampler, drawn by the program from ``g``."""
    return g.make_seeds(1)[:, 0]


def normal(shape, mean=0.0, stddev=1.0, dtype=D.float32, seed=None, name=None) -> Tensor:
    """Samples of a normal distribution with ``mean`` and ``stddev``, of ``shape``.

    >>> tf.random.normal([2, 3], seed=1).shape
    TensorShape([2, 3])
    """
    dt = D.as_dtype(dtype)
    g = _traced_generator(seed)
    if g is not None:
        return g.normal(shape, mean, stddev, dt)
    return wrap(_generator(seed).normal(float(mean), float(stddev), _shape(shape)).astype(dt.np))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=D.float32, seed=None, name=None) -> Tensor:
    """Normal samples redrawn until within two standard deviations of the mean.

    >>> x = tf.random.truncated_normal([1000], seed=1)
    >>> bool(tf.reduce_all(tf.abs(x) <= 2.0))
    True
    """
    traced = _traced_generator(seed)
    if traced is not None:
        return traced.truncated_normal(shape, mean, stddev, dtype)
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
    if dt.is_integer and maxval is None:
        raise ValueError("Must specify maxval for integer dtype")
    traced = _traced_generator(seed)
    if traced is not None:
        return traced.uniform(shape, minval, 1.0 if maxval is None else maxval, dt)
    g = _generator(seed)
    if dt.is_integer:
        return wrap(g.integers(int(minval), int(maxval), _shape(shape)).astype(dt.np))
    maxval = 1.0 if maxval is None else maxval
    return wrap(g.uniform(float(minval), float(maxval), _shape(shape)).astype(dt.np))


def _values(x, what):
    """The value of an eager tensor or array-like (random ops draw eagerly, see the module)."""
    if hasattr(x, "aval") and not hasattr(x, "numpy"):
        raise ValueError(f"tf.random: {what} must be known when the samples are drawn")
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def categorical(logits, num_samples, dtype=None, seed=None, name=None) -> Tensor:
    """``num_samples`` class indices per row of ``logits`` (unnormalized log-probabilities),
    drawn by the Gumbel-max trick; int64 unless ``dtype`` says int32.

    >>> tf.random.categorical(tf.math.log([[0.0, 1.0]]), 3, seed=1).numpy().tolist()
    [[1, 1, 1]]
    """
    traced = _traced_generator(seed)
    if traced is not None:
        return _samplers.stateless_categorical(logits, num_samples, _seed_pair(traced),
                                               dtype=D.int64 if dtype is None else dtype)
    z = _values(logits, "logits").astype(np.float64)
    if z.ndim != 2:
        raise ValueError(f"logits should be a matrix, got shape {list(z.shape)}")
    g = _generator(seed)
    gumbel = -np.log(-np.log(g.uniform(size=(z.shape[0], int(num_samples), z.shape[1]))))
    draws = np.argmax(z[:, None, :] + gumbel, axis=-1)
    dt = D.as_dtype(dtype) if dtype is not None else D.int64
    return wrap(draws.astype(dt.np))


def shuffle(value, seed=None, name=None) -> Tensor:
    """``value`` with its first dimension randomly permuted.

    >>> sorted(tf.random.shuffle(tf.constant([1, 2, 3]), seed=1).numpy().tolist())
    [1, 2, 3]
    """
    traced = _traced_generator(seed)
    if traced is not None:
        value = convert_to_tensor(value)
        if len(value.shape) == 0:
            raise ValueError("shuffle needs a tensor of rank >= 1")
        keys = traced.uniform([value.shape[0]], dtype=D.float64)   # a random permutation
        return _array.gather(value, _argsort(keys))
    v = _values(value, "value")
    if v.ndim == 0:
        raise ValueError("shuffle needs a tensor of rank >= 1")
    return wrap(np.ascontiguousarray(v[_generator(seed).permutation(v.shape[0])]))


def gamma(shape, alpha, beta=None, dtype=D.float32, seed=None, name=None) -> Tensor:
    """Gamma samples of concentration ``alpha`` and rate ``beta`` (1 by default), of shape
    ``shape + broadcast(alpha, beta).shape``.

    >>> tf.random.gamma([2], alpha=[1.0, 3.0], seed=1).shape
    TensorShape([2, 2])
    """
    traced = _traced_generator(seed)
    if traced is not None:
        params = np.broadcast_shapes(_shape_of(alpha), () if beta is None else _shape_of(beta))
        return _samplers.stateless_gamma(tuple(_shape(shape)) + params, _seed_pair(traced), alpha,
                                         beta, dtype)
    a = _values(alpha, "alpha").astype(np.float64)
    b = np.ones_like(a) if beta is None else _values(beta, "beta").astype(np.float64)
    a, b = np.broadcast_arrays(a, b)
    out_shape = tuple(_shape(shape)) + a.shape
    draws = _generator(seed).gamma(np.broadcast_to(a, out_shape), 1.0 / np.broadcast_to(b, out_shape))
    return wrap(draws.astype(D.as_dtype(dtype).np))


def poisson(shape, lam, dtype=D.float32, seed=None, name=None) -> Tensor:
    """Poisson samples of rate ``lam``, of shape ``shape + lam.shape``.

    >>> tf.random.poisson([3], 2.0, seed=1).shape
    TensorShape([3])
    """
    traced = _traced_generator(seed)
    if traced is not None:
        return _samplers.stateless_poisson(tuple(_shape(shape)) + _shape_of(lam),
                                           _seed_pair(traced), lam, dtype)
    lam = _values(lam, "lam").astype(np.float64)
    out_shape = tuple(_shape(shape)) + lam.shape
    draws = _generator(seed).poisson(np.broadcast_to(lam, out_shape))
    return wrap(draws.astype(D.as_dtype(dtype).np))


__all__ = ["set_seed", "normal", "truncated_normal", "uniform", "categorical", "shuffle", "gamma",
           "poisson"]

# TensorFlow's counter-based names, with its Philox numbers bit for bit (ops/random.py)
from .ops.random import (Algorithm, Generator, create_rng_state, fold_in,  # noqa: E402,F401
                         get_global_generator, set_global_generator, split, stateless_normal,
                         stateless_truncated_normal, stateless_uniform)

__all__ = __all__ + ["Algorithm", "Generator", "create_rng_state", "fold_in",
                     "get_global_generator", "set_global_generator", "split", "stateless_normal",
                     "stateless_truncated_normal", "stateless_uniform"]

# TensorFlow's stateless samplers, its values bit for bit (ops/samplers.py)
from .ops.samplers import (stateless_binomial, stateless_categorical,  # noqa: E402,F401
                           stateless_gamma, stateless_parameterized_truncated_normal,
                           stateless_poisson)

__all__ = __all__ + ["stateless_binomial", "stateless_categorical", "stateless_gamma",
                     "stateless_parameterized_truncated_normal", "stateless_poisson"]
