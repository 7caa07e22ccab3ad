"""``tf.scan``, ``tf.map_fn``, ``tf.foldl``, ``tf.foldr``: one ``while_loop`` each.

Each is a counted ``while_loop`` over the rows of ``elems`` (read by ``gather`` at the loop
counter, the form the loop compiler keeps in place), carrying the accumulator and, for
``scan``/``map_fn``, one ``TensorArray`` per output leaf. Eagerly the loop is a Python
loop whose ops the tapes record; inside a function it is one While node, so gradients of
any order come from the While's own gradient rules (tracer/control_grads.py), as
TensorFlow's functional ops are built on its ``while_loop``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _nest
from ..ir import dtypes as D
from ..ops import array, math
from ..ops.tensor_array import TensorArray
from ..runtime.recorder import current_trace
from ..runtime.tensor import TensorShape
from .context import as_tensor
from .control import while_loop


def _rows(elems, what):
    """(flat tensors, their common leading size: an int or a scalar tensor)."""
    flat = [as_tensor(e) for e in _nest.flatten(elems)]
    if not flat:
        raise ValueError(f"{what}: elems must be a tensor or a non-empty structure of tensors")
    for t in flat:
        if t.shape.rank == 0:
            raise ValueError(f"{what}: elements in elems must be 1+ dimensional shape tensors "
                             f"with the same leading dimension, got a scalar")
    sizes = {t.shape[0] for t in flat} - {None}
    if len(sizes) > 1:
        raise ValueError(f"{what}: all elements in elems must have the same leading dimension; "
                         f"got {[tuple(t.shape) for t in flat]}")
    n = sizes.pop() if sizes else array.shape(flat[0])[0]
    return flat, n


def _row(flat, index):
    """Row ``index`` of each: eagerly a list read (TensorFlow's functional ops unstack
    ``elems`` into a TensorArray: a dense gradient); in a trace the loop compiler's gather at
    the counter (the While's gradient is dense)."""
    if current_trace() is None:
        return [array.list_rows(t, index) for t in flat]
    return [array.gather(t, index) for t in flat]


def _index(i, n, reverse):
    return math.subtract(math.subtract(n, 1), i) if reverse else i


def _loose(s):
    """A structure with lists and tuples alike (``fn`` may return either)."""
    if isinstance(s, tuple) and len(s) == 2 and s[0] in ("list", "tuple"):
        return ("seq", tuple(_loose(x) for x in s[1]))
    if isinstance(s, tuple):
        return tuple(_loose(x) for x in s)
    return s


def _flat_out(value, structure, what):
    """``value`` flattened, checked against ``structure``."""
    try:
        if _loose(_nest.structure(value)) != _loose(_nest.structure(structure)):
            raise TypeError
    except (TypeError, ValueError):
        raise TypeError(f"{what}: The two structures don't have the same nested structure. "
                        f"First structure: {structure!r}, second structure: {value!r}") from None
    return [as_tensor(v) for v in _nest.flatten(value)]


def _first_accumulator(elems, flat, n, initializer, reverse):
    """(the accumulator's structure, its flat tensors, the first row left to fold): the
    ``initializer``, or without one the first row (the last when ``reverse``)."""
    if initializer is None:
        acc, start = _nest.pack_sequence_as(elems, _row(flat, _index(0, n, reverse))), 1
    else:
        acc, start = initializer, 0
    return acc, [as_tensor(a) for a in _nest.flatten(acc)], start


def _fold(fn, elems, initializer, reverse, what):
    flat, n = _rows(elems, what)
    structure, acc_flat, start = _first_accumulator(elems, flat, n, initializer, reverse)

    def body(i, *state):
        x = _nest.pack_sequence_as(elems, _row(flat, _index(i, n, reverse)))
        new = fn(_nest.pack_sequence_as(structure, list(state)), x)
        return [math.add(i, 1)] + _flat_out(new, structure, what)

    out = while_loop(lambda i, *state: math.less(i, n), body,
                     [as_tensor(start)] + acc_flat)
    return _nest.pack_sequence_as(structure, list(out[1:]))


def foldl(fn: Callable, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None) -> Any:
    """``fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n-1])``.

    ``fn`` folded over the rows of ``elems`` from the first (``tf.foldl``); without an
    ``initializer`` the first row starts the fold. ``elems`` and ``initializer`` may be
    nested structures; ``fn(accumulator, row)`` returns the accumulator's structure.

    >>> tf.foldl(lambda a, x: a * 10 + x, tf.constant([1, 2, 3]))
    <tf.Tensor: shape=(), dtype=int32, numpy=123>
    """
    return _fold(fn, elems, initializer, False, "foldl")


def foldr(fn: Callable, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None) -> Any:
    """``fn`` folded over the rows of ``elems`` from the last (``tf.foldr``).

    ``fn(...fn(fn(initializer, elems[n-1]), elems[n-2])..., elems[0])``; without an
    ``initializer`` the last row starts the fold.

    >>> tf.foldr(lambda a, x: a * 10 + x, tf.constant([1, 2, 3]))
    <tf.Tensor: shape=(), dtype=int32, numpy=321>
    """
    return _fold(fn, elems, initializer, True, "foldr")


def _lists(dtypes, n, shapes=None):
    return [TensorArray(d, size=n, element_shape=None if shapes is None else shapes[k],
                        infer_shape=True) for k, d in enumerate(dtypes)]


def scan(fn: Callable, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None) -> Any:
    """Every accumulator of ``fn`` folded over the rows of ``elems``, stacked (``tf.scan``).

    ``out[i] = fn(out[i-1], elems[i])`` with ``out[-1] = initializer``; without an
    ``initializer``, ``out[0] = elems[0]``. ``reverse`` runs from the last row (and writes
    from the last position). Nested ``elems``/``initializer`` allowed.

    >>> tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3, 4]))
    <tf.Tensor: shape=(4,), dtype=int32, numpy=array([ 1,  3,  6, 10], dtype=int32)>
    """
    flat, n = _rows(elems, "scan")
    structure, acc_flat, start = _first_accumulator(elems, flat, n, initializer, reverse)
    lists = _lists([a.dtype for a in acc_flat], n,
                   [TensorShape(a.shape) for a in acc_flat] if infer_shape else None)
    if start:
        lists = [ta.write(_index(0, n, reverse), a) for ta, a in zip(lists, acc_flat)]
    k = len(acc_flat)

    def body(i, *carry):
        state, tas = list(carry[:k]), carry[k:]
        x = _nest.pack_sequence_as(elems, _row(flat, _index(i, n, reverse)))
        new = _flat_out(fn(_nest.pack_sequence_as(structure, state), x), structure, "scan")
        at = _index(i, n, reverse)
        return [math.add(i, 1)] + new + [ta.write(at, v) for ta, v in zip(tas, new)]

    out = while_loop(lambda i, *carry: math.less(i, n), body,
                     [as_tensor(start)] + acc_flat + lists)
    return _nest.pack_sequence_as(structure, [ta.stack() for ta in out[1 + k:]])


def _signature(fn_output_signature, elems):
    """(structure, dtypes, element shapes or None) of ``map_fn``'s results."""
    if fn_output_signature is None:
        structure = elems
        leaves = [as_tensor(e).dtype for e in _nest.flatten(elems)]
    else:
        structure = fn_output_signature
        leaves = _nest.flatten(fn_output_signature)
    dtypes, shapes = [], []
    for leaf in leaves:
        if hasattr(leaf, "dtype") and hasattr(leaf, "shape") and not isinstance(leaf, D.DType):
            dtypes.append(D.as_dtype(leaf.dtype))
            shapes.append(TensorShape(leaf.shape))
        else:
            dtypes.append(D.as_dtype(leaf))
            shapes.append(TensorShape(None))
    return structure, dtypes, shapes


def map_fn(fn: Callable, elems, dtype=None, parallel_iterations=None, back_prop=True,
           swap_memory=False, infer_shape=True, name=None, fn_output_signature=None) -> Any:
    """``fn`` applied to every row of ``elems``, the results stacked (``tf.map_fn``).

    ``fn`` applied to each row of ``elems`` (a tensor or a structure of tensors sharing their
    first dimension); results are stacked along a new first axis. ``fn_output_signature``
    (or the older ``dtype``) gives the results' structure and dtypes when they differ from
    ``elems``': dtypes, ``tf.TensorSpec``s, or structures of them.

    >>> tf.map_fn(lambda x: x * x, tf.constant([1.0, 2.0, 3.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([1., 4., 9.], dtype=float32)>
    >>> tf.map_fn(lambda x: tf.cast(x > 1, tf.int32), tf.constant([1.0, 2.0]),
    ...           fn_output_signature=tf.int32)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([0, 1], dtype=int32)>
    """
    if fn_output_signature is None:
        fn_output_signature = dtype
    elif dtype is not None:
        raise ValueError("map_fn: only one of dtype and fn_output_signature may be given")
    flat, n = _rows(elems, "map_fn")
    structure, dtypes, shapes = _signature(fn_output_signature, elems)
    lists = _lists(dtypes, n, shapes)
    if not infer_shape:
        lists = _lists(dtypes, n)

    def body(i, *tas):
        x = _nest.pack_sequence_as(elems, _row(flat, i))
        new = _flat_out(fn(x), structure, "map_fn")
        for k, (v, d) in enumerate(zip(new, dtypes)):
            if v.dtype != d:
                raise TypeError(f"map_fn: fn returned a {v.dtype.name} tensor where "
                                f"fn_output_signature expects {d.name} (output {k}); pass "
                                f"fn_output_signature when fn's output differs from elems")
        return [math.add(i, 1)] + [ta.write(i, v) for ta, v in zip(tas, new)]

    out = while_loop(lambda i, *tas: math.less(i, n), body, [as_tensor(0)] + lists)
    return _nest.pack_sequence_as(structure, [ta.stack() for ta in out[1:]])


__all__ = ["scan", "map_fn", "foldl", "foldr"]
