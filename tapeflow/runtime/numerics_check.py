"""``tf.debugging.enable_check_numerics``: every op's floating outputs checked for NaN and
infinity, naming the op and the user's line that made it.

Eagerly the check runs when the op does. In a traced function each floating output of an
op is routed through a ``CheckNumerics`` op whose message names the op and the line that
traced it, so the program (interpreted or compiled: a compiled program's failure reruns on
the interpreter, codegen/failures.py) stops at the first op that produced one, with that
line, where TensorFlow's names the op and a stack of its own frames.
"""
import numpy as np

from ..errors import InvalidArgumentError, user_line

ENABLED = [False]


def _counts(a):
    parts = []
    for what, n in (("-Inf", np.sum(np.isneginf(a))), ("+Inf", np.sum(np.isposinf(a))),
                    ("NaN", np.sum(np.isnan(a)))):
        if n:
            parts.append(f"  # of {what} elements: {int(n)}\n")
    return "".join(parts)


def _words(a):
    nan, neg, pos = np.isnan(a).any(), np.isneginf(a).any(), np.isposinf(a).any()
    kinds = [w for w, f in (("-Inf", neg), ("+Inf", pos), ("NaN", nan)) if f]
    return " and ".join(kinds)


def _header(kind, name, i, n, aval):
    return (f"\n\n!!! Detected Infinity or NaN in output {i} of {kind} op \"{name}\" (# of "
            f"outputs: {n}) !!!\n  dtype: <dtype: '{aval.dtype.name}'>\n"
            f"  shape: {tuple(aval.shape)}\n")


def check_eager(name, tensors, outs, out_avals):
    """Raise for the first floating output of eager op ``name`` holding NaN or infinity."""
    for i, (o, av) in enumerate(zip(outs, out_avals)):
        if not av.dtype.is_floating:
            continue
        a = np.asarray(o._value)
        if np.isfinite(a).all():
            continue
        inputs = "\n".join(f"  Input tensor: {t}" for t in tensors)
        raise InvalidArgumentError(
            _header("eagerly-executing", name, i, len(outs), av) + _counts(a) +
            f"\n{inputs}\n\n : Tensor had {_words(a)} values [at {user_line()}]")


def check_traced(apply, name, tensors, outs, out_avals):
    """``outs`` of traced op ``name``, each floating one through a CheckNumerics op."""
    checked = []
    for i, (o, av) in enumerate(zip(outs, out_avals)):
        if not av.dtype.is_floating or not hasattr(o, "aval"):
            checked.append(o)
            continue
        inputs = "\n".join(f"  Input tensor: {getattr(t, 'name', None) or t}" for t in tensors)
        message = (_header("graph", name, i, len(outs), av) + f"\n{inputs}\n"
                   f"  Traced at: {user_line()}\n")
        checked.append(apply("CheckNumerics", [o], {"message": message}))
    return checked
