"""A variable's distribution policy (``tf.VariableAggregation``, ``tf.VariableSynchronization``)
and ``tf.variable_creator_scope``, the hook every ``tf.Variable(...)`` call goes through.

tapeflow runs on one device, so the policy changes no value: it is what TensorFlow records on
the variable (``v.aggregation``, ``v.synchronization``) and what a distribution strategy would
read; ``ON_READ`` variables are not trainable unless asked, as in TensorFlow.
"""
from __future__ import annotations

import contextlib
import enum
import threading
from collections.abc import Iterator


class VariableAggregation(enum.Enum):
    """How a distributed variable combines the updates of its replicas.

    >>> tf.Variable(1.0, aggregation=tf.VariableAggregation.SUM).aggregation
    <VariableAggregation.SUM: 1>
    """
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3

    def __hash__(self):
        return hash(self.value)


class VariableSynchronization(enum.Enum):
    """When a distributed variable is synchronized: ``AUTO`` (the strategy decides), ``NONE``,
    ``ON_WRITE`` (on every update) or ``ON_READ`` (when read across replicas).

    >>> tf.Variable(1.0, synchronization=tf.VariableSynchronization.ON_READ).trainable
    False
    """
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


def as_aggregation(value):
    """``value`` (a VariableAggregation, its int value or None) as the enum, TensorFlow's
    ValueError for anything else."""
    if value is None:
        return VariableAggregation.NONE
    try:
        return VariableAggregation(value)
    except ValueError:
        raise ValueError(f"Invalid variable aggregation mode: {value} for variable: None") from None


def as_synchronization(value):
    if value is None:
        return VariableSynchronization.AUTO
    try:
        return VariableSynchronization(value)
    except ValueError:
        raise ValueError(f"Invalid variable synchronization mode: {value} for variable: "
                         f"None") from None


_CREATORS = threading.local()


def creators():
    """The creators of the enclosing ``variable_creator_scope``s, outermost first."""
    stack = getattr(_CREATORS, "stack", None)
    if stack is None:
        stack = _CREATORS.stack = []
    return stack


@contextlib.contextmanager
def variable_creator_scope(variable_creator) -> Iterator[None]:
    """Inside, every ``tf.Variable(...)`` calls ``variable_creator(next_creator, **kwargs)``.

    ``kwargs`` are the Variable's arguments (TensorFlow's names: ``initial_value``,
    ``trainable``, ``name``, ``dtype``, ``shape``, ``aggregation``, ``synchronization``, ...);
    the creator may change them and must call ``next_creator(**kwargs)`` to make the variable
    (the scopes' creators run innermost first). What it returns is what ``tf.Variable``
    returns.

    >>> def frozen(next_creator, **kwargs):
    ...     kwargs["trainable"] = False
    ...     return next_creator(**kwargs)
    >>> with tf.variable_creator_scope(frozen):
    ...     v = tf.Variable(1.0)
    >>> v.trainable
    False
    """
    stack = creators()
    stack.append(variable_creator)
    try:
        yield
    finally:
        stack.remove(variable_creator)


# TensorFlow passes a creator every argument of tf.Variable; those tapeflow does not model
# come with TensorFlow's defaults and must keep them.
TF_ONLY_DEFAULTS = {"validate_shape": True, "caching_device": None, "variable_def": None,
                    "import_scope": None, "constraint": None,
                    "experimental_enable_variable_lifting": True}


def run_creators(make, kwargs):
    """``make(**kwargs)`` through the creator chain (innermost scope first)."""
    def base(**kw):
        for name, default in TF_ONLY_DEFAULTS.items():
            got = kw.pop(name, default)
            if got is not default and got != default:
                raise TypeError(f"tapeflow's Variable does not take `{name}` (got {got!r})")
        return make(**kw)

    chain = base
    for creator in creators():
        chain = (lambda c, nxt: lambda **kw: c(nxt, **kw))(creator, chain)
    return chain(**kwargs)


__all__ = ["VariableAggregation", "VariableSynchronization", "variable_creator_scope",
           "as_aggregation", "as_synchronization", "run_creators", "creators"]
