"""TensorFlow's counter-based random numbers: ``stateless_*``, ``split``, ``fold_in`` and
``Generator``, with TensorFlow's values bit for bit (Philox, runtime/philox.py).

A stateless op's values depend on its seed alone, so they are the same eagerly, traced and
compiled, and the same as TensorFlow's. A ``Generator`` keeps TensorFlow's state (counter,
counter, key) in a variable and advances the counter by 256 per value drawn, as
TensorFlow's stateful kernels do, so ``Generator.from_seed(s)`` draws TensorFlow's numbers.
"""
from __future__ import annotations

import enum

import numpy as np

from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor, Variable, convert_to_tensor
from . import array, math
from .creation import _shape


class Algorithm(enum.Enum):
    """The counter-based algorithms (TensorFlow's ``tf.random.Algorithm``); tapeflow has
    Philox (``AUTO_SELECT`` picks it, as TensorFlow does on the CPU).

    >>> tf.random.Algorithm.PHILOX.value
    1
    """
    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def _check_alg(alg):
    if isinstance(alg, str):
        alg = {"philox": Algorithm.PHILOX, "threefry": Algorithm.THREEFRY,
               "auto_select": Algorithm.AUTO_SELECT}.get(alg.lower(), alg)
    if isinstance(alg, int) and not isinstance(alg, bool):
        alg = Algorithm(alg)
    if alg not in (Algorithm.PHILOX, Algorithm.AUTO_SELECT):
        raise ValueError(f"Unsupported algorithm {alg!r}: tapeflow has Philox (and "
                         f"'auto_select', which is Philox on the CPU)")
    return Algorithm.PHILOX


def _key_counter(seed):
    seed = math._tensor(seed)
    if seed.dtype not in (D.int32, D.int64):
        seed = convert_to_tensor(seed, dtype=D.int64) if not seed.dtype.is_floating else seed
    return apply("StatelessRandomGetKeyCounter", [seed])


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=D.float32, name=None,
                      alg="auto_select") -> Tensor:
    """Uniform values in ``[minval, maxval)`` (``[0, 1)`` for floats by default) that depend
    on ``seed`` (2 ints) alone: TensorFlow's values. For an int dtype ``minval`` and
    ``maxval`` are both given, or both None for the whole range of the dtype.

    >>> tf.random.stateless_uniform([3], seed=[1, 2])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0.8440604 , 0.19204533, 0.9962232 ], dtype=float32)>
    """
    _check_alg(alg)
    dt = D.as_dtype(dtype)
    shape = tuple(_shape(shape))
    key, counter = _key_counter(seed)
    if dt.is_integer:
        if (minval is None) != (maxval is None):
            raise ValueError(f"For integer `dtype` argument {dt}, argument `minval` and `maxval` "
                             f"must be both None or not None. Got `minval`={minval} and "
                             f"`maxval`={maxval}.")
        if minval is None:
            return apply("StatelessRandomUniformFullIntV2", [key, counter],
                         {"shape": shape, "dtype": dt})
        return apply("StatelessRandomUniformIntV2",
                     [key, counter, convert_to_tensor(minval, dtype=dt),
                      convert_to_tensor(maxval, dtype=dt)], {"shape": shape})
    rnd = apply("StatelessRandomUniformV2", [key, counter], {"shape": shape, "dtype": dt})
    maxval = 1 if maxval is None else maxval
    lo = convert_to_tensor(minval, dtype=dt) if not _is_tensor(minval) else minval
    hi = convert_to_tensor(maxval, dtype=dt) if not _is_tensor(maxval) else maxval
    return math.add(rnd * (hi - lo), lo)


def _is_tensor(x):
    return isinstance(x, (Tensor, Variable)) or hasattr(x, "aval")


def _scaled(op, shape, seed, mean, stddev, dtype, alg):
    _check_alg(alg)
    dt = D.as_dtype(dtype)
    key, counter = _key_counter(seed)
    rnd = apply(op, [key, counter], {"shape": tuple(_shape(shape)), "dtype": dt})
    stddev = stddev if _is_tensor(stddev) else convert_to_tensor(stddev, dtype=dt)
    mean = mean if _is_tensor(mean) else convert_to_tensor(mean, dtype=dt)
    return math.add(rnd * stddev, mean)


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=D.float32, name=None,
                     alg="auto_select") -> Tensor:
    """Normal values that depend on ``seed`` (2 ints) alone: TensorFlow's values.

    >>> tf.random.stateless_normal([3], seed=[1, 2])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0.5441101 , 0.20738031, 0.07356432], dtype=float32)>
    """
    return _scaled("StatelessRandomNormalV2", shape, seed, mean, stddev, dtype, alg)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=D.float32, name=None,
                               alg="auto_select") -> Tensor:
    """Normal values within two standard deviations of the mean (drawn again until they
    are), depending on ``seed`` alone: TensorFlow's values.

    >>> x = tf.random.stateless_truncated_normal([1000], seed=[1, 2])
    >>> bool(tf.reduce_all(tf.abs(x) < 2.0))
    True
    """
    return _scaled("StatelessTruncatedNormalV2", shape, seed, mean, stddev, dtype, alg)


