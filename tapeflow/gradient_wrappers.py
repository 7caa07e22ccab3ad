"""``tf.recompute_grad`` and ``tf.grad_pass_through``: wrappers of a function that change its
gradient, both built on ``custom_gradient`` as TensorFlow builds them."""
from __future__ import annotations

from collections.abc import Callable

from .autodiff.custom_gradient import custom_gradient
from .autodiff.tape import GradientTape
from .ops.math import stop_gradient
from ._nest import flatten


def recompute_grad(f: Callable) -> Callable:
    """``f`` whose intermediate values are not kept for the gradient: the forward pass runs
    ``f`` unrecorded, and the backward pass runs ``f`` again under a tape (less memory, more
    time). Values and gradients are ``f``'s.

    >>> g = tf.recompute_grad(lambda x: tf.sin(x) * x)
    >>> x = tf.constant(1.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = g(x)
    >>> round(float(tape.gradient(y, x)), 6)
    1.381773
    """
    @custom_gradient
    def inner(*args):
        result = f(*args)

        def grad(*dresult, variables=None):
            with GradientTape() as tape:
                tape.watch(list(args))
                if variables:
                    tape.watch(list(variables))
                again = f(*args)
            sources = list(args) + list(variables or [])
            grads = tape.gradient(flatten(again), sources, output_gradients=list(dresult))
            if variables:
                return grads[:len(args)], grads[len(args):]
            return grads[:len(args)] if len(args) > 1 else grads[0]
        return result, grad

    def wrapped(*args):
        return inner(*args)
    wrapped.__name__ = getattr(f, "__name__", "recompute_grad")
    wrapped.__doc__ = f.__doc__
    return wrapped


def grad_pass_through(f: Callable) -> Callable:
    """``f`` whose gradient is the identity: the upstream gradient passes to its inputs as if
    ``f`` were ``tf.identity`` (for a non-differentiable ``f`` such as rounding).

    >>> x = tf.Variable(2.0)
    >>> with tf.GradientTape() as tape:
    ...     y = tf.grad_pass_through(lambda v: tf.round(v * 1.3))(x)
    >>> float(y), float(tape.gradient(y, x))
    (3.0, 1.0)
    """
    @custom_gradient
    def inner(*args):
        def grad(*dy, variables=None):
            if variables:
                return (dy if len(dy) > 1 else dy[0]), [None] * len(variables)
            return dy if len(dy) > 1 else dy[0]
        return f(*args), grad

    return inner


__all__ = ["recompute_grad", "grad_pass_through"]
