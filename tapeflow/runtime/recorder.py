"""The record a tape keeps: which tensors it tracks and which ops produced them.

This is the data half of ``GradientTape`` (TensorFlow keeps it in C++): dispatch
appends an ``Entry`` when an op has a tracked floating-point input, and backprop
walks the entries in reverse. It also keeps the few facts needed to explain a
``None`` gradient (NumPy conversions, integer casts, stop_gradient), with the
user's line.

``STATE`` is the one answer to "who is watching this thread's ops": the tapes recording,
the custom_gradient calls collecting the variables they read, and the traces being built
(``tapeflow.function``). Each thread sees only what it pushed. A compiled function's
repeated call checks these three lists and nothing else before it runs its program
(tracer/fastcall.py).

A trace is an object of the tracer, which the runtime core must not import: the runtime
only calls these methods on the innermost one, ``current_trace()``:

- ``add_op(name, tensors, attrs, out_avals)``: dispatch's one hook. The op added to the
  graph being traced, its symbolic outputs returned; or None for an op the trace lets run
  now (ops on constants made inside it); or constants (``tf.shape`` of a tensor whose
  shape is fully known while tracing, as TensorFlow's).
- ``shape_of(tensor)``: the tensor's sizes as an int32 tensor of the trace (a Shape node,
  made once per value), for avals with unknown dims (``dynamic_shape.DynamicShape``).
- ``read_variable(var)``, ``variable_value(var)`` (the value an assign_add updates, not a
  read), ``assign_variable(var, tensor)``, ``on_variable_created(var)``: what a Variable
  does inside a trace.
- ``trace_graph(fn, avals)``: ``fn`` traced on symbolic inputs into a graph of its own (a
  custom gradient's ``grad_fn``); returns the graph and the tensors its extra inputs take.
"""
from __future__ import annotations

import threading


class Entry:
    """One recorded op application. ``inputs``/``outputs`` hold only what the rule reads."""

    __slots__ = ("op", "attrs", "rule", "input_ids", "output_ids", "inputs", "outputs",
                 "in_avals", "out_avals")

    def __init__(self, op, attrs, rule, input_ids, output_ids, inputs, outputs, in_avals, out_avals):
        self.op, self.attrs, self.rule = op, attrs, rule
        self.input_ids, self.output_ids = input_ids, output_ids
        self.inputs, self.outputs = inputs, outputs
        self.in_avals, self.out_avals = in_avals, out_avals


class Recorder:
    """What one GradientTape has recorded (and watches)."""

    __slots__ = ("persistent", "watch_accessed", "tensor_op", "entries", "variables", "events",
                 "__weakref__")

    def __init__(self, persistent=False, watch_accessed=True):
        self.persistent = persistent
        self.watch_accessed = watch_accessed
        self.tensor_op = {}   # tensor id -> index into entries, -1 for watched sources
        self.entries = []
        self.variables = {}   # variable id -> Variable, in watch order
        self.events = []      # (kind, tensor ids, op name, user line) for None explanations

    def watch(self, tid):
        self.tensor_op.setdefault(tid, -1)

    def watch_variable(self, var):
        if var._id not in self.variables:
            self.variables[var._id] = var
        self.tensor_op.setdefault(var._id, -1)

    def should_record(self, ids, avals):
        tracked = self.tensor_op
        return any(i in tracked and a.dtype.is_floating for i, a in zip(ids, avals))

    def record(self, entry):
        idx = len(self.entries)
        self.entries.append(entry)
        for o in entry.output_ids:
            self.tensor_op[o] = idx

    def tracks(self, tid):
        return tid in self.tensor_op

    def saved_bytes(self, detail=False):
        """Bytes this tape's backward pass needs kept: the tensors its entries saved, plus the
        most that its loop gradients hold at once when it runs (they run one after another,
        each freeing its stacks: ``GradRule.holds``). ``detail``: (what, bytes) per part."""
        seen, total = set(), 0
        for e in self.entries:
            for t in (*e.inputs, *e.outputs):
                if t is not None and hasattr(t, "_value") and t._id not in seen:
                    seen.add(t._id)
                    total += t._value.nbytes
        loops = [row for e in self.entries if getattr(e.rule, "holds", None) is not None
                 for row in e.rule.holds(e)]
        if detail:
            return [("tensors saved by the recorded ops", total)] + loops
        return total + max((b for _, b in loops), default=0)


class _State(threading.local):
    def __init__(self):
        self.tapes = []         # Recorders currently recording, innermost last
        self.var_watchers = []  # sets collecting variables read (custom_gradient)
        self.traces = []        # traces being built (tapeflow.function), innermost last; a
        #                         trace starts with no tapes and watchers of its own
        self.override = {}      # op name -> registered gradient name (gradient_override_map)
        self.on_free = None     # called with a non-persistent tape about to free its record


STATE = _State()


class init_scope:
    """A context manager running its block eagerly, outside any trace and tape.

    ``tf.init_scope``: run the block eagerly, outside any trace being built and unseen by any
    tape (TensorFlow lifts it out of function-building graphs and pauses gradient tapes), e.g.
    to create a variable's initial value once inside a ``function``.

    >>> @tf.function(jit_compile=False)
    ... def f(x):
    ...     with tf.init_scope():
    ...         eager = tf.executing_eagerly()
    ...     return x, eager
    >>> f(tf.constant(1.0))[1]
    <tf.Tensor: shape=(), dtype=bool, numpy=True>
    """

    def __enter__(self) -> init_scope:
        self._saved = STATE.tapes, STATE.var_watchers, STATE.traces
        STATE.tapes, STATE.var_watchers, STATE.traces = [], [], []
        return self

    def __exit__(self, *exc) -> bool:
        STATE.tapes, STATE.var_watchers, STATE.traces = self._saved
        return False


def executing_eagerly() -> bool:
    """Whether ops run at once (True) rather than being traced into a ``function``.

    False while a ``function`` is being traced on this thread, as ``tf.executing_eagerly``.

    >>> tf.executing_eagerly()
    True
    >>> tf.function(lambda: tf.constant(tf.executing_eagerly()), jit_compile=False)()
    <tf.Tensor: shape=(), dtype=bool, numpy=False>
    """
    return not STATE.traces


def current_trace():
    """The innermost trace this thread is building (see the module docstring), or None."""
    traces = STATE.traces
    return traces[-1] if traces else None
