"""Gradient helpers of TensorFlow's top level: ``no_gradient`` and ``AggregationMethod``
(``grad_pass_through`` and ``recompute_grad`` are in gradient_wrappers.py)."""
from __future__ import annotations


from ..runtime.registry import GRADS, USER_GRADS, GradRule


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


__all__ = ["AggregationMethod", "no_gradient"]
