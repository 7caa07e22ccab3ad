"""custom_gradient, RegisterGradient and gradient_override_map, with TensorFlow's rules.

A custom-gradient call is recorded as one op whose gradient is the user's
``grad_fn``; the forward ops inside it are recorded too (as TensorFlow does) but
its outputs are fresh tensors, so gradients reach the inputs only through
``grad_fn``. Keyword arguments are bound to the signature first: a tensor passed
by keyword gets its gradient, where TensorFlow silently drops it.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator

from .. import _nest
from ..ir.graph import Graph, Value
from ..ops import creation, math
from ..runtime.dispatch import apply
from ..runtime.recorder import STATE, Entry, current_trace
from ..runtime.registry import GRADS, USER_GRADS, GradRule
from ..runtime.tensor import Tensor, Variable, convert_to_tensor


class RegisterGradient:
    """Decorator registering a gradient function under a name, for ``gradient_override_map``.

    Decorator registering ``fn(op, *grads)`` as the gradient named ``op_type`` (global registry).

    Use it with ``gradient_override_map`` to replace an op's gradient inside a block.

    Args:
      op_type: the name to register under (a new name: an op's own name is refused).

    >>> @tf.RegisterGradient("DocClipSquare")
    ... def _clip_square_grad(op, grad):
    ...     return tf.clip_by_value(grad * 2.0 * op.inputs[0], -1.0, 1.0)
    >>> x = tf.constant(3.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     with tf.gradient_override_map({"Square": "DocClipSquare"}):
    ...         y = tf.square(x)
    >>> tape.gradient(y, x)
    <tf.Tensor: shape=(), dtype=float32, numpy=1.0>
    """

    def __init__(self, op_type: str) -> None:
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn: Callable) -> Callable:
        if self._op_type in USER_GRADS or self._op_type in GRADS:
            raise KeyError(f"Registering two gradient with name '{self._op_type}'!")
        USER_GRADS[self._op_type] = GradRule(_tf_style(fn), inputs="all", outputs="all")
        return fn


def _tf_style(fn):
    def rule(op, *grads):
        r = fn(op, *grads)
        return list(r) if isinstance(r, (list, tuple)) else [r]
    return rule


@contextlib.contextmanager
def gradient_override_map(op_type_map: dict[str, str]) -> Iterator[None]:
    """A context manager giving ops of some types another registered gradient.

    Within the block, ops of type ``k`` are recorded with the gradient registered as ``v``.

    Args:
      op_type_map: {op type: a name registered with ``RegisterGradient``}.

    Raises:
      LookupError: a name no gradient is registered under.

    >>> @tf.RegisterGradient("DocZeroGrad")
    ... def _zero_grad(op, grad):
    ...     return tf.zeros_like(grad)
    >>> x = tf.constant(2.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     with tf.gradient_override_map({"Exp": "DocZeroGrad"}):
    ...         y = tf.exp(x)
    >>> tape.gradient(y, x)
    <tf.Tensor: shape=(), dtype=float32, numpy=0.0>
    """
    for k, v in op_type_map.items():
        if v not in USER_GRADS:
            raise LookupError(f"No gradient registered under the name {v!r} (to override {k!r}); "
                              f"use @tf.RegisterGradient({v!r}) first")
    saved = dict(STATE.override)
    STATE.override.update(op_type_map)
    try:
        yield
    finally:
        STATE.override = saved


def _is_tensor(x):
    return isinstance(x, (Tensor, Variable)) or hasattr(x, "aval")


def custom_gradient(f: Callable | None = None) -> Callable:
    """Decorator defining a function together with its own gradient.

    Decorator: ``f(*args) -> (outputs, grad_fn)`` with ``grad_fn(*upstream) -> input grads``.

    If ``f`` reads variables that are not arguments, ``grad_fn`` must accept
    ``variables=`` and return ``(input_grads, variable_grads)``.

    Args:
      f: the function; it returns its outputs and ``grad_fn``, which maps the upstream
        gradient(s) to one gradient per tensor argument.

    Returns:
      ``f`` wrapped: its outputs, with ``grad_fn`` used for their gradient (by tapes eagerly
      and inside ``function``, where ``grad_fn`` is traced into the program).

    >>> @tf.custom_gradient
    ... def log1pexp(x):
    ...     e = tf.exp(x)
    ...     def grad(upstream):
    ...         return upstream * (1 - 1 / (1 + e))
    ...     return tf.math.log(1 + e), grad
    >>> x = tf.constant(100.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = log1pexp(x)
    >>> tape.gradient(y, x)
    <tf.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    if f is None:
        return custom_gradient
    sig = inspect.signature(f)

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{f.__name__}(): {e}") from None
        args, kwargs = bound.args, bound.kwargs
        hidden = [k for k, v in kwargs.items() if any(_is_tensor(x) for x in _nest.flatten(v))]
        if hidden:
            raise TypeError(f"@custom_gradient {f.__name__}(): tensor argument(s) {hidden} are "
                            f"keyword-only, so no gradient could reach them; make them positional "
                            f"parameters")
        return _call(f, args, kwargs)

    return decorated


def _call(f, args, kwargs):
    result, grad_fn, flat_args, variables = _run_watching_variables(f, args, kwargs)
    flat_result = [convert_to_tensor(x) for x in _nest.flatten(result)]
    inputs = [convert_to_tensor(x) for x in flat_args] + [v.read() for v in variables]
    trace = current_trace()
    if trace is not None:
        return _record_traced(trace, result, grad_fn, flat_args, variables, flat_result, inputs)
    outputs = [Tensor(t._value) for t in flat_result]  # fresh ids: gradients go through grad_fn

    def rule(op, *grads):
        return _input_grads(grad_fn, grads[:len(flat_result)], variables, len(flat_args))

    if STATE.tapes:
        ids = tuple(t._id for t in inputs)
        avals = tuple(t.aval for t in inputs)
        # forward_ids: the forward pass's results, whose tangents forward mode uses (autodiff/forward.py)
        entry = Entry(getattr(f, "__name__", "CustomGradient"),
                      {"forward_ids": tuple(t._id for t in flat_result)}, GradRule(rule), ids,
                      tuple(o._id for o in outputs), (None,) * len(inputs), (None,) * len(outputs),
                      avals, tuple(o.aval for o in outputs))
        for rec in STATE.tapes:
            if rec.should_record(ids, avals):
                rec.record(entry)
    return _nest.pack_sequence_as(result, outputs)


def _run_watching_variables(f, args, kwargs):
    """Run ``f``; the variables it read that are not its arguments must get gradients too."""
    watched = {}
    STATE.var_watchers.append(watched)
    try:
        result, grad_fn = f(*args, **kwargs)
    finally:
        STATE.var_watchers.remove(watched)
    flat_args = _nest.flatten(args)
    variables = [v for v in watched.values() if all(v is not a for a in flat_args)]
    params = inspect.signature(grad_fn).parameters
    takes_variables = "variables" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    if variables and not takes_variables:
        raise TypeError(f"@tf.custom_gradient grad_fn must accept keyword argument 'variables', since "
                        f"function uses variables: {[v.name for v in variables]}")
    return result, grad_fn, flat_args, variables


def _input_grads(grad_fn, upstream, variables, arg_count):
    """grad_fn's gradients, flat: one per argument, then one per variable (TF's checks)."""
    if variables:
        input_grads, variable_grads = grad_fn(*upstream, variables=variables)
        if len(variable_grads) != len(variables):
            raise ValueError("Must return gradient for each variable from @custom_gradient grad_fn.")
    else:
        input_grads, variable_grads = grad_fn(*upstream), []
    flat_grads = _nest.flatten(input_grads)
    if len(flat_grads) != arg_count:
        raise GradientCountError(arg_count, len(flat_grads))
    return flat_grads + list(variable_grads)


class GradientCountError(ValueError):
    """grad_fn returned the wrong number of gradients (TensorFlow's ValueError eagerly)."""

    def __init__(self, expected, got):
        super().__init__(f"custom_gradient function expected to return {expected} gradients, but "
                         f"returned {got} instead.")
        self.expected, self.got = expected, got


class FailedGradient(Graph):
    """The ``grad`` of a traced custom_gradient whose grad_fn returned the wrong number of
    gradients: as in TensorFlow the error is raised only when a gradient through the call is
    computed (autodiff/grads/custom.py), not while the function is traced. A graph of no
    gradients (its mask is all False), so printing and saving see an ordinary node."""

    def __init__(self, avals, error):
        super().__init__([Value(a) for a in avals], [], [])
        self.error = error


def _record_traced(trace, result, grad_fn, flat_args, variables, flat_result, inputs):
    """Inside a trace: trace ``grad_fn`` too, and emit one CustomGradient node carrying it."""
    mask = []

    def grads(*upstream):
        flat = _input_grads(grad_fn, upstream, variables, len(flat_args))
        mask.extend(g is not None for g in flat)
        return [g for g in flat if g is not None]

    try:
        graph, captured = trace.trace_graph(grads, [r.aval for r in flat_result])
    except GradientCountError as e:
        graph, captured = FailedGradient([r.aval for r in flat_result], e), []
        mask[:] = [False] * len(inputs)
    outs = apply("CustomGradient", inputs + captured + flat_result,
                 {"grad": graph, "n_in": len(inputs), "n_cap": len(captured), "mask": tuple(mask)})
    return _nest.pack_sequence_as(result, list(outs))


def int_outputs_through_call(outs, n_out):
    """TensorFlow's gradient of an integer output of a function called inside a traced one.

    There the call is one op whose gradient is the callee's backward function, run with
    zeros for the float outputs no gradient reached: a target that is only an integer
    output still gets zeros (not None) for every source that reaches a float output of the
    call (TensorFlow 2.21: ``f(x) = (x * 2.0, tf.cast(x, tf.int32))`` called in a function
    under a tape gives ``gradient(f(x)[1], x) == [0., 0.]``; eagerly it gives None).
    tapeflow inlines the call, so each integer output is passed through a custom-gradient
    identity that sends zeros to the float outputs. Only when a tape records the call.
    """
    results = outs[:n_out]
    floats = [o for o in results if o.dtype.is_floating]
    if not floats or not STATE.tapes or all(o.dtype.is_floating for o in results):
        return outs
    ids, avals = tuple(o._id for o in floats), tuple(o.aval for o in floats)
    if not any(rec.should_record(ids, avals) for rec in STATE.tapes):
        return outs
    return [o if k >= n_out or o.dtype.is_floating else _through_call(o, *floats)
            for k, o in enumerate(outs)]


@custom_gradient
def _through_call(i, *floats):
    return math.identity(i), lambda dy: [None] + [creation.zeros_like(f) for f in floats]
