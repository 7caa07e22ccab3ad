"""Gradient helpers of TensorFlow's top level: ``grad_pass_through``, ``recompute_grad``,
``no_gradient`` and ``AggregationMethod``."""
from __future__ import annotations

from collections.abc import Callable

from ..runtime.recorder import STATE
from ..runtime.registry import GRADS, USER_GRADS, GradRule
from .custom_gradient import custom_gradient
from .tape import GradientTape


class AggregationMethod:
    """How ``tf.gradients`` adds the gradients reaching one tensor (TensorFlow's constants).
    tapeflow always adds them with ``AddN``, which is ``ADD_N`` (= ``DEFAULT``); the
    experimental ones give the same sums.

    >>> tf.AggregationMethod.ADD_N, tf.AggregationMethod.EXPERIMENTAL_TREE
    (0, 1)
    """
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def grad_pass_through(f: Callable) -> Callable:
    """``f`` whose gradient is the identity: the forward is ``f(x)``, the backward passes the
    upstream gradient to ``x`` unchanged (a straight-through estimator).

    >>> x = tf.constant(3.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = tf.grad_pass_through(lambda v: tf.round(v * 1.3))(x)
    >>> float(y), float(tape.gradient(y, x))
    (4.0, 1.0)
    """
    @custom_gradient
    def _f(x):
        def grad(dy):
            return dy
        return f(x), grad

    return _f


def recompute_grad(f: Callable) -> Callable:
    """``f`` whose intermediate values are not kept for the gradient: the backward runs ``f``
    again under a tape (TensorFlow's ``tf.recompute_grad``, trading compute for memory).
    Gradients reach ``f``'s tensor arguments and the variables it reads.

    >>> x = tf.constant(3.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = tf.recompute_grad(lambda v: tf.sin(v) * v)(x)
    >>> round(float(tape.gradient(y, x)), 4)
    -2.8289
    """
    @custom_gradient
    def inner(*args, **kwargs):
        saved, STATE.tapes = STATE.tapes, []      # the forward keeps nothing for a tape
        try:
            result = f(*args, **kwargs)
        finally:
            STATE.tapes = saved

        def grad(*dresult, variables=None):
            with GradientTape() as tape:
                tape.watch(args)
                if variables:
                    tape.watch(variables)
                again = f(*args, **kwargs)
            sources = list(args) + list(variables or [])
            grads = tape.gradient(again, sources, output_gradients=list(dresult)
                                  if isinstance(again, (list, tuple)) else dresult[0])
            n = len(args)
            return (grads[:n], grads[n:]) if variables else grads[:n]

        return result, grad

    return inner


def no_gradient(op_type: str) -> None:
    """Register ``op_type`` as having no gradient (None for every input): a name to give an
    op with ``gradient_override_map``. An op's own name, or a name already registered, is a
    KeyError, as in TensorFlow.

    >>> tf.no_gradient("DocNoGrad")
    >>> x = tf.constant(2.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     with tf.gradient_override_map({"Exp": "DocNoGrad"}):
    ...         y = tf.exp(x)
    >>> print(tape.gradient(y, x))
    None
    """
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    if op_type in GRADS or op_type in USER_GRADS:
        raise KeyError(f"Registering two gradient with name '{op_type}'!")
    USER_GRADS[op_type] = GradRule(None)


__all__ = ["AggregationMethod", "grad_pass_through", "recompute_grad", "no_gradient"]
