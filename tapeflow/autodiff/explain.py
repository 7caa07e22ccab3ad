"""Why is a gradient None? TensorFlow answers silently; tapeflow can say which cause.

The four causes the seeds list: the source was never watched (a Tensor, not a
Variable, often because ``x = x + 1`` replaced a Variable), the path left
tapeflow (a tracked tensor became a NumPy array), an integer/bool dtype on the
path, or no path at all. The recorder keeps the few events needed (NumPy
conversions, integer-valued ops, stop_gradient) with the user's line.
"""
from __future__ import annotations

import warnings

from ..ir.opdef import OPS
from ..runtime.tensor import Variable

_enabled = False


class NoneGradientWarning(UserWarning):
    """Issued by ``gradient`` for each None result when ``explain_none_gradients`` is on.

    >>> import warnings
    >>> tf.debugging.explain_none_gradients(True)
    >>> x = tf.constant(1.0)
    >>> with tf.GradientTape() as tape:
    ...     y = x * 2.0
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     g = tape.gradient(y, x)
    >>> tf.debugging.explain_none_gradients(False)
    >>> caught[0].category.__name__
    'NoneGradientWarning'
    """


def explain_none_gradients(enable: bool = True) -> None:
    """Warn with the cause whenever ``GradientTape.gradient`` returns None for a source.

    Beyond TensorFlow; ``GradientTape.explain(target, source)`` gives the same sentence on demand.

    Args:
      enable: True to warn, False to stop.

    >>> x = tf.constant(1.0)
    >>> with tf.GradientTape() as tape:
    ...     y = x * 2.0
    >>> print(tape.explain(y, x))
    Tensor float32[] is a Tensor, not a Variable, and was not watched: tapes watch only
    Variables they read and tensors passed to tape.watch(). If it used to be a Variable, an
    assignment like `x = x + 1` replaced it with a Tensor; use `x.assign_add(1)`.
    """
    global _enabled
    _enabled = bool(enable)


def enabled():
    return _enabled


def describe(source):
    if isinstance(source, Variable):
        return f"Variable {source.name!r}"
    return f"Tensor {source.dtype.name}{list(source.shape)}"


def explain(rec, target_ids, source):
    """A sentence naming why ``source`` gets no gradient from the targets on ``rec``."""
    name = describe(source)
    if not source.dtype.is_floating:
        return (f"{name} has dtype {source.dtype.name}: gradients flow only through floating-point "
                f"tensors; create it as a float (e.g. tf.Variable(2.0)) or cast before the tape.")
    if rec is None or source._id not in rec.tensor_op:
        if isinstance(source, Variable):
            if not source.trainable:
                return (f"{name} is not trainable, so the tape does not watch it automatically; "
                        f"call tape.watch() on it.")
            if rec is not None and not rec.watch_accessed:
                return (f"{name} was not watched: the tape has watch_accessed_variables=False and "
                        f"tape.watch() was not called on it.")
            return f"{name} was not read inside the tape's context, so the tape never watched it."
        return (f"{name} is a Tensor, not a Variable, and was not watched: tapes watch only Variables "
                f"they read and tensors passed to tape.watch(). If it used to be a Variable, an "
                f"assignment like `x = x + 1` replaced it with a Tensor; use `x.assign_add(1)`.")
    reach = {source._id}
    for e in rec.entries:
        if any(i in reach for i in e.input_ids):
            reach.update(e.output_ids)
    found = {}
    for kind, ids, op, line in rec.events:
        if any(i in reach for i in ids) and kind not in found:
            if kind == "integer" and op in OPS and OPS[op].predicate:
                continue
            found[kind] = (op, line)
    if "numpy" in found:
        return (f"the path from {name} left tapeflow: a tensor computed from it was converted to a "
                f"NumPy array at {found['numpy'][1]}; NumPy math is not recorded, use tapeflow ops.")
    if "stop_gradient" in found:
        return f"the path from {name} is cut by stop_gradient at {found['stop_gradient'][1]}."
    if "integer" in found:
        op, line = found["integer"]
        return (f"the path from {name} goes through an integer/bool tensor made by {op} at {line}; "
                f"gradients do not flow through integer dtypes.")
    return (f"the target does not depend on {name} through any op recorded on this tape "
            f"(computed outside the tape, under stop_recording, or unrelated).")


def warn_none(rec, target_ids, sources, grads):
    for s, g in zip(sources, grads):
        if g is None:
            warnings.warn(f"gradient is None: {explain(rec, target_ids, s)}", NoneGradientWarning,
                          stacklevel=4)
