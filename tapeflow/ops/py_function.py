"""``tf.py_function`` / ``tf.numpy_function``: Python inside TensorFlow code.

Eagerly the function is simply called, with tensors, while the tapes record what it does
(so it is differentiable, as TensorFlow's eager py_function). Inside a traced function it
becomes an ``EagerPyFunc`` op whose kernel calls it each time the program runs, in order
(it is not pure); such a program runs on the interpreter, never compiled, and has no
gradient. Our IR needs the outputs' shapes where TensorFlow leaves them unknown: the trace
calls the function once on zeros of the inputs' shapes (outside the trace, unseen by
tapes) to learn them, and each run checks its results against them.
"""
from __future__ import annotations

import functools

import numpy as np
from collections.abc import Callable, Sequence
from typing import Any

from ..runtime.dispatch import apply
from ..runtime.kernels.io import register_py_func
from ..runtime.recorder import current_trace, init_scope
from ..runtime.tensor import Tensor, Variable, convert_to_tensor, wrap
from ..ir import dtypes as D
from ..ir.opdef import AVal


def _tensors(inp):
    return [x.read() if isinstance(x, Variable) else convert_to_tensor(x) for x in inp]


def _outputs(out, touts):
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(outs) != len(touts):
        raise ValueError(f"py_function returned {len(outs)} values, Tout has {len(touts)}")
    return [convert_to_tensor(o, dtype=t) for o, t in zip(outs, touts, strict=True)]


def _type_text(aval):
    return f"{aval.dtype.name}[{','.join('?' if d is None else str(d) for d in aval.shape)}]"


def py_function(func: Callable | None = None, inp: Sequence | None = None,
                Tout=None, name: str | None = None) -> Any:  # noqa: N803  (TensorFlow's name)
    """Call a Python function on tensors, eagerly or as an op inside a ``function``.

    Call ``func(*inp)`` with tensors; returns a tensor per entry of ``Tout`` (a list), or one
    tensor for a single dtype (``None``: func returns nothing).

    Args:
      func: a Python function of tensors.
      inp: the list of its arguments.
      Tout: the dtype of its result (or a list of dtypes, one per result).

    >>> def halve(x):
    ...     return x.numpy() / 2
    >>> tf.py_function(halve, [tf.constant([2.0, 4.0])], Tout=tf.float32)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
    """
    if func is None:  # the decorator form, @tf.py_function(Tout=tf.float32), as TensorFlow's
        return lambda f: functools.wraps(f)(lambda *args: py_function(f, args, Tout, name))
    single = not isinstance(Tout, (list, tuple))
    touts = [] if Tout is None else [D.as_dtype(Tout)] if single else [D.as_dtype(t) for t in Tout]
    inputs = _tensors(inp)
    if current_trace() is None:
        outs = _outputs(func(*inputs) if touts else (func(*inputs), [])[1], touts)
    else:
        with init_scope():   # learn the output shapes: one call on zeros, outside the trace
            probe = _outputs(func(*[wrap(np.zeros(t.shape, t.dtype.np)) for t in inputs])
                             if touts else [], touts)
        avals = [AVal(tuple(t.shape), t.dtype) for t in probe]
        token = register_py_func(func, avals)
        outs = list(apply("EagerPyFunc", inputs,
                          {"token": token, "types": ";".join(_type_text(a) for a in avals)}))
    if Tout is None:
        return None
    return outs[0] if single else outs


def numpy_function(func: Callable, inp: Sequence, Tout,  # noqa: N803
                   stateful: bool = True, name: str | None = None) -> Any:
    """Call a Python function on NumPy arrays, eagerly or as an op inside a ``function``.

    ``py_function`` whose function takes and returns NumPy arrays (never differentiable).

    >>> tf.numpy_function(lambda a: a * 10, [tf.constant([1, 2])], Tout=tf.int32)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([10, 20], dtype=int32)>
    """
    def on_arrays(*tensors):
        return func(*[np.asarray(t._value) if isinstance(t, Tensor) else t for t in tensors])
    return py_function(on_arrays, inp, Tout, name)


__all__ = ["py_function", "numpy_function"]