def split(seed, num: int = 2, alg="auto_select") -> Tensor:
    """``num`` new seeds (a [num, 2] tensor of the seed's dtype) from ``seed``, as TensorFlow
    derives them.

    >>> tf.random.split([1, 2], 2)
    <tf.Tensor: shape=(2, 2), dtype=int32, numpy=
    array([[1105988140, 1738052849],
           [-335576002,  370444179]], dtype=int32)>
    """
    seed = math._tensor(seed)
    return stateless_uniform([num, 2], seed, dtype=seed.dtype, minval=None, maxval=None,
                             alg=alg)


def fold_in(seed, data, alg="auto_select") -> Tensor:
    """A new seed from ``seed`` and the integer ``data`` (a step, a replica id), as
    TensorFlow folds it in.

    >>> tf.random.fold_in([1, 2], 7)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([1105988140,          7], dtype=int32)>
    """
    data = math._tensor(data)
    first = stateless_uniform([], seed, dtype=data.dtype, minval=None, maxval=None, alg=alg)
    return array.stack([first, data])


def create_rng_state(seed, alg) -> np.ndarray:
    """The state a ``Generator`` of algorithm ``alg`` starts from for an integer ``seed``
    (or a list of them): TensorFlow's ``[counter, counter, key]`` for Philox.

    >>> tf.random.create_rng_state(5, "philox")
    <tf.Tensor: shape=(3,), dtype=int64, numpy=array([5, 0, 0])>
    """
    _check_alg(alg)
    if isinstance(seed, int):        # 64-bit words, low first (TensorFlow's _make_1d_state)
        seed = [(seed >> (64 * i)) & ((1 << 64) - 1) for i in range(3)]
    words = [int(w) - (1 << 64) if int(w) >= (1 << 63) else int(w)
             for w in np.asarray(seed).reshape(-1)][:3]
    return convert_to_tensor(np.array([0] * (3 - len(words)) + words, np.int64))


