"""The trace being built on this thread: graph, constants, captured variables, assignments.

A TraceContext is what the runtime's watch state holds while it is entered
(``recorder.STATE.traces``): dispatch hands it every op (``add_op``), variables their reads
and writes, custom_gradient its ``grad_fn`` (``trace_graph``).
"""
import numpy as np

from ..errors import user_line, user_position
from ..ir.graph import Graph, Value
from ..ir import dtypes as D
from ..ir.opdef import OPS, AVal
from ..ops import math
from ..runtime.recorder import STATE, current_trace
from ..runtime.tensor import Tensor, Variable, _next_id, convert_to_tensor, wrap
from .symbolic_tensor import SymbolicTensor, TracingError

# A path through more decisions than this is a loop on a tensor (or a pathological function).
MAX_DECISIONS = 16


class DecisionLimitError(TracingError):
    """A path asked a tensor for its truth value too often: a Python loop on a tensor."""


current = current_trace    # the innermost TraceContext this thread is building, or None


class ConditionError(TracingError, ValueError):
    """A condition that is not a scalar (TensorFlow raises ValueError)."""


class LoopError(TracingError, ValueError):
    """A loop TensorFlow rejects with ValueError: a loop variable whose shape changes across
    iterations or that has no value before the loop, a `for` over a scalar tensor."""


def as_tensor(x):
    """``x`` as a tensor of the current trace or eager code (a Variable is read)."""
    if isinstance(x, (Tensor, SymbolicTensor)):
        return x
    if isinstance(x, Variable):
        return x.read()
    return convert_to_tensor(x)


def predicate(x, what):
    """``x`` as the scalar boolean tensor an ``if`` or loop test takes (non-zero is True);
    ``what`` names it in the error for a non-scalar."""
    x = as_tensor(x)
    if x.aval.shape != ():
        raise ConditionError(f"{what} must be a scalar, got shape {list(x.shape)} (at {user_line()})")
    if not x.dtype.is_bool:
        x = math.not_equal(x, 0)
    return x


