"""``tf.recompute_grad`` and ``tf.grad_pass_through``: wrappers of a function that change its
gradient, both built on ``custom_gradient`` as TensorFlow builds them (``recompute_grad`` lives
in autodiff/recompute.py, where ``keras.remat`` reaches it too)."""
from __future__ import annotations

from collections.abc import Callable

from .autodiff.custom_gradient import custom_gradient
from .autodiff.recompute import recompute_grad


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
