"""Grouping and ordering, TensorFlow's graph-building names: ``group``, ``tuple``, ``no_op``,
``identity_n``, ``shape_n`` and ``control_dependencies``.

tapeflow's programs keep every op with an effect (assignments, prints, checks) in program
order, and pure ops have no order to keep, so what TensorFlow's control dependencies
guarantee holds already: these names give TensorFlow's values, and the ordering is free.
"""
from __future__ import annotations

import builtins
import contextlib
from collections.abc import Iterator

from ..ir import dtypes as D
from ..runtime.tensor import Tensor, Variable
from . import array, math


def _check_control(c):
    ok = c is None or callable(c) or isinstance(c, (Tensor, Variable)) or hasattr(c, "aval")
    if not ok:
        raise TypeError(f"Control input must be Operation or Tensor: {c!r}")


def no_op(name=None) -> None:
    """Nothing (TensorFlow's ``NoOp``, which only carries control dependencies).

    >>> tf.no_op()
    """
    return None


def group(*inputs, **kwargs) -> None:
    """An op that runs when all of ``inputs`` have: nothing to wait for here (see the module
    docstring), so None, as TensorFlow returns eagerly.

    >>> tf.group(tf.constant(1.0), tf.constant(2.0))
    """
    unknown = set(kwargs) - {"name"}
    if unknown:
        raise TypeError(f"Unknown keyword arguments: {sorted(unknown)}")
    for x in inputs:
        for c in (x if isinstance(x, (list, builtins.tuple)) else [x]):
            _check_control(c)
    return None


def tuple(tensors, control_inputs=None, name=None) -> list:  # noqa: A001
    """``tensors`` as a list, each one available only once all are (and ``control_inputs``
    have run): the same values.

    >>> tf.tuple([tf.constant(1.0), tf.constant(2.0)])
    [<tf.Tensor: shape=(), dtype=float32, numpy=1.0>, <tf.Tensor: shape=(), dtype=float32, numpy=2.0>]
    """
    for c in control_inputs or ():
        _check_control(c)
    return [None if t is None else math.identity(t) for t in tensors]


def identity_n(input, name=None) -> list:  # noqa: A002
    """Each tensor of the list ``input``, unchanged (``IdentityN``).

    >>> tf.identity_n([tf.constant(1.0), tf.constant([2, 3])])
    [<tf.Tensor: shape=(), dtype=float32, numpy=1.0>, <tf.Tensor: shape=(2,), dtype=int32, numpy=array([2, 3], dtype=int32)>]
    """
    return [math.identity(t) for t in input]


def shape_n(input, out_type=D.int32, name=None) -> list:  # noqa: A002
    """The shape of each tensor of ``input``, as ``out_type`` tensors.

    >>> tf.shape_n([tf.zeros([2, 3]), tf.zeros([4])])
    [<tf.Tensor: shape=(2,), dtype=int32, numpy=array([2, 3], dtype=int32)>, <tf.Tensor: shape=(1,), dtype=int32, numpy=array([4], dtype=int32)>]
    """
    return [array.shape(t, out_type=out_type) for t in input]


@contextlib.contextmanager
def control_dependencies(control_inputs) -> Iterator[None]:
    """A block whose ops run after ``control_inputs``: as in TensorFlow, eagerly callables
    among them are called; in a function the order holds already (module docstring).

    >>> with tf.control_dependencies([tf.constant(1.0)]):
    ...     y = tf.constant(2.0) + 1.0
    """
    for c in control_inputs or ():
        _check_control(c)
        if callable(c) and not isinstance(c, (Tensor, Variable)) and not hasattr(c, "aval"):
            c()
    yield


__all__ = ["no_op", "group", "tuple", "identity_n", "shape_n", "control_dependencies"]
