"""Uniform noise written with tapeflow ops, so a traced program draws new noise on every run.

``tapeflow.random.uniform`` draws with NumPy when called: inside ``tapeflow.function``
its values would be a constant of the trace, and ``Dropout`` in a compiled ``fit``
step would drop the same units on every batch. Keras 3 solves this with a
``SeedGenerator`` whose state is a variable; so does this module: the noise is a
counter-based hash of (seed, state, element index) in int64 arithmetic modulo the
prime 2**31 - 1 (every product stays below 2**62), and the state variable is
incremented after each draw. The hash is four rounds of ``x = x*x + c`` and
``x = x*a + i`` (mod p): its values pass the checks in ``tests/keras`` (mean, variance,
neighbour and stream correlations) and are plenty for dropout masks, not for
cryptography or statistics.
"""
import numpy as np

from .. import random as _random
from ..ir import dtypes as D
from ..ops import array as A
from ..ops import creation
from ..ops import math as M
from ..runtime.tensor import STATE_paused, Variable

PRIME = 2147483647
_ROUNDS = ((12345, 16807), (67891, 48271), (24680, 69621), (13579, 40692))


class SeedGenerator:
    """A seed and a counter variable: each ``uniform`` call uses the counter, then increments it.

    ``seed=None`` draws one from ``tapeflow.random`` (so ``tf.random.set_seed`` makes it
    repeatable, as ``keras.utils.set_random_seed`` does for Keras).
    """

    def __init__(self, seed=None):
        if seed is None:
            seed = int(_random.uniform((), 0, PRIME, dtype=D.int64).numpy())
        self.seed = int(seed) % PRIME
        with STATE_paused():
            self.state = Variable(0, dtype=D.int64, trainable=False, name="seed_generator_state")

    def uniform(self, shape, dtype):
        """Noise in [0, 1) of ``shape`` (static ints) and floating ``dtype``."""
        shape = tuple(int(d) for d in shape)
        size = int(np.prod(shape)) if shape else 1
        index = creation.range(size, dtype=D.int64)
        counter = M.floormod(M.add(M.multiply(M.cast(self.state.value(), D.int64), 2654435),
                                   self.seed), PRIME)
        x = M.floormod(M.add(M.multiply(index, 48271), counter), PRIME)
        for c, a in _ROUNDS:
            x = M.floormod(M.add(M.multiply(x, x), c), PRIME)
            x = M.floormod(M.add(M.multiply(x, a), index), PRIME)
        with STATE_paused():
            self.state.assign_add(np.int64(1))
        noise = M.divide(M.cast(x, D.float64), np.float64(PRIME))
        return A.reshape(M.cast(noise, dtype), shape)


__all__ = ["SeedGenerator", "PRIME"]
