"""``tf.switch_case`` and ``tf.case``: several branches as nested ``tf.cond`` s, so only the
chosen branch runs, eagerly or in a function, with TensorFlow's rules for the default."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ir import dtypes as D
from ..ops import math, reduce
from ..ops.array import stack
from ..ops.debug import Assert
from ..runtime.tensor import Tensor
from .control import cond


def _is_tensor(x):
    return isinstance(x, Tensor) or hasattr(x, "aval")


def switch_case(branch_index, branch_fns, default: Callable | None = None,
                name: str = "switch_case") -> Any:
    """The result of ``branch_fns[branch_index]()`` (a list, or a dict of int keys); an index
    out of range runs ``default``, or the last branch when there is none, as TensorFlow does.

    >>> tf.switch_case(tf.constant(1), [lambda: tf.constant(10), lambda: tf.constant(20)])
    <tf.Tensor: shape=(), dtype=int32, numpy=20>
    """
    if not _is_tensor(branch_index):
        raise TypeError(f"'branch_index' must be a Tensor, got {type(branch_index)}")
    if branch_index.dtype != D.int32:
        raise TypeError(f"'branch_index' must be an int32 Tensor, got {branch_index.dtype.name}")
    if isinstance(branch_fns, dict):
        keys = sorted(branch_fns)
        if keys != list(range(len(keys))):
            raise ValueError(f"branch indices (keys) must form a contiguous range of [0 to "
                             f"{len(keys)}). Found: {keys}")
        fns = [branch_fns[k] for k in keys]
    else:
        fns = [fn[1] if isinstance(fn, tuple) else fn for fn in branch_fns]
    if not fns:
        raise ValueError("Must provide at least one item in branch_fns")
    if not all(callable(fn) for fn in fns) or (default is not None and not callable(default)):
        raise TypeError("fn for branch must be callable")
    if default is None:
        default = fns[-1]
        fns = fns[:-1]

    def pick(i):
        if i == len(fns):
            return default()
        return cond(math.equal(branch_index, i), fns[i], lambda: pick(i + 1))

    return pick(0)


def case(pred_fn_pairs, default: Callable | None = None, exclusive: bool = False,
         strict: bool = False, name: str = "case") -> Any:
    """The result of the first ``fn`` whose ``pred`` holds, of ``(pred, fn)`` pairs; else of
    ``default`` (with none, the last pair's ``fn`` is the default, and an InvalidArgumentError
    says when no ``pred`` holds, as in TensorFlow).
    ``exclusive``: an InvalidArgumentError when more than one ``pred`` holds.

    >>> x = tf.constant(3.0)
    >>> tf.case([(x > 5, lambda: tf.constant(1)), (x > 2, lambda: tf.constant(2))],
    ...         default=lambda: tf.constant(3))
    <tf.Tensor: shape=(), dtype=int32, numpy=2>
    """
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else list(pred_fn_pairs)
    for p in pairs:
        if not isinstance(p, tuple) or len(p) != 2:
            raise TypeError(f"Each entry in pred_fn_pairs must be a 2-tuple, got {p!r}")
        if not callable(p[1]):
            raise TypeError(f"fn for pred {p[0]!r} must be callable")
    if not pairs:
        raise ValueError("Must provide at least one item in pred_fn_pairs")
    preds = [p for p, _ in pairs]
    if exclusive:
        count = reduce.reduce_sum(math.cast(_stack(preds), D.int32))
        Assert(math.less_equal(count, 1),
               ["Input error: exclusive=True: more than 1 conditions "
                f"({', '.join(_pred_name(p) for p in preds)}) evaluated as True:", _stack(preds)],
               summarize=len(preds))
    if default is None:          # the last fn, once some pred is known to hold (TensorFlow's)
        last = pairs[-1][1]
        pairs = pairs[:-1]

        def default():
            Assert(reduce.reduce_any(_stack(preds)),
                   ["Input error: None of conditions evaluated as True:", _stack(preds)],
                   summarize=len(preds))
            return last()

    def pick(i):
        if i == len(pairs):
            return default()
        return cond(pairs[i][0], pairs[i][1], lambda: pick(i + 1))

    return pick(0)


def _stack(preds):
    return stack([math._tensor(p) for p in preds])


def _pred_name(p):
    return getattr(p, "name", None) or "?"


__all__ = ["switch_case", "case"]
