"""The single entry point every op call goes through: ``apply(name, inputs, attrs)``.

It converts inputs to tensors, infers output shapes/dtypes from the OpDef (so
bad input fails here, naming the op, the shapes and the user's line, never deep
inside NumPy), runs the NumPy kernel and records the op on every tape that
tracks one of its floating-point inputs, saving only what the gradient rule
declares it reads. While a trace is being built (``recorder.current_trace()``), the trace
adds the op to its graph instead of the kernel running it: ``add_op``, the one way the
tracer plugs into dispatch.
"""
import numpy as np

from ..errors import InferError, InvalidArgumentError, OpError, format_line, user_line
from ..ir.opdef import OPS, AVal
from . import numerics_check, placement_log
from .dynamic_shape import DynamicShape
from .placement_log import ENABLED as LOG_PLACEMENT
from .recorder import STATE, Entry
from .registry import GRADS, KERNELS, STATIC_FORMS, USER_GRADS
from .tensor import Tensor, Variable, convert_to_tensor, wrap
from .traceback_filter import drop_internal_frames


# What a kernel raises when its data is bad (an index out of range, a singular matrix,
# integer division by zero): the op's error, not a bug.
DATA_ERRORS = (ValueError, IndexError, ArithmeticError)


def _fmt_avals(avals):
    return ", ".join(f"{a.dtype.name}{list(a.shape)}" for a in avals)


def op_error(name, exc, avals, traced_at=None):
    """``exc`` from op ``name``'s kernel as TensorFlow's ``InvalidArgumentError`` naming the op,
    its input types and the user's line: for an op of a traced program, the line that traced
    it (``Node.line``), called from the current one. An ``OpError`` from a nested graph
    passes unchanged."""
    if isinstance(exc, OpError):
        return exc
    where = user_line()
    if traced_at is not None:
        where = f"{format_line(traced_at)}, called from {where}"
    return InvalidArgumentError(f"{name}: {exc}; inputs: {_fmt_avals(avals)} [at {where}]")


def _is_tensor(x):
    return isinstance(x, (Tensor, Variable)) or hasattr(x, "aval")  # aval: a symbolic tensor


def _group_dtype(group, inputs):
    """The dtype inputs that must share one are converted to, as TensorFlow's
    ``args_to_matching_eager``: the first tensor's; with no tensor, the first value's as
    converted alone, so ``tf.maximum(0., [1, -1])`` is float32 and ``tf.add(0.5,
    np.array([1, 2]))`` too (NumPy values are converted, not matched)."""
    for i in group:
        if _is_tensor(inputs[i]):
            return inputs[i].dtype
    return convert_to_tensor(inputs[group[0]]).dtype


def _convert_inputs(opdef, inputs):
    group = opdef.same_dtype
    hint = _group_dtype(group, inputs) if group else None
    out = []
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor):
            out.append(x)
        elif hint is not None and i in group and not _is_tensor(x):
            out.append(convert_to_tensor(x, dtype=hint))
        elif hasattr(x, "aval") and not isinstance(x, Variable):  # a symbolic tensor (tracer)
            if not STATE.traces:  # TensorFlow: TypeError, "out of scope"
                raise TypeError(f"{x!r} is out of scope and cannot be used here (op {opdef.name} "
                                f"at {user_line()}): it was made while tracing a "
                                f"tapeflow.function. Use return values or explicit Python "
                                f"locals to access it.")
            out.append(x)
        else:
            out.append(convert_to_tensor(x))
    return out


def _graph_dtypes(name, group, avals):
    """Inside a trace, inputs that must share a dtype and do not raise TypeError, as TensorFlow's
    graph mode does when it builds the op (eagerly it is InvalidArgumentError, as here)."""
    first = group[0]
    for i in group[1:]:
        if i < len(avals) and avals[i].dtype != avals[first].dtype:
            raise TypeError(f"Input #{i} of '{name}' Op has type {avals[i].dtype.name} that does not "
                            f"match type {avals[first].dtype.name} of input #{first}; inputs: "
                            f"{_fmt_avals(avals)} [at {user_line()}]")


def _rule_for(name):
    override = STATE.override.get(name)
    if override is not None:
        return USER_GRADS[override]
    return GRADS[name]


def _saved(values, which):
    if which == "all":
        return tuple(values)
    if not which:
        return (None,) * len(values)
    return tuple(v if i in which else None for i, v in enumerate(values))


