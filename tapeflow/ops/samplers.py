"""TensorFlow's stateless samplers: ``stateless_categorical``, ``stateless_gamma``,
``stateless_poisson``, ``stateless_binomial``, ``stateless_parameterized_truncated_normal``
and ``random_index_shuffle``, with TensorFlow's values bit for bit (runtime/philox_samplers.py).

Like TensorFlow's they are ops of the seed, so their values are the same eagerly, traced and
compiled. The parameters are broadcast here, by ordinary ops, before the sampler op sees them.
TensorFlow splits a large categorical or truncated normal draw between its intra-op threads,
each part restarting the stream at its own place: the ops take that thread count
(``tf.config.threading``'s, else the CPUs, as TensorFlow's default) so the values stay
TensorFlow's on the same setting.
"""
from __future__ import annotations

import numpy as np

from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.philox_samplers import tf_intra_op_threads
from ..runtime.tensor import Tensor, convert_to_tensor
from . import array, math
from .creation import _shape
from .random import _is_tensor, _key_counter

_SAMPLE_DTYPES = (D.float16, D.float32, D.float64, D.int32, D.int64)


def _seed(seed):
    seed = math._tensor(seed)
    if seed.dtype not in (D.int32, D.int64) and not seed.dtype.is_floating:
        seed = convert_to_tensor(seed, dtype=D.int64)
    return seed


def _param(x, dtype=None, dtype_hint=None):
    if _is_tensor(x):
        if dtype is not None and x.dtype != D.as_dtype(dtype):
            raise ValueError(f"Tensor conversion requested dtype {D.as_dtype(dtype).name} for "
                             f"Tensor with dtype {x.dtype.name}: {x!r}")
        return x
    if dtype is not None:
        return convert_to_tensor(x, dtype=dtype)
    if dtype_hint is not None and not isinstance(x, np.ndarray):
        values = np.asarray(x)
        if values.dtype.kind in "fiub":
            return convert_to_tensor(x, dtype=dtype_hint)
    return convert_to_tensor(x)


def _broadcast(params):
    """The parameters broadcast to their common shape (TensorFlow's ``BCast`` in its kernels)."""
    try:
        shape = np.broadcast_shapes(*(tuple(p.shape) for p in params))
    except ValueError:
        raise ValueError("Incompatible shapes: " + " vs. ".join(
            str(list(p.shape)) for p in params)) from None
    return [p if tuple(p.shape) == shape else array.broadcast_to(p, shape) for p in params]


def stateless_categorical(logits, num_samples, seed, dtype=D.int64, name=None) -> Tensor:
    """``num_samples`` class indices per row of ``logits`` ([batch, classes] unnormalized
    log-probabilities) that depend on ``seed`` alone: TensorFlow's draws.

    >>> tf.random.stateless_categorical(tf.math.log([[0.5, 0.5]]), 5, seed=[7, 17])
    <tf.Tensor: shape=(1, 5), dtype=int64, numpy=array([[1, 0, 1, 0, 0]])>
    """
    logits = _param(logits)
    dt = D.as_dtype(dtype) if dtype else D.int64
    if dt not in (D.int32, D.int64):
        raise ValueError(f"Argument `dtype` got invalid value {dt!r}. Accepted dtypes are "
                         f"(tf.int32, tf.int64).")
    n = num_samples.numpy() if hasattr(num_samples, "numpy") else num_samples
    return apply("StatelessMultinomial", [logits, _seed(seed)],
                 {"num_samples": int(n), "output_dtype": dt, "threads": tf_intra_op_threads()})


def stateless_gamma(shape, seed, alpha, beta=None, dtype=D.float32, name=None) -> Tensor:
    """Gamma samples of concentration ``alpha`` and rate ``beta`` (1 by default) that depend
    on ``seed`` alone: TensorFlow's values. ``shape`` ends with the broadcast shape of alpha
    and beta. Differentiable with respect to alpha (TensorFlow's implicit gradient) and beta.

    >>> tf.random.stateless_gamma([2], seed=[1, 2], alpha=[0.5, 1.5])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.06695361, 1.3841168 ], dtype=float32)>
    """
    dt = D.as_dtype(dtype)
    alpha = _param(alpha, dtype=dt)
    beta = _param(1 if beta is None else beta, dtype=dt)
    shape = _shape(shape)
    bshape = np.broadcast_shapes(tuple(alpha.shape), tuple(beta.shape))
    alpha_b = alpha if tuple(alpha.shape) == bshape else array.broadcast_to(alpha, bshape)
    key, counter = _key_counter(seed)
    rnd = apply("StatelessRandomGammaV3", [key, counter, alpha_b], {"shape": shape})
    tiny = convert_to_tensor(np.finfo(dt.np).tiny, dtype=dt)
    return math.maximum(tiny, math.divide(rnd, beta))


