"""``tf.autodiff.ForwardAccumulator``: Jacobian-vector products of what runs in its context.

As in TensorFlow, tangents are computed as the ops run, one op at a time: the accumulator is
a recorder on the tape stack (``runtime/recorder.py``) that, for each op with a tangent on an
input, computes the tangents of its outputs. There are no JVP rules: an op's JVP is the
transpose of its VJP (TensorFlow's ``_jvp_helper`` does the same). The op's gradient rule
applied to a cotangent ``u`` gives Jᵀu, linear in u, so the gradient of ⟨Jᵀu, t⟩ with
respect to u is J·t. The rules are tapeflow ops, so every tape and accumulator active
around this one records the tangent computation: nested accumulators (forward over forward)
and tapes (back over forward) see it at any depth, and ``jvp`` only looks a tangent up, so
it may be read after the ``with`` blocks have closed, eagerly and inside ``function`` alike.

The accumulator keeps tangents (keyed by tensor id), never the primals: a primal the user
deletes is freed (TensorFlow's weak references). A ``custom_gradient`` call's outputs take
the tangents of its forward pass where it has them (TensorFlow differentiates the forward
pass), else its gradient function is transposed like any rule.
"""
from __future__ import annotations

from typing import Any

from .. import _nest
from ..ops import math, reduce
from ..ops.creation import zeros_like
from ..ops.indexed_slices import dense
from ..runtime.recorder import STATE, Recorder
from ..runtime.tensor import Variable, convert_to_tensor
from .backprop import OpView, unbroadcast, zeros
from .tape import GradientTape, UnconnectedGradients


class _Tangents(Recorder):
    """The accumulator's place on the tape stack: computes tangents as ops are recorded."""

    __slots__ = ("tangents", "busy")

    def __init__(self):
        super().__init__(persistent=True, watch_accessed=False)
        self.tangents = {}    # tensor or variable id -> its tangent
        self.busy = False     # computing a tangent: its own ops carry none

    def should_record(self, ids, avals):
        if self.busy:
            return False
        tangents = self.tangents
        return any(i in tangents and a.dtype.is_floating for i, a in zip(ids, avals))

    def record(self, entry):
        if self.busy:
            return
        self.busy = True
        try:
            outs = _forward_pass_tangents(self.tangents, entry)
            if outs is None:
                outs = _transposed_vjp(self.tangents, entry)
        finally:
            self.busy = False
        for o, t in zip(entry.output_ids, outs):
            if t is not None:
                self.tangents[o] = t
                self.tensor_op[o] = -1

    def tracks(self, tid):
        return tid in self.tangents


def _forward_pass_tangents(tangents, entry):
    """A custom gradient's outputs: its forward pass's tangents, if that pass had any."""
    forward = entry.attrs.get("forward_ids") if isinstance(entry.attrs, dict) else None
    if forward is None and entry.op == "CustomGradient":
        forward = entry.input_ids[len(entry.input_ids) - len(entry.output_ids):]
    if forward is None:
        return None
    outs = [tangents.get(i) for i in forward]
    return outs if any(t is not None for t in outs) else None


def _transposed_vjp(tangents, entry):
    """J·t of one recorded op: the gradient, with respect to the cotangents u, of ⟨Jᵀu, t⟩."""
    rule = entry.rule
    if rule is None or rule.fn is None:
        return [None] * len(entry.output_ids)
    t_in = [tangents.get(i) for i in entry.input_ids]
    wants = tuple(t is not None for t in t_in)
    with GradientTape() as dual:
        us = [zeros(a) for a in entry.out_avals]
        floats = [u for u, a in zip(us, entry.out_avals) if a.dtype.is_floating]
        dual.watch(floats)
        grads = rule.fn(OpView(entry, wants), *us)
        if grads is None or not isinstance(grads, (list, tuple)):
            grads = [grads]
        terms = []
        for g, t, av in zip(grads, t_in, entry.in_avals):
            if g is None or t is None:
                continue
            g = unbroadcast(convert_to_tensor(g, dtype_hint=av.dtype), av.shape)
            terms.append(reduce.reduce_sum(math.multiply(g, math.cast(t, g.dtype))))
        if not terms:
            return [None] * len(entry.output_ids)
        total = terms[0]
        for term in terms[1:]:
            total = math.add(total, term)
    out = iter(dense(g) for g in dual.gradient(total, floats))
    return [next(out) if a.dtype.is_floating else None for a in entry.out_avals]


class ForwardAccumulator:
    """Forward-mode autodiff: Jacobian-vector products of what is computed in its context.

    ``with ForwardAccumulator(primals, tangents) as acc: y = f(x)`` then ``acc.jvp(y)``.

    Args:
      primals: a tensor or variable, or a structure of them.
      tangents: a tangent per primal, of its shape.

    >>> x = tf.constant([1.0, 2.0])
    >>> with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0])) as acc:
    ...     y = x * x
    >>> acc.jvp(y)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 0.], dtype=float32)>
    """

    def __init__(self, primals, tangents) -> None:
        flat_primals = _nest.flatten(primals)
        flat_tangents = _nest.flatten(tangents)
        if len(flat_primals) != len(flat_tangents):
            raise ValueError(f"ForwardAccumulator: {len(flat_primals)} primals but "
                             f"{len(flat_tangents)} tangents")
        self._rec = _Tangents()
        for p, t in zip(flat_primals, flat_tangents, strict=True):
            t = convert_to_tensor(t, dtype=p.dtype)
            if tuple(t.shape) != tuple(p.shape):
                raise ValueError(f"ForwardAccumulator: tangent shape {tuple(t.shape)} does not "
                                 f"match its primal's {tuple(p.shape)}")
            if p._id in self._rec.tangents:
                raise ValueError(f"Tensor {p!r} was specified as a primal multiple times. This "
                                 f"may indicate an error. If it was intended, please sum the "
                                 f"corresponding tangents.")
            self._rec.tangents[p._id] = t
            self._rec.tensor_op[p._id] = -1
        self._active = False

    def __enter__(self):
        if self._active:
            raise ValueError("Accumulator is already recording.")
        STATE.tapes.append(self._rec)
        self._active = True
        return self

    def __exit__(self, *exc):
        tapes = STATE.tapes
        for i in range(len(tapes) - 1, -1, -1):
            if tapes[i] is self._rec:
                del tapes[i]
                break
        self._active = False

    def jvp(self, primals,
            unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE) -> Any:
        """J·t for each tensor of ``primals`` (a structure), computed in this context.

        >>> x = tf.constant(3.0)
        >>> with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        ...     y = tf.square(x)
        >>> acc.jvp(y)
        <tf.Tensor: shape=(), dtype=float32, numpy=6.0>
        """
        unconnected = UnconnectedGradients(unconnected_gradients)
        return _nest.map_structure(lambda y: self._jvp(y, unconnected), primals)

    def _jvp(self, y, unconnected):
        t = self._rec.tangents.get(y._id)
        if t is None and unconnected is UnconnectedGradients.ZERO:
            return zeros_like(y.read() if isinstance(y, Variable) else y)
        return t


__all__ = ["ForwardAccumulator"]
