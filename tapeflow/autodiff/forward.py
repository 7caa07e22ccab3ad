"""``tf.autodiff.ForwardAccumulator``: Jacobian-vector products of what runs in its context.

No JVP rules: like ``tracer/transpose.py`` for jacobians, the JVP is the transpose of the
VJP. A persistent tape records the computation; ``jvp(y)`` asks it for the gradient of y
with a cotangent ``u`` that an outer tape watches: that gradient, Jᵀu, is linear in u, so
the gradient of ⟨Jᵀu, t⟩ with respect to u is J·t. The gradient rules are tapeflow ops, so
the outer tape records them (higher order), eagerly and inside ``function`` alike, and an
unconnected target gets None (or zeros) exactly as TensorFlow's.
"""
from __future__ import annotations

from typing import Any

from .. import _nest
from ..ops import math, reduce
from ..ops.creation import zeros_like
from ..runtime.tensor import Variable, convert_to_tensor
from .tape import GradientTape, UnconnectedGradients


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
        self._primals = _nest.flatten(primals)
        flat_tangents = _nest.flatten(tangents)
        if len(self._primals) != len(flat_tangents):
            raise ValueError(f"ForwardAccumulator: {len(self._primals)} primals but "
                             f"{len(flat_tangents)} tangents")
        self._tangents = []
        for p, t in zip(self._primals, flat_tangents, strict=True):
            t = convert_to_tensor(t, dtype=p.dtype)
            if tuple(t.shape) != tuple(p.shape):
                raise ValueError(f"ForwardAccumulator: tangent shape {tuple(t.shape)} does not "
                                 f"match its primal's {tuple(p.shape)}")
            self._tangents.append(t)
        self._tape = GradientTape(persistent=True, watch_accessed_variables=False)
        self._active = False

    def __enter__(self):
        self._active = True
        self._tape.__enter__()
        for p in self._primals:
            self._tape.watch(p)
        return self

    def __exit__(self, *exc):
        self._active = False
        return self._tape.__exit__(*exc)

    def jvp(self, primals,
            unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE) -> Any:
        """J·t for each tensor of ``primals`` (a structure), computed in this context.

        >>> x = tf.constant(3.0)
        >>> with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        ...     y = tf.square(x)
        >>> acc.jvp(y)
        <tf.Tensor: shape=(), dtype=float32, numpy=6.0>
        """
        return _nest.map_structure(lambda y: self._jvp(y, unconnected_gradients), primals)

    def _jvp(self, y, unconnected):
        y = y.read() if isinstance(y, Variable) else y
        with GradientTape() as outer:
            u = zeros_like(y)
            outer.watch(u)
            if self._active:  # the accumulator's own tape must not record its gradient
                with self._tape.stop_recording():
                    total = self._contract(y, u)
            else:
                total = self._contract(y, u)
        result = None if total is None else outer.gradient(total, u)
        if result is None and unconnected in (UnconnectedGradients.ZERO, "zero"):
            return zeros_like(y)
        return result

    def _contract(self, y, u):
        """⟨Jᵀu, t⟩, or None when no primal reaches y."""
        grads = self._tape.gradient(y, self._primals, output_gradients=u)
        terms = [reduce.reduce_sum(math.multiply(g, t))
                 for g, t in zip(grads, self._tangents, strict=True) if g is not None]
        total = terms[0] if terms else None
        for term in terms[1:]:
            total = math.add(total, term)
        return total

    def watch(self, primals, tangents):
        raise NotImplementedError("ForwardAccumulator.watch: pass the primals to the constructor")


__all__ = ["ForwardAccumulator"]
