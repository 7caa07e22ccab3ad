"""``tf.gradients`` and ``tf.hessians``: TensorFlow's graph-mode gradients, inside a function.

TensorFlow differentiates the graph itself: no tape, every op from ``xs`` to ``ys``. Here
the trace's graph is read back into the tape's form (one ``Entry`` per node that a tape
watching ``xs`` would have recorded, from the same op, attributes and gradient rule), and the
tape's backward pass (``autodiff.backprop.Plan``) emits the gradient ops into the same trace.
So the gradients are the tape's, op for op, and compile with the function.
"""
from __future__ import annotations

from .. import _nest
from ..autodiff.backprop import Plan
from ..autodiff.tape import UnconnectedGradients, _fill_unconnected, unconnected_option
from ..ops import array, creation
from ..ops.array import stack
from ..runtime.dispatch import _run_time_shapes, _saved
from ..runtime.recorder import Entry, Recorder, current_trace
from ..runtime.registry import GRADS
from ..runtime.tensor import convert_to_tensor
from .symbolic_tensor import SymbolicTensor


class _Tensors:
    """The tensor standing for each graph Value (the caller's own where it has one, so the
    gradients are keyed by the ids of the tensors it passed)."""

    def __init__(self, trace):
        self.trace, self.by_value = trace, {}

    def adopt(self, t):
        v = self.trace.value_of(t)
        self.by_value.setdefault(v.id, t)
        return self.by_value[v.id]

    def __call__(self, v):
        t = self.by_value.get(v.id)
        if t is None:
            t = self.by_value[v.id] = SymbolicTensor(v)
        return t


def _record_graph(trace, tensors, watched, stopped):
    """A Recorder holding what a tape watching ``watched`` would have recorded of the trace's
    graph; nodes making a ``stopped`` value are left out (their values count as constants)."""
    rec = Recorder(persistent=True)
    for t in (*watched, *stopped):
        rec.watch(t._id)
    stop_values = {trace.value_of(t).id for t in stopped}
    for node in list(trace.graph.nodes):
        ins = [tensors(v) for v in node.inputs]
        ids = tuple(t._id for t in ins)
        avals = tuple(v.aval for v in node.inputs)
        if not rec.should_record(ids, avals) or any(o.id in stop_values for o in node.outputs):
            continue
        rule = GRADS[node.op]
        outs = [tensors(v) for v in node.outputs]
        out_avals = tuple(v.aval for v in node.outputs)
        rec.record(Entry(node.op, node.attrs, rule, ids, tuple(o._id for o in outs),
                         _saved(ins, rule.inputs), _saved(outs, rule.outputs),
                         _run_time_shapes(ins, avals, node.op), _run_time_shapes(outs, out_avals)))
    return rec


def gradients(ys, xs, grad_ys=None, name: str = "gradients", gate_gradients: bool = False,
              aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE) -> list:
    """The gradients of the sum of ``ys`` with respect to each of ``xs``, inside a function
    (TensorFlow's graph-mode ``tf.gradients``): a list with one tensor (or None) per x.

    ``grad_ys`` weights each y (ones by default); the ops making ``stop_gradients`` are not
    differentiated through (those values count as constants); ``unconnected_gradients``:
    "none" (None for an x the ys do not depend on) or "zero".

    >>> @tf.function
    ... def f(x):
    ...     return tf.gradients(x * x * x, x)[0]
    >>> f(tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 3., 12.], dtype=float32)>
    """
    trace = current_trace()
    if trace is None:
        raise RuntimeError("tf.gradients is not supported when eager execution is enabled. "
                           "Use tf.GradientTape instead.")
    unconnected = unconnected_option(unconnected_gradients)
    tensors = _Tensors(trace)
    ys = [tensors.adopt(convert_to_tensor(y) if not hasattr(y, "aval") else y)
          for y in _nest.flatten(ys)]
    xs = [tensors.adopt(x) for x in _nest.flatten(xs)]
    stopped = [tensors.adopt(s) for s in _nest.flatten(stop_gradients or [])]
    if grad_ys is None:
        seeds = [None] * len(ys)
    else:
        grad_ys = _nest.flatten(grad_ys)
        if len(grad_ys) != len(ys):
            raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
        seeds = [None if g is None else convert_to_tensor(g, dtype_hint=y.dtype)
                 for g, y in zip(grad_ys, ys, strict=True)]
    rec = _record_graph(trace, tensors, xs, stopped)
    target_ids = [y._id for y in ys]
    source_targets = {x._id: x.aval for x in xs if x._id in set(target_ids)}
    grads = Plan(rec, target_ids).run([x._id for x in xs], seeds, source_targets,
                                     keep_slices=True)
    return _fill_unconnected([grads[x._id] for x in xs], xs, unconnected)


def hessians(ys, xs, gate_gradients: bool = False, aggregation_method=None,
             name: str = "hessians") -> list:
    """The Hessian of the sum of ``ys`` with respect to each of ``xs`` (``x.shape +
    x.shape``), inside a function, as TensorFlow builds it: the gradient, then the gradient
    of each of its elements.

    >>> @tf.function
    ... def f(x):
    ...     return tf.hessians(tf.reduce_sum(x * x * x), x)[0]
    >>> f(tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[ 6.,  0.],
           [ 0., 12.]], dtype=float32)>
    """
    xs = _nest.flatten(xs)
    out = []
    for g, x in zip(gradients(ys, xs), xs, strict=True):
        if g is None:
            out.append(None)
            continue
        flat = array.reshape(g, [-1])
        n = int(flat.shape[0]) if flat.shape[0] is not None else None
        if n is None:
            raise ValueError(f"tf.hessians needs the size of {x!r} known when tracing")
        rows = [gradients(flat[j], x, unconnected_gradients="zero")[0] for j in range(n)]
        h = stack(rows) if rows else creation.zeros([0] + list(x.shape), dtype=x.dtype)
        out.append(array.reshape(h, list(x.shape) + list(x.shape)))
    return out


__all__ = ["gradients", "hessians"]