class TraceContext:
    """Collects one function body into a Graph.

    Concrete tensors that meet symbolic ones become constants; variables read
    inside become graph inputs (captures); ``assign`` inside records the new
    value, written back after each call.
    """

    def __init__(self, allow_variable_creation=True, feeding=False):
        self.graph = Graph()
        self.consts = {}            # id(Tensor) -> Value
        self.captures = {}          # input Value id -> external tensor (eager, or of an outer trace)
        self.owned = set()          # ids of the Values this graph defines
        self.first_id = _next_id()  # tensors with smaller ids existed before the trace
        self.var_inputs = {}        # variable id -> (Variable, input Value)
        self.var_state = {}         # variable id -> current Value (after assigns)
        self.assigned = {}          # variable id -> Variable, in first-assign order
        self.allow_variable_creation = allow_variable_creation
        self.created_variables = []
        self.decisions = None       # Python `if` on tensors: the path to follow (control.explore)
        self.points = []            # (node count, pred Value, user line, decision) per `if`
        self._name_counts = {}      # op type or argument name -> uses (TF's unique tensor names)
        self.feeding = feeding      # a function's own trace: it can take fed inputs (feed_input)
        self.feeds = {}             # input Value id -> (feed, j): part j of what feed.pull gives

    # -- entering ------------------------------------------------------------------
    def __enter__(self):
        STATE.traces.append(self)
        self._saved_tapes, STATE.tapes = STATE.tapes, []   # outer eager tapes never see symbols
        self._saved_watchers, STATE.var_watchers = STATE.var_watchers, []
        return self

    def __exit__(self, *exc):
        STATE.traces.pop()
        STATE.tapes = self._saved_tapes
        STATE.var_watchers = self._saved_watchers

    # -- values --------------------------------------------------------------------
    def input(self, aval, name=None):
        v = Value(aval)
        self.graph.inputs.append(v)
        self.owned.add(v.id)
        return SymbolicTensor(v, name and self._unique(name) + ":0")

    def feed_input(self, feed, j, aval):
        """A graph input whose value ``feed.pull(call)[j]`` gives at each call (the elements
        of a ``tf.data`` dataset a ``for`` loop iterates; see ``feed_input`` below)."""
        key = getattr(feed, "key", None)    # feeds of one key give the same values: made once
        memo = self.__dict__.setdefault("_feed_memo", {})
        if key is not None and (key, j) in memo:
            return memo[key, j]
        v = Value(aval)
        self.graph.inputs.append(v)
        self.owned.add(v.id)
        self.feeds[v.id] = (feed, j)
        out = SymbolicTensor(v)
        if key is not None:
            memo[key, j] = out
        return out

    def _unique(self, name):
        """``name``, or ``name_k`` for its k-th reuse in this trace (TensorFlow's graph names)."""
        k = self._name_counts.get(name, 0)
        self._name_counts[name] = k + 1
        return name if k == 0 else f"{name}_{k}"

    def value_of(self, t):
        """The graph Value for a symbolic or concrete tensor (concrete ones become constants)."""
        if isinstance(t, SymbolicTensor) and t.value.id in self.owned:
            return t.value
        if isinstance(t, SymbolicTensor) and not any(t.value.id in c.owned for c in STATE.traces):
            raise TypeError(f"{t!r} is out of scope and cannot be used here (at {user_line()}): "
                            f"it was made while tracing another tapeflow.function. Use return "
                            f"values or explicit Python locals to access it.")
        key = id(t)
        v = self.consts.get(key)
        if v is None and (isinstance(t, SymbolicTensor) or t._id < self.first_id):
            # an eager tensor from outside, or a value of an enclosing trace: an input, as in TF
            v = self.consts[key] = Value(t.aval)
            self.graph.inputs.append(v)
            self.owned.add(v.id)
            self.captures[v.id] = t
        elif v is None:
            v = self.consts[key] = self.graph.const(np.asarray(t._value))
            self.owned.add(v.id)
            self._keep = getattr(self, "_keep", [])
            self._keep.append(t)  # keep id() unique while the trace lives
        return v

    def add_op(self, name, tensors, attrs, out_avals):
        """Dispatch's hook: add op ``name`` to the graph; its symbolic outputs, or None for a
        pure op on constants made inside the trace (it runs now: constant folding), unless its
        static output type has sizes unknown (``EnsureShape`` relaxing one: a constant would
        have its own). An op with effects (``tf.print``) is always traced: it must happen
        when the program runs."""
        if OPS[name].pure and all(isinstance(t, Tensor) and t._id >= self.first_id for t in tensors) \
                and not any(None in a.shape for a in out_avals):
            return None
        if name in _OF_SHAPES and None not in tensors[0].aval.shape:
            # TensorFlow's tf.shape/tf.size of a fully known shape: a constant
            shape = tensors[0].aval.shape
            value = np.array(shape if name == "Shape" else int(np.prod(shape)),
                             attrs["out_type"].np)
            return [wrap(value)]
        node = self.graph.add(name, [self.value_of(t) for t in tensors], attrs, out_avals)
        node.line = user_position()
        self.owned.update(v.id for v in node.outputs)
        base = self._unique(name)
        return [SymbolicTensor(v, f"{base}:{k}") for k, v in enumerate(node.outputs)]

    def shape_of(self, t):
        """The int32 sizes of ``t`` as a Shape node of this trace, made once per value
        (dispatch records avals with unknown dims with it: ``runtime.dynamic_shape``)."""
        v = self.value_of(t)
        shapes = self.__dict__.setdefault("_shapes", {})
        if v.id not in shapes:
            node = self.graph.add("Shape", [v], {"out_type": D.int32},
                                  [AVal((len(v.aval.shape),), D.int32)])
            node.line = user_position()
            self.owned.add(node.outputs[0].id)
            shapes[v.id] = SymbolicTensor(node.outputs[0], f"{self._unique('Shape')}:0")
        return shapes[v.id]

    def trace_graph(self, fn, avals):
        """``fn(*inputs) -> tensors`` on symbolic inputs of ``avals``, traced into a graph of
        its own (a custom gradient's ``grad_fn``): (graph, the tensors of this trace that its
        inputs after ``avals`` take: what it captured and the variables it read)."""
        sub = TraceContext()
        with sub:
            outs = fn(*[sub.input(a) for a in avals])
            sub.graph.outputs = [sub.value_of(convert_to_tensor(t)) for t in outs]
        by_var = {v.id: var for var, v in sub.var_inputs.values()}
        captured = [sub.captures[v.id] if v.id in sub.captures else by_var[v.id].read()
                    for v in sub.graph.inputs[len(avals):]]
        return sub.graph, captured

    # -- Python control flow on tensors -------------------------------------------------
    def decide(self, sym, what):
        """The branch this trace takes at a Python ``if`` on ``sym`` (see control.explore)."""
        if self.decisions is None:
            sym._concrete(what)
        line = user_line()
        if len(self.points) >= MAX_DECISIONS:
            raise DecisionLimitError(
                f"Python control flow on a tensor at {line} was asked more than {MAX_DECISIONS} "
                f"times on one path: a Python `while` on a tensor cannot be traced both ways; use "
                f"tf.while_loop (or compute the condition outside the function).")
        pred = self.value_of(predicate(sym, f"the condition at {line}"))
        k = len(self.points)
        d = self.decisions[k] if k < len(self.decisions) else True
        self.points.append((len(self.graph.nodes), pred, line, d))
        return d

    # -- variables -----------------------------------------------------------------
    # TensorFlow's ReadVariableOp and Assign*VariableOp: every read of a variable, before or
    # after an assign, passes its gradient to the variable itself (here: the graph input it was
    # captured as, its "handle"), and an assign passes none to the value assigned. So the state
    # after an assign is stop_gradient(value), and a read of it is a CustomGradient node that
    # returns that state and sends its gradient to the handle (``_read_after_assign``).
    def capture_variable(self, var):
        """The variable's handle: the graph input its gradient flows to (made on first use)."""
        if var._id not in self.var_inputs:
            v = Value(var.aval)
            self.graph.inputs.append(v)
            self.owned.add(v.id)
            self.var_inputs[var._id] = (var, v)
            self.var_state.setdefault(var._id, v)
        return self.var_inputs[var._id][1]

    def variable_value(self, var):
        """The variable's current value as a tensor with no gradient path of its own (what an
        assign_add adds to, or a loop carries)."""
        self.capture_variable(var)
        return SymbolicTensor(self.var_state[var._id])

    def read_variable(self, var):
        handle = self.capture_variable(var)
        state = self.var_state[var._id]
        return SymbolicTensor(handle if state is handle else self._read_after_assign(handle, state))

    def _read_after_assign(self, handle, state):
        reads = self.__dict__.setdefault("_reads", {})
        key = (handle.id, state.id)
        if key not in reads:
            attrs = {"grad": _identity_grad(state.aval), "n_in": 1, "n_cap": 0, "mask": (True,)}
            node = self.graph.add("CustomGradient", [handle, state], attrs, [state.aval])
            node.line = user_position()
            self.owned.add(node.outputs[0].id)
            reads[key] = node.outputs[0]
        return reads[key]

    def assign_variable(self, var, tensor):
        self.capture_variable(var)
        value = self.value_of(tensor)
        node = self.graph.add("StopGradient", [value], {}, [value.aval])
        node.line = user_position()
        self.owned.add(node.outputs[0].id)
        self.var_state[var._id] = node.outputs[0]
        self.assigned.setdefault(var._id, var)

    def on_variable_created(self, var):
        if not self.allow_variable_creation:
            raise ValueError(f"tf.function only supports singleton tf.Variables created on the first "
                             f"call. Make sure the tf.Variable is only created once or created "
                             f"outside tf.function (at {user_line()}; e.g. guarded by "
                             f"`if self.v is None:`).")
        self.created_variables.append(var)


def feed_input(feed, j, aval):
    """``TraceContext.feed_input`` on the innermost trace of a function being built (a loop
    body's or a branch's sub-trace captures it from there), or None when no function is being
    traced. ``feed`` has ``pull(call) -> arrays``: run once per call of the function, before
    its program, ``call`` a dict fresh per call that feeds of one call may share state in."""
    for ctx in reversed(STATE.traces):
        if getattr(ctx, "feeding", False):
            return ctx.feed_input(feed, j, aval)
    return None


_OF_SHAPES = ("Shape", "Size")   # ops whose value is their input's static shape
def _identity_grad(aval):
    """The gradient graph of a read after an assign: the upstream gradient, unchanged. A new
    graph per read: the generated source names a nested graph's values once per graph object,
    and the compile worker decodes each read's graph as its own object, so a graph shared
    between reads gave the worker another source than this process (the cache missed)."""
    dy = Value(aval)
    return Graph([dy], [], [dy])


__all__ = ["TraceContext", "DecisionLimitError", "current", "as_tensor", "predicate", "MAX_DECISIONS",
           "feed_input"]
