"""``tf.vectorized_map(fn, elems)``: ``fn`` traced once on one row, batched by the vectorizer.

``fn`` is traced on symbolic rows (``elems`` without their leading axis) into a graph;
``passes.vectorize`` adds the batch axis (its batching rules; an op without one loops over
the batch and is reported); the batched graph then runs as jacobians' programs do: on
NumPy eagerly, through dispatch when traced or when a tape tracks an input (so it lands in
the enclosing function's graph, or on the tape: differentiable).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _nest
from ..ir.opdef import AVal
from ..passes.vectorize import vectorize
from ..runtime.interpret import replay, run_graph
from ..runtime.tensor import wrap
from .context import TraceContext, as_tensor
from .jacobian import _symbolic_or_taped


def vectorized_map(fn: Callable, elems, fallback_to_while_loop: bool = True,
                   warn: bool = True) -> Any:
    """``fn`` applied to every row of ``elems``, as one vectorized program.

    ``fn`` applied to every row of ``elems`` (a tensor or a structure of tensors sharing
    their first dimension), as one vectorized program; the results stacked.

    Args:
      fn: a function of one row (or one structure of rows).
      elems: a tensor, or a structure of tensors with the same first dimension.
      fallback_to_while_loop: loop over rows for ops that have no batching rule.
      warn: warn when it falls back to a loop.

    >>> tf.vectorized_map(lambda row: tf.reduce_sum(row * row), tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 5., 25.], dtype=float32)>
    """
    flat = [as_tensor(e) for e in _nest.flatten(elems)]
    if not flat or any(len(t.shape) == 0 for t in flat):
        raise ValueError("vectorized_map: elems must be tensors of rank at least 1")
    size = flat[0].shape[0]
    if size is None or any(t.shape[0] != size for t in flat):
        raise ValueError(f"vectorized_map: elems must share their first dimension, got "
                         f"{[tuple(t.shape) for t in flat]}")
    structure = []

    def body(*rows):
        out = fn(_nest.pack_sequence_as(elems, list(rows)))
        structure.append(out)
        return [as_tensor(o) for o in _nest.flatten(out)]

    graph, captured = TraceContext().trace_graph(
        body, [AVal(tuple(t.shape)[1:], t.dtype) for t in flat])
    vec = vectorize(graph, [True] * len(flat) + [False] * len(captured), size, warn=warn)
    args = flat + captured
    if _symbolic_or_taped(args):
        outs = replay(vec.graph, args)
    else:
        outs = [wrap(a) for a in run_graph(vec.graph, *[a._value for a in args])]
    return _nest.pack_sequence_as(structure[0], list(outs))


__all__ = ["vectorized_map"]