def apply(name, inputs, attrs=None):
    """Run op ``name`` on ``inputs`` (tensors or convertible values) with ``attrs``.

    Returns a Tensor, or a tuple of Tensors for multi-output ops. With a symbolic
    input (inside ``tapeflow.function``) the op is added to the traced graph instead.
    """
    try:
        opdef = OPS[name]
        attrs = attrs or {}
        if opdef.arity is not None and len(inputs) != opdef.arity:
            raise TypeError(f"{name} takes {opdef.arity} tensor inputs, got {len(inputs)}")
        tensors = _convert_inputs(opdef, inputs)
        if name in STATIC_FORMS and all(isinstance(t, Tensor) for t in tensors[1:]):
            return STATIC_FORMS[name](*tensors, **attrs)   # the shape is known: the static op
        avals = [t.aval for t in tensors]
        if STATE.traces and opdef.same_dtype:
            _graph_dtypes(name, opdef.same_dtype, avals)
        try:
            out = opdef.infer(avals, **attrs)
        except InferError as e:
            raise InvalidArgumentError(f"{name}: {e}; inputs: {_fmt_avals(avals)} [at {user_line()}]") from None
        multi = opdef.multi_output
        out_avals = tuple(out) if multi else (out,)
        traces = STATE.traces
        outs = traces[-1].add_op(name, tensors, attrs, out_avals) if traces else None
        if outs is None:
            outs = _run_kernel(name, tensors, attrs, avals, out_avals, multi)
            if LOG_PLACEMENT[0]:   # tf.debugging.set_log_device_placement
                placement_log.executed(name)
        if STATE.tapes:
            _record(name, attrs, tensors, avals, outs, out_avals)
        if numerics_check.ENABLED[0] and name != "CheckNumerics":   # tf.debugging.enable_check_numerics
            if traces:
                outs = numerics_check.check_traced(apply, name, tensors, outs, out_avals)
            else:
                numerics_check.check_eager(name, tensors, outs, out_avals)
        return tuple(outs) if multi else outs[0]
    except Exception as e:   # the user reads their frames (runtime/traceback_filter.py)
        drop_internal_frames(e)
        raise


def _run_kernel(name, tensors, attrs, avals, out_avals, multi):
    try:
        result = KERNELS[name](*[t._value for t in tensors], **attrs)
    except DATA_ERRORS as e:
        raise op_error(name, e, avals) from None
    arrays = result if multi else (result,)
    outs = []
    for a, av in zip(arrays, out_avals, strict=True):
        a = np.asarray(a)
        if a.dtype != av.dtype.np:
            a = a.astype(av.dtype.np)
        outs.append(wrap(a))
    return outs


def _record(name, attrs, tensors, avals, outs, out_avals):
    ids = tuple(t._id for t in tensors)
    entry = None
    for rec in STATE.tapes:
        if not rec.should_record(ids, avals):
            continue
        if entry is None:
            rule = _rule_for(name)
            in_avals = tuple(avals)
            if STATE.traces:
                in_avals = _run_time_shapes(tensors, in_avals, name)
                out_avals = _run_time_shapes(outs, out_avals)
            entry = Entry(name, attrs, rule, ids, tuple(o._id for o in outs),
                          _saved(tensors, rule.inputs), _saved(outs, rule.outputs),
                          in_avals, out_avals)
            note = _explain_event(name, out_avals)
        rec.record(entry)
        if note:
            rec.events.append((note, ids, name, user_line()))


def _run_time_shapes(tensors, avals, op=None):
    """Inside a trace, an aval with unknown dims recorded with its sizes as a tensor of the
    trace (``DynamicShape``), made now, in the forward part of the graph, so a gradient rule
    reading the shape makes the small int vector a residual, not the tensor. For an op's
    inputs (``op`` given), whether its rule's gradient has the input's shape at run time."""
    if all(None not in a.shape for a in avals):
        return tuple(avals)
    trace = STATE.traces[-1]
    return tuple(a if None not in a.shape else
                 AVal(DynamicShape(a.shape, trace.shape_of(t),
                                   op is not None and _gradient_fits(op, tensors, avals, i)),
                      a.dtype)
                 for i, (t, a) in enumerate(zip(tensors, avals, strict=True)))


def _gradient_fits(name, tensors, avals, i):
    """Whether op ``name``'s gradient for input ``i`` has that input's shape whatever the
    unknown sizes, so backprop need not sum it back at run time: an op that does not
    broadcast (reductions and shape ops build the input's shape), or an elementwise op
    into whose input ``i`` the others broadcast. (Rules mirror TensorFlow's, whose
    broadcasting ops are exactly the elementwise ones, a GEMM's batch dims, BroadcastTo.)"""
    op = OPS[name]
    if op.kind == "elementwise":
        return _fits(tensors, avals, i)
    if op.gemm:
        return all(len(a.shape) <= 2 for a in avals)
    if op.broadcasts_to:
        return False
    return op.kind == "reduction" or op.moves_data


def _fits(tensors, avals, i):
    """Whether an elementwise op's output has input ``i``'s shape whatever the unknown sizes:
    every other input is that tensor, or broadcasts into it (its dims 1, or equal to a known
    dim of input i other than 1). Then input i's gradient needs no summing back."""
    mine = avals[i].shape

    def into(d, own):
        return d == 1 or (own is not None and own != 1 and d in (None, own)) or \
            (own is not None and d == own)

    for j, (t, a) in enumerate(zip(tensors, avals)):
        if j == i or t is tensors[i]:
            continue
        if len(a.shape) > len(mine) or not all(
                into(d, own) for d, own in zip(a.shape, mine[len(mine) - len(a.shape):])):
            return False
    return True


def _explain_event(name, out_avals):
    """Ops worth remembering for explaining a None gradient: where a path can end."""
    if name == "StopGradient":
        return "stop_gradient"
    if any(not a.dtype.is_floating for a in out_avals):
        return "integer"
    return None
