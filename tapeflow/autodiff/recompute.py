"""``tf.recompute_grad`` (and ``keras.remat``, which is it on Keras' TensorFlow backend):
trade memory for time by keeping none of a function's intermediate values for the gradient."""
from __future__ import annotations

from collections.abc import Callable

from .._nest import flatten
from ..runtime.tensor import STATE_paused
from .custom_gradient import custom_gradient
from .tape import GradientTape


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
    def wrapped(*args, **kwargs):
        # keyword arguments (``training=...``) reach both runs of ``f`` and get no gradient
        @custom_gradient
        def inner(*args):
            with STATE_paused():      # nothing of the forward run is kept (TF's stop_recording)
                result = f(*args, **kwargs)

            def grad(*dresult, variables=None):
                with GradientTape() as tape:
                    tape.watch(list(args))
                    if variables:
                        tape.watch(list(variables))
                    again = f(*args, **kwargs)
                sources = list(args) + list(variables or [])
                grads = tape.gradient(flatten(again), sources, output_gradients=list(dresult))
                if variables:
                    return grads[:len(args)], grads[len(args):]
                return grads[:len(args)] if len(args) > 1 else grads[0]
            return result, grad
        return inner(*args)
    wrapped.__name__ = getattr(f, "__name__", "recompute_grad")
    wrapped.__doc__ = f.__doc__
    return wrapped


__all__ = ["recompute_grad"]
