"""``tapeflow.grad`` and ``tapeflow.value_and_grad``: a function's gradient as a compiled function.

Beyond TensorFlow, in JAX's shape: ``grad(f)(x)`` is ``df/dx`` for a scalar-valued ``f``,
traced once per argument signature with a GradientTape inside ``tapeflow.function``, so the
forward and the reverse sweep run as one compiled program. As in JAX, an argument the output
does not depend on gets zeros (not None), and a non-scalar output is an error.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from ..autodiff.tape import GradientTape, UnconnectedGradients
from ..runtime.tensor import convert_to_tensor
from .function import function


def _check_argnums(argnums):
    many = isinstance(argnums, (tuple, list))
    nums = tuple(argnums) if many else (argnums,)
    if not nums or not all(isinstance(i, int) for i in nums):
        raise TypeError(f"argnums must be an int or a non-empty tuple of ints, got {argnums!r}")
    return nums, many


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """A function returning ``f(*args)`` and its gradient, as one compiled program.

    ``f(*args)`` and its gradient with respect to ``args[argnums]`` (an int or a tuple of
    ints), from one compiled program.

    >>> import tapeflow as tf
    >>> value, g = tf.value_and_grad(lambda x: tf.reduce_sum(x * x))(tf.constant([1.0, 2.0]))
    >>> float(value), g.numpy().tolist()
    (5.0, [2.0, 4.0])
    """
    nums, many = _check_argnums(argnums)

    @function
    def compiled(*args):
        for i in nums:
            if i >= len(args) or i < -len(args):
                raise IndexError(f"argnums {i} is out of range for {len(args)} positional arguments")
        with GradientTape(watch_accessed_variables=False) as tape:
            for i in nums:
                tape.watch(args[i])
            value = f(*args)
        if not hasattr(value, "shape") or tuple(value.shape) != ():
            shape = getattr(value, "shape", type(value).__name__)
            raise TypeError(f"grad requires a function returning one scalar tensor, got {shape}")
        grads = tape.gradient(value, [args[i] for i in nums],
                              unconnected_gradients=UnconnectedGradients.ZERO)
        return value, tuple(grads) if many else grads[0]

    @functools.wraps(f)
    def wrapper(*args):
        # Python numbers and NumPy arrays become tensors, so they are differentiable arguments
        # (a Python value would be a constant of the trace) and one trace serves every value.
        return compiled(*[convert_to_tensor(a) if isinstance(a, (float, int, np.ndarray, np.generic))
                          else a for a in args])

    wrapper.compiled = compiled
    return wrapper


def grad(f: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """The gradient of scalar-valued ``f`` with respect to ``args[argnums]``, compiled.

    >>> import tapeflow as tf
    >>> tf.grad(lambda x, y: x * y, argnums=(0, 1))(tf.constant(3.0), tf.constant(4.0))
    (<tf.Tensor: shape=(), dtype=float32, numpy=4.0>, <tf.Tensor: shape=(), dtype=float32, numpy=3.0>)
    """
    value_and_grad_f = value_and_grad(f, argnums)

    @functools.wraps(f)
    def wrapper(*args):
        return value_and_grad_f(*args)[1]

    return wrapper