class Generator:
    """TensorFlow's ``tf.random.Generator`` with Philox: a state variable ``[counter,
    counter, key]`` (int64); each draw reads the state and advances the counter by 256 per
    value, as TensorFlow's kernels do, so a generator made ``from_seed(s)`` draws
    TensorFlow's numbers. Draws are ops of the stateless family on the state's key and
    counter, so they run in functions too, where the state advances each call.

    >>> g = tf.random.Generator.from_seed(5)
    >>> g.normal([3])
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([ 1.0278524 ,  0.27974114, -0.01347923], dtype=float32)>
    """

    def __init__(self, copy_from=None, state=None, alg=None) -> None:
        if copy_from is not None:
            state, alg = copy_from.state.numpy(), copy_from.algorithm
        if state is None:
            raise ValueError("Generator needs a state (or use Generator.from_seed)")
        self._alg = _check_alg(alg if alg is not None else "auto_select").value
        words = np.asarray(state.numpy() if isinstance(state, (Tensor, Variable)) else state)
        self._state_var = Variable(words.astype(np.int64).reshape(3), trainable=False,
                                   name="StateVar")

    @classmethod
    def from_seed(cls, seed, alg=None) -> Generator:
        """A generator whose state comes from ``seed`` (``create_rng_state``)."""
        return cls(state=create_rng_state(seed, alg or "auto_select"), alg=alg)

    @classmethod
    def from_state(cls, state, alg) -> Generator:
        """A generator starting from ``state`` ([counter, counter, key] for Philox)."""
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg) -> Generator:
        """A generator from a key (an int) and a counter (2 ints)."""
        counter = np.asarray(counter, np.int64).reshape(-1)
        return cls(state=np.concatenate([counter, [np.int64(key)]]), alg=alg)

    @property
    def state(self) -> Variable:
        """The state variable: [counter, counter, key] (int64)."""
        return self._state_var

    @property
    def algorithm(self) -> int:
        """The algorithm's number (1: Philox)."""
        return self._alg

    @property
    def key(self) -> Tensor:
        """The key part of the state."""
        return self._state_var[-1]

    def reset(self, state) -> None:
        """Set the state."""
        self._state_var.assign(convert_to_tensor(np.asarray(state, np.int64)))

    def reset_from_seed(self, seed) -> None:
        """Set the state from ``seed``, as ``from_seed`` does."""
        self.reset(create_rng_state(seed, self._alg))

    def skip(self, delta) -> Tensor:
        """Advance the counter as ``delta`` values would; return the state before."""
        old = math.identity(self._state_var)
        step = math.cast(math._tensor(delta), D.int64) * 256
        self._state_var.assign(old + array.stack([step, convert_to_tensor(0, dtype=D.int64),
                                                  convert_to_tensor(0, dtype=D.int64)]))
        return old

    def _key_counter(self, shape):
        n = int(np.prod(shape))
        old = self.skip(n)
        return old[2:3], old[0:2]

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=D.float32, name=None) -> Tensor:
        """Normal values (TensorFlow's for the same state)."""
        shape = tuple(_shape(shape))
        key, counter = self._key_counter(shape)
        dt = D.as_dtype(dtype)
        rnd = apply("StatelessRandomNormalV2", [key, counter], {"shape": shape, "dtype": dt})
        return math.add(rnd * _as(stddev, dt), _as(mean, dt))

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=D.float32,
                         name=None) -> Tensor:
        """Normal values within two standard deviations (TensorFlow's for the same state)."""
        shape = tuple(_shape(shape))
        key, counter = self._key_counter(shape)
        dt = D.as_dtype(dtype)
        rnd = apply("StatelessTruncatedNormalV2", [key, counter], {"shape": shape, "dtype": dt})
        return math.add(rnd * _as(stddev, dt), _as(mean, dt))

    def uniform(self, shape, minval=0, maxval=None, dtype=D.float32, name=None) -> Tensor:
        """Uniform values in ``[minval, maxval)`` (TensorFlow's for the same state)."""
        dt = D.as_dtype(dtype)
        if dt.is_integer and (minval is None) != (maxval is None):
            raise ValueError(f"For integer dtype {dt}, minval and maxval must be both `None` or "
                             f"both non-`None`; got minval={minval} and maxval={maxval}")
        shape = tuple(_shape(shape))
        if dt.is_integer and minval is None:
            return self.uniform_full_int(shape, dtype=dt)
        key, counter = self._key_counter(shape)
        if dt.is_integer:
            return apply("StatelessRandomUniformIntV2",
                         [key, counter, _as(minval, dt), _as(maxval, dt)], {"shape": shape})
        rnd = apply("StatelessRandomUniformV2", [key, counter], {"shape": shape, "dtype": dt})
        lo, hi = _as(minval, dt), _as(1 if maxval is None else maxval, dt)
        return math.add(rnd * (hi - lo), lo)

    def uniform_full_int(self, shape, dtype=D.uint64, name=None) -> Tensor:
        """Integers over the whole range of ``dtype``."""
        shape = tuple(_shape(shape))
        key, counter = self._key_counter(shape)
        return apply("StatelessRandomUniformFullIntV2", [key, counter],
                     {"shape": shape, "dtype": D.as_dtype(dtype)})

    def make_seeds(self, count: int = 1) -> Tensor:
        """``count`` seeds for the stateless ops, as a [2, count] int64 tensor."""
        keys = self.uniform_full_int([count], dtype=D.int64)
        return array.stack([keys, keys * 0])

    def split(self, count: int = 1) -> list:
        """``count`` new generators with keys drawn from this one (TensorFlow's)."""
        keys = self.uniform_full_int([count], dtype=D.int64).numpy()
        return [Generator(state=[0, 0, int(k)], alg=self._alg) for k in keys]


def _as(x, dt):
    return x if _is_tensor(x) else convert_to_tensor(x, dtype=dt)


_global = []


def get_global_generator() -> Generator:
    """The process's generator (made from a nondeterministic seed on first use).

    >>> tf.random.get_global_generator().algorithm
    1
    """
    if not _global:
        _global.append(Generator.from_seed(int(np.random.SeedSequence().entropy) % (1 << 63)))
    return _global[0]


def set_global_generator(generator: Generator) -> None:
    """Make ``generator`` the process's generator.

    >>> tf.random.set_global_generator(tf.random.Generator.from_seed(1))
    """
    _global[:] = [generator]


__all__ = ["Algorithm", "Generator", "stateless_uniform", "stateless_normal",
           "stateless_truncated_normal", "split", "fold_in", "create_rng_state",
           "get_global_generator", "set_global_generator"]