def stateless_poisson(shape, seed, lam, dtype=D.int32, name=None) -> Tensor:
    """Poisson samples of rate ``lam`` that depend on ``seed`` alone: TensorFlow's values.
    ``shape`` ends with lam's shape; ``dtype`` may be an int or a float dtype.

    >>> tf.random.stateless_poisson([3], seed=[1, 2], lam=4.0)
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([6, 5, 6], dtype=int32)>
    """
    dt = D.as_dtype(dtype)
    if dt not in _SAMPLE_DTYPES:
        raise TypeError(f"Value for attr 'dtype' of {dt.name} is not in the list of allowed "
                        f"values: half, float, double, int32, int64")
    return apply("StatelessRandomPoisson", [_seed(seed), _param(lam)],
                 {"shape": _shape(shape), "dtype": dt})


def stateless_binomial(shape, seed, counts, probs, output_dtype=D.int32, name=None) -> Tensor:
    """Binomial samples of ``counts`` trials with success probability ``probs`` that depend on
    ``seed`` alone: TensorFlow's values. ``shape`` ends with the broadcast shape of counts and
    probs.

    >>> tf.random.stateless_binomial([2], seed=[123, 456], counts=[10., 20.], probs=[0.8])
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([ 5, 16], dtype=int32)>
    """
    dt = D.as_dtype(output_dtype)
    if dt not in _SAMPLE_DTYPES:
        raise TypeError(f"Value for attr 'dtype' of {dt.name} is not in the list of allowed "
                        f"values: half, float, double, int32, int64")
    probs = _param(probs, dtype_hint=D.float32)
    counts = _param(counts, dtype_hint=probs.dtype)
    counts, probs = _broadcast([counts, probs])
    return apply("StatelessRandomBinomial", [_seed(seed), counts, probs],
                 {"shape": _shape(shape), "dtype": dt})


def stateless_parameterized_truncated_normal(shape, seed, means=0.0, stddevs=1.0, minvals=-2.0,
                                             maxvals=2.0, name=None) -> Tensor:
    """Normal samples of ``means`` and ``stddevs`` truncated to [minvals, maxvals] that depend
    on ``seed`` alone: TensorFlow's values (float32 and float64). ``shape`` ends with the
    broadcast shape of the parameters. Differentiable with respect to them (TensorFlow's
    implicit gradient).

    >>> tf.random.stateless_parameterized_truncated_normal([3], seed=[1, 2])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0.5441101 , 0.20738031, 0.07356432], dtype=float32)>
    """
    params = _broadcast([_param(x) for x in (means, stddevs, minvals, maxvals)])
    return apply("StatelessParameterizedTruncatedNormal", [_seed(seed)] + params,
                 {"shape": _shape(shape), "threads": tf_intra_op_threads()})


def random_index_shuffle(index, seed, max_index, rounds=4, name=None) -> Tensor:
    """The position of ``index`` in the pseudorandom permutation of [0, max_index] that
    ``seed`` (3 ints, or one row of 3 per index) picks: TensorFlow's values (its Simon
    cipher with cycle walking; ``rounds`` even and at least 4).

    >>> tf.random_index_shuffle(tf.range(4), [498247692, 5, 9], 3)
    <tf.Tensor: shape=(4,), dtype=int32, numpy=array([2, 0, 1, 3], dtype=int32)>
    """
    index = _param(index)
    max_index = _param(max_index, dtype=index.dtype)
    return apply("RandomIndexShuffle", [index, _param(seed), max_index], {"rounds": int(rounds)})


__all__ = ["stateless_categorical", "stateless_gamma", "stateless_poisson", "stateless_binomial",
           "stateless_parameterized_truncated_normal", "random_index_shuffle"]
