"""``tf.nn.fractional_max_pool`` and ``tf.nn.fractional_avg_pool`` (TensorFlow's V2
functions) on the FractionalMaxPool/FractionalAvgPool ops of ir/defs/fractional_pool.py.

A nonzero ``seed`` makes the op deterministic with TensorFlow's seed pair (the global seed,
or 87654321 without one, and ``seed``), so the pooling cells are TensorFlow's bit for bit;
``seed=0`` draws new cells on every call, as TensorFlow does.
"""
from __future__ import annotations

from .. import random as _random
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor
from .conv import _tensor

_DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2 ** 31 - 1


def _ratios(pooling_ratio):
    """TensorFlow's checks, then ``_get_sequence(pooling_ratio, 2, 3)``: four ratios."""
    if isinstance(pooling_ratio, (list, tuple)):
        if pooling_ratio[0] != 1.0 or pooling_ratio[-1] != 1.0:
            raise ValueError(f"`pooling_ratio` should have first and last elements with value "
                             f"1.0. Received: pooling_ratio={pooling_ratio}")
        for element in pooling_ratio:
            if element < 1.0:
                raise ValueError(f"`pooling_ratio` elements should be >= 1.0. Received: "
                                 f"pooling_ratio={pooling_ratio}")
    elif isinstance(pooling_ratio, (int, float)):
        if pooling_ratio < 1.0:
            raise ValueError(f"`pooling_ratio` should be >= 1.0. Received: "
                             f"pooling_ratio={pooling_ratio}")
    else:
        raise ValueError(f"`pooling_ratio` should be an int or a list of ints. Received: "
                         f"pooling_ratio={pooling_ratio}")
    value = [pooling_ratio] if isinstance(pooling_ratio, (int, float)) else list(pooling_ratio)
    if len(value) == 1:
        value = value * 2
    if len(value) == 2:
        value = [1] + value + [1]
    elif len(value) != 4:
        raise ValueError(f"pooling_ratio should be of length 1, 2 or 4. Received: "
                         f"pooling_ratio={pooling_ratio} of length {len(value)}")
    return tuple(float(v) for v in value)


def _seed_pair(seed):
    """TensorFlow's ``random_seed.get_seed(seed)`` for a nonzero op seed."""
    g = _random._global_seed
    pair = (g % 2 ** 31 if g is not None else _DEFAULT_GRAPH_SEED, int(seed) % 2 ** 31)
    return (0, _MAXINT32) if pair == (0, 0) else pair


def _fractional(op, value, pooling_ratio, pseudo_random, overlapping, seed):
    attrs = {"pooling_ratio": _ratios(pooling_ratio), "pseudo_random": bool(pseudo_random),
             "overlapping": bool(overlapping), "deterministic": seed != 0, "seed": 0,
             "seed2": 0}
    if seed != 0:
        attrs["seed"], attrs["seed2"] = _seed_pair(seed)
    return tuple(apply(op, [_tensor(value)], attrs))


def fractional_max_pool(value, pooling_ratio, pseudo_random=False, overlapping=False, seed=0,
                        name=None) -> tuple[Tensor, Tensor, Tensor]:
    """(pooled, row boundaries, column boundaries): ``value`` [N, H, W, C] max-pooled to
    ``floor(H / ratio)`` x ``floor(W / ratio)`` cells of random sizes.

    >>> tf.random.set_seed(None)   # no global seed: the seed pair is (87654321, 7)
    >>> y, rows, cols = tf.nn.fractional_max_pool(tf.ones([1, 10, 9, 1]), [1.0, 1.44, 1.73, 1.0],
    ...                                           seed=7)
    >>> y.shape, rows.numpy().tolist(), cols.numpy().tolist()
    (TensorShape([1, 6, 5, 1]), [0, 2, 4, 6, 7, 9, 10], [0, 2, 3, 5, 7, 9])
    """
    return _fractional("FractionalMaxPool", value, pooling_ratio, pseudo_random, overlapping,
                       seed)


def fractional_avg_pool(value, pooling_ratio, pseudo_random=False, overlapping=False, seed=0,
                        name=None) -> tuple[Tensor, Tensor, Tensor]:
    """(pooled, row boundaries, column boundaries): ``value`` [N, H, W, C] average-pooled to
    ``floor(H / ratio)`` x ``floor(W / ratio)`` cells of random sizes.

    >>> tf.random.set_seed(None)
    >>> y, rows, cols = tf.nn.fractional_avg_pool(tf.ones([1, 10, 9, 1]), [1.0, 1.44, 1.73, 1.0],
    ...                                           pseudo_random=True, seed=7)
    >>> rows.numpy().tolist(), cols.numpy().tolist()
    ([0, 2, 4, 6, 7, 9, 10], [0, 2, 4, 5, 7, 9])
    """
    return _fractional("FractionalAvgPool", value, pooling_ratio, pseudo_random, overlapping,
                       seed)


__all__ = ["fractional_max_pool", "fractional_avg_pool"]
