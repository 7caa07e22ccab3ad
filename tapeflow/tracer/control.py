"""Data-dependent control flow in traced functions: ``cond``, ``while_loop``, and Python ``if``.

A branch, a loop condition or a loop body is traced into a graph of its own (``SubTrace``);
what it uses from enclosing traces, and the variables it reads, become operands of the ``If``
or ``While`` node, in one order shared by the graphs of one node (``_unify``).

A Python ``if`` the source rewrite converts (if_rewrite.py) becomes one If node directly
(pyif.py). Any other Python ``if`` on a symbolic tensor (not convertible, or a fallback of
``pyif.if_stmt``) is converted by tracing the function once per path:
``SymbolicTensor.__bool__`` asks the trace (``TraceContext.decide``), which answers True on a
new decision and records it; ``explore`` then runs the function again for every untaken side.
Every path executes the same Python up to its decisions, so paths agree node for node there,
and ``merge`` rebuilds one graph: the shared prefix, then an ``If`` whose branches are the
rest of each side. This keeps Python's semantics exactly (early returns, branches that
assign different variables, tapes inside), runs only the taken branch, and gives TensorFlow's
results: a source read only in the untaken branch gets zeros through the If's gradient.

A Python ``while`` is not handled here: that would take one decision per iteration, so a
path through a loop on a tensor ends at ``context.MAX_DECISIONS``. ``convert.py`` rewrites
the function's ``while`` statements so that a loop whose first test is a symbolic tensor becomes ``loop``
(one While node), see ``pywhile.py``.
"""
from __future__ import annotations

import numpy as np
from collections.abc import Callable
from typing import Any

from .. import _nest
from ..errors import user_line
from ..ir.graph import Graph, Node, Value
from ..ops import creation, math
from ..runtime.dispatch import apply
from ..runtime.interpret import apply_node
from ..runtime.tensor import Tensor, Variable, convert_to_tensor
from . import loop_lists
from .context import LoopError, TraceContext, as_tensor, current, predicate
from .symbolic_tensor import SymbolicTensor, TracingError

MAX_PATHS = 64     # paths one trace may explore for Python `if`s on tensors


# -- sub-traces and their shared operands ------------------------------------------------------

class SubTrace:
    """``fn(*args) -> flat list of tensors`` traced into a graph; args get ``arg_avals``.

    ``graph.inputs`` = args, then captures and variables read (in first-use order);
    ``outs`` = the output Values. Python ``if`` on tensors inside is converted (paths merged).
    """

    def __init__(self, fn, arg_avals=(), carried=()):
        self.n_args = len(arg_avals)

        def run(ctx):
            args = [ctx.input(a) for a in arg_avals]
            # the last len(carried) args are the values of these variables: reads see them,
            # and send their gradient to the variable read outside the loop (an operand)
            for var, arg in zip(carried, args[len(args) - len(carried):]):
                ctx.var_state[var._id] = arg.value
            return fn(*args)

        self.ctx, flat = explore(run, self.n_args, TraceContext)
        with self.ctx:
            self.outs = [self.ctx.value_of(as_tensor(x)) for x in flat]
        for var in carried:                     # returned as loop variables, not written back
            self.ctx.assigned.pop(var._id, None)
        self.var_of = {v.id: var for var, v in self.ctx.var_inputs.values()}

    def key(self, v):
        """(key, outside object) of an extra input: a captured tensor or a variable."""
        if v.id in self.ctx.captures:
            t = self.ctx.captures[v.id]
            return ("t", id(t)), t
        var = self.var_of[v.id]
        return ("v", var._id), var


def _unify(traces):
    """(operands, assigned variables, graphs): each trace's graph rebuilt to take
    (its args, then every operand) and return (its outputs, then the final value of every
    variable any of them assigns), so one node can run any of them."""
    operands, index = [], {}
    for tr in traces:
        for v in tr.ctx.graph.inputs[tr.n_args:]:
            k, x = tr.key(v)
            if k not in index:
                index[k] = len(operands)
                operands.append(x)
    assigned = {}
    for tr in traces:
        for vid, var in tr.ctx.assigned.items():
            assigned.setdefault(vid, var)
            if ("v", vid) not in index:
                index[("v", vid)] = len(operands)
                operands.append(var)
    graphs = []
    for tr in traces:
        slots = [None] * len(operands)
        for v in tr.ctx.graph.inputs[tr.n_args:]:
            slots[index[tr.key(v)[0]]] = v
        slots = [s if s is not None else Value(x.aval) for s, x in zip(slots, operands)]
        nodes, finals = list(tr.ctx.graph.nodes), []
        for vid in assigned:
            if vid in tr.ctx.assigned:
                finals.append(tr.ctx.var_state[vid])
            else:   # unchanged on this side, and, as any assigned value, no gradient path
                nodes.append(Node("StopGradient", [slots[index[("v", vid)]]], {},
                                  [slots[index[("v", vid)]].aval]))
                finals.append(nodes[-1].outputs[0])
        graphs.append(Graph(tr.ctx.graph.inputs[:tr.n_args] + slots, nodes, tr.outs + finals))
    return operands, list(assigned.values()), graphs


def _outside(x):
    """An operand as a tensor of the enclosing trace (a variable is read there)."""
    return x.read() if isinstance(x, Variable) else x


def emit_if(pred, then_trace, else_trace):
    """An If node on ``pred``; returns its outputs (assigned variables are written back)."""
    operands, assigned, (gt, ge) = _unify([then_trace, else_trace])
    _check_same(gt.outputs, ge.outputs, "the two branches of the conditional")
    outs = apply("If", [pred] + [_outside(x) for x in operands], {"then_graph": gt, "else_graph": ge})
    n = len(then_trace.outs)
    for var, new in zip(assigned, outs[n:], strict=True):
        var.assign(new)
    return list(outs[:n])


def _check_same(a, b, what):
    for k, (x, y) in enumerate(zip(a, b, strict=True)):
        if x.aval != y.aval:
            raise TracingError(f"{what} give output {k} different types: "
                               f"{_aval(x.aval)} and {_aval(y.aval)} (at {user_line()})")


def _aval(a):
    return f"{a.dtype.name}{list(a.shape)}"


def _is_symbolic(x):
    return isinstance(x, SymbolicTensor)


# -- tf.cond ----------------------------------------------------------------------------------

def cond(pred, true_fn: Callable | None = None, false_fn: Callable | None = None,
         name: str | None = None) -> Any:
    """``true_fn()`` if ``pred`` else ``false_fn()``, on a tensor ``pred`` too.

    ``true_fn()`` if ``pred`` else ``false_fn()``; inside a function on a symbolic ``pred``,
    both are traced and only the taken one runs (TensorFlow's ``tf.cond``).

    Args:
      pred: a scalar boolean tensor (or Python bool).
      true_fn, false_fn: functions of no arguments returning the same structure.

    Returns:
      What the branch taken returns.

    >>> @tf.function(jit_compile=False)
    ... def relu_like(x):
    ...     return tf.cond(x > 0, lambda: x, lambda: tf.zeros_like(x))
    >>> relu_like(tf.constant(-3.0)), relu_like(tf.constant(3.0))
    (<tf.Tensor: shape=(), dtype=float32, numpy=0.0>, <tf.Tensor: shape=(), dtype=float32, numpy=3.0>)
    """
    if true_fn is None or false_fn is None:
        raise TypeError("cond(): true_fn and false_fn are both required")
    if not _is_symbolic(pred):
        return true_fn() if bool(pred) else false_fn()
    pred = predicate(pred, "the predicate of cond")
    results = {}

    def branch(fn, key):
        def run():
            results[key] = fn()
            leaves = _nest.flatten(results[key])
            if any(x is None for x in leaves):
                raise TracingError(f"a branch of cond returned None (at {user_line()})")
            return leaves
        return run

    then_trace = SubTrace(branch(true_fn, "then"))
    else_trace = SubTrace(branch(false_fn, "else"))
    if _nest.structure(results["then"]) != _nest.structure(results["else"]):
        raise TracingError(f"the branches of cond return different structures: "
                           f"{_nest.structure(results['then'])} and {_nest.structure(results['else'])} "
                           f"(at {user_line()})")
    return _nest.pack_sequence_as(results["then"], emit_if(pred, then_trace, else_trace))


# -- tf.while_loop ----------------------------------------------------------------------------

def while_loop(cond: Callable, body: Callable, loop_vars, shape_invariants=None,
               parallel_iterations=10, back_prop=True, swap_memory=False,
               maximum_iterations: int | Tensor | None = None, name: str | None = None) -> Any:
    """Repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` holds.

    Repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` (``tf.while_loop``).

    Eagerly a Python loop; inside a function one While node whose body runs in the program.
    Returns the loop variables in the structure of ``loop_vars``.

    Args:
      cond: a function of the loop variables returning a scalar boolean tensor.
      body: a function of the loop variables returning their new values (same structure).
      loop_vars: the initial values (a tuple or list).
      shape_invariants: per loop variable (the structure of ``loop_vars``) a ``TensorShape``
        or None: a loop variable whose invariant has None where its initial value has a size
        may change that size across iterations (its static shape has None there; the
        compiled program reads that size from the array as it runs). A body changing a
        shape its invariant (by default the initial value's shape) does not allow raises
        ValueError.
      maximum_iterations: stop after this many iterations at most.

    Returns:
      The loop variables after the last iteration.

    >>> i, total = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + i),
    ...                          (tf.constant(0), tf.constant(0)))
    >>> int(i), int(total)
    (5, 10)
    """
    if current() is not None and loop_lists.lists(loop_vars):
        return loop_lists.while_loop(loop, cond, body, loop_vars, maximum_iterations,
                                     shape_invariants=shape_invariants)
    return loop(cond, body, loop_vars, maximum_iterations, shape_invariants=shape_invariants)


def loop(cond, body, loop_vars, maximum_iterations=None, var_names=None, shape_invariants=None,
         with_count=False, traced=None):
    """``while_loop``; ``var_names`` (one per flat loop variable) name the variables in errors,
    for loops converted from a Python ``while`` (tracer.pywhile); ``shape_invariants``: as
    ``while_loop``'s, in the structure of ``loop_vars``; ``with_count``:
    return (loop variables, the While's trip count) inside a trace; ``traced()``: called once
    the condition and body are traced, before the While is made (pywhile learns there what
    the first iteration, every path of it, gives the names with no value before the loop)."""
    single = not isinstance(loop_vars, (list, tuple))
    structure = [loop_vars] if single else loop_vars

    def call(fn, flat):
        out = fn(*_nest.pack_sequence_as(structure, list(flat)))
        return out

    def step(flat):
        out = call(body, flat)
        if not isinstance(out, (list, tuple)) and len(structure) == 1:
            out = [out]
        leaves = _nest.flatten(out)
        if len(leaves) != len(flat):
            raise ValueError(f"while_loop body returned {len(leaves)} values for "
                             f"{len(flat)} loop variables (at {user_line()})")
        return leaves

    flat = [as_tensor(x) for x in _nest.flatten(structure)]
    invariants = (None if shape_invariants is None else
                  _flat_invariants([shape_invariants] if single else shape_invariants, structure))
    if current() is None:
        i = 0
        while (maximum_iterations is None or i < maximum_iterations) and bool(call(cond, flat)):
            flat = [as_tensor(x) for x in step(flat)]
            i += 1
        out = _nest.pack_sequence_as(structure, flat)
        out = out[0] if single else out
        return (out, convert_to_tensor(i, dtype="int32")) if with_count else out
    if invariants is not None:    # the loop starts from values of the invariants' static shapes
        flat = [_relaxed(x, inv, k, var_names) for k, (x, inv) in enumerate(
            zip(flat, invariants, strict=True))]
    counted = maximum_iterations is not None
    if counted:
        limit = convert_to_tensor(maximum_iterations, dtype="int32")
        flat = [convert_to_tensor(0, dtype="int32")] + flat
    n_user = len(flat)

    def cond_fn(*xs):
        c = predicate(call(cond, xs[counted:n_user]), "the condition of while_loop")
        return [math.logical_and(math.less(xs[0], limit), c) if counted else c]

    def body_fn(*xs):
        new = [as_tensor(x) for x in step(xs[counted:n_user])]
        for k, (x, old) in enumerate(zip(new, xs[counted:n_user], strict=True)):
            if x.aval == old.aval:
                continue
            if x.dtype == old.dtype and _fits(x.aval.shape, old.aval.shape):
                new[k] = _with_shape(x, old.aval.shape)     # a size the invariant leaves open
                continue
            what = (f"while_loop body changes loop variable {k}" if var_names is None
                    else f"the body of the `while` changes {var_names[k]!r}")
            # TensorFlow: TypeError for a dtype, ValueError for a shape
            error = TracingError if x.dtype != old.dtype else LoopError
            note = "" if error is TracingError else "; its rank cannot change" if len(
                x.aval.shape) != len(old.aval.shape) else (
                "; to let a size change across iterations, give a shape invariant with None "
                "there (" + ("the `shape_invariants` argument of tf.while_loop" if var_names is None
                             else "tf.autograph.experimental.set_loop_options(shape_invariants="
                                  "[(var, shape)]) in the loop's body") + ")")
            raise error(f"{what} from "
                        f"{_aval(old.aval)} to {_aval(x.aval)} (at {user_line()}); "
                        f"loop variables keep their dtype and their shape{note}")
        return ([math.add(xs[0], 1)] if counted else []) + new + [current().variable_value(v)
                                                                  for v in carried]

    # Variables the loop assigns are carried as extra loop variables: found by tracing,
    # then traced again with their reads bound to the loop's own values.
    carried = []
    while True:
        avals = [x.aval for x in flat] + [v.aval for v in carried]
        traces = [SubTrace(cond_fn, avals, carried), SubTrace(body_fn, avals, carried)]
        if traces[0].ctx.assigned:   # the While node runs its condition for the predicate only
            raise TracingError(f"the condition of a while loop assigns a variable (at "
                               f"{user_line()}); a While node's condition cannot: assign it in "
                               f"the body (or before the loop)")
        new = {vid: var for tr in traces for vid, var in tr.ctx.assigned.items()}
        if not new:
            break
        carried += new.values()
    if traced is not None:
        traced()
    operands, _, (gc, gb) = _unify(traces)
    n_vars = n_user + len(carried)
    # A carried variable starts as a read, like any loop variable (TensorFlow's loops carry the
    # variable's handle: its gradient is zeros, not None, once the loop's gradient runs); reads
    # inside the loop send their gradient to the variable read outside, an operand.
    outs = apply("While", flat + [v.read() for v in carried] + [_outside(x) for x in operands],
                 {"cond_graph": gc, "body_graph": gb, "n_vars": n_vars})
    for var, value in zip(carried, outs[n_user:n_vars], strict=True):
        var.assign(value)
    out = _nest.pack_sequence_as(structure, list(outs[counted:n_user]))
    out = out[0] if single else out
    return (out, outs[n_vars]) if with_count else out


def _flat_invariants(invariants, structure):
    """One shape (a tuple of sizes and None) or None per flat loop variable."""
    out = []

    def walk(inv, value):
        if inv is None:
            out.extend([None] * len(_nest.flatten(value)))
        elif isinstance(value, (list, tuple)) and not hasattr(value, "__tf_flatten__"):
            if not isinstance(inv, (list, tuple)) or len(inv) != len(value):
                raise ValueError(f"shape_invariants {inv!r} do not have the structure of the "
                                 f"loop variables {value!r} (at {user_line()})")
            for i, v in zip(inv, value):
                walk(i, v)
        elif isinstance(value, dict):
            for key in sorted(value, key=repr):
                walk(inv[key], value[key])
        elif len(_nest.flatten(value)) != 1:     # a TensorArray: its element shape is its own
            out.extend([None] * len(_nest.flatten(value)))
        else:
            out.append(_as_shape(inv, value))

    walk(invariants, structure)
    return out


def _as_shape(inv, value):
    """An invariant as a tuple; ``TensorShape(None)`` (any shape in TensorFlow) leaves every
    size of ``value`` open, not its rank: a graph value here has a rank."""
    if inv is None:
        return None
    if getattr(inv, "rank", 0) is None:
        leaf = _nest.flatten(value)[0]
        return (None,) * len(leaf.shape if hasattr(leaf, "shape") else np.shape(leaf))
    dims = inv.as_list() if hasattr(inv, "as_list") else inv
    return None if dims is None else tuple(None if d is None else int(d) for d in dims)


def _fits(shape, invariant):
    """Whether a value of ``shape`` fits a loop variable of static shape ``invariant``."""
    return len(shape) == len(invariant) and all(
        s is None or d == s for d, s in zip(shape, invariant))


def _relaxed(x, invariant, k, var_names):
    """A loop variable's initial value with the static shape of its invariant."""
    if invariant is None or tuple(x.aval.shape) == invariant:
        return x
    if len(invariant) != len(x.aval.shape) or any(
            d is not None and s is not None and d != s for d, s in zip(x.aval.shape, invariant)):
        name = f"loop variable {k}" if var_names is None else repr(var_names[k])
        raise ValueError(f"the shape invariant {list(invariant)} of {name} does not fit its "
                         f"initial value's shape {list(x.aval.shape)} (at {user_line()})")
    return _with_shape(x, invariant)


def _with_shape(x, shape):
    """``x`` as a value of static shape ``shape``: an EnsureShape node (never folded on a
    constant: TraceContext.add_op)."""
    return apply("EnsureShape", [x], {"shape": tuple(shape)})


# -- Python `if` on tensors: one trace per path, merged -----------------------------------------

class Path:
    """One run of the function: its context, its decisions and where it took them."""

    def __init__(self, ctx, result, n_args):
        self.ctx, self.result = ctx, result
        self.points = ctx.points        # (node count, pred Value, line, decision)
        self.decisions = [p[3] for p in ctx.points]
        key = {}
        for i, v in enumerate(ctx.graph.inputs):
            if i < n_args:
                key[v.id] = ("arg", i)
            elif v.id in ctx.captures:
                key[v.id] = ("t", id(ctx.captures[v.id]))
            elif v.id in ctx.feeds:
                key[v.id] = ("f", id(ctx.feeds[v.id][0]), ctx.feeds[v.id][1])
        for var, v in ctx.var_inputs.values():
            key[v.id] = ("v", var._id)
        for i, node in enumerate(ctx.graph.nodes):
            for j, v in enumerate(node.outputs):
                key[v.id] = ("n", i, j)
        self.key = key


def explore(run, n_args, make_ctx):
    """Run ``run(ctx)`` in fresh contexts until every path of its tensor ``if``s is traced.

    Returns (ctx, result) of the only path, or of the merged graph when there are several.
    """
    pending, paths = [[]], []
    while pending:
        decisions = pending.pop()
        ctx = make_ctx()
        ctx.decisions = decisions
        with ctx:
            result = run(ctx)
            leaves = [_leaf(ctx, x) for x in _nest.flatten(result)]
        path = Path(ctx, (result, leaves), n_args)
        paths.append(path)
        for k in range(len(decisions), len(path.decisions)):
            pending.append(path.decisions[:k] + [not path.decisions[k]])
        if len(paths) + len(pending) > MAX_PATHS:
            raise TracingError(f"Python `if` on tensors inside tapeflow.function makes more than "
                               f"{MAX_PATHS} paths (last at {path.points[-1][2]}); use tf.cond "
                               f"or tf.where to combine them. (A Python `if` is converted to "
                               f"one If node, adding no path, unless a branch has a `return`, "
                               f"`break` or `continue`, mutates an object in place, or leaves "
                               f"a name read later defined on one side only or of a different "
                               f"type on each side)")
    if len(paths) == 1:
        return paths[0].ctx, paths[0].result[0]
    return merge(paths, n_args, make_ctx)


def _leaf(ctx, x):
    """A path's output leaf: a Value of its graph, None, or another Python value."""
    if isinstance(x, (Tensor, SymbolicTensor, Variable)):
        return ctx.value_of(as_tensor(x))
    if isinstance(x, (bool, int, float, np.number, np.ndarray)):
        return ctx.value_of(convert_to_tensor(x))
    return ("py", x)


def merge(paths, n_args, make_ctx):
    """One context computing what every path computes, with If nodes at the decisions."""
    first = paths[0]
    structure = _nest.structure(first.result[0])
    for p in paths[1:]:
        if _nest.structure(p.result[0]) != structure:
            raise TracingError(f"the function returns different structures on the two sides of "
                               f"the `if` ({p.points[0][2]}): {structure} and "
                               f"{_nest.structure(p.result[0])}")
    kinds = _output_kinds(paths)
    assigned = {}
    for p in paths:
        for vid, var in p.ctx.assigned.items():
            assigned.setdefault(vid, var)
    top = make_ctx()
    with top:
        env = {}
        for i, v in enumerate(first.ctx.graph.inputs[:n_args]):
            env[("arg", i)] = top.input(v.aval)
        for p in paths:
            for v in p.ctx.graph.inputs[n_args:]:
                k = p.key[v.id]
                if k in env:
                    continue
                if k[0] == "v":
                    env[k] = top.read_variable(_var(p, v))
                elif k[0] == "f":
                    env[k] = top.feed_input(*p.ctx.feeds[v.id], v.aval)
                else:
                    env[k] = SymbolicTensor(top.value_of(p.ctx.captures[v.id]))
        for vid, var in assigned.items():
            if ("v", vid) not in env:
                env[("v", vid)] = top.read_variable(var)
        flat = _combine(paths, 0, env, 0, kinds, list(assigned))
        n = sum(kind[0] == "tensor" for kind in kinds)    # _path_outputs skips Python leaves
        for vid, t in zip(assigned, flat[n:], strict=True):
            top.assign_variable(assigned[vid], t)
        leaves, it = [], iter(flat[:n])
        for kind in kinds:
            leaves.append(next(it) if kind[0] == "tensor" else kind[1])
        result = _nest.pack_sequence_as(first.result[0], leaves)
    for p in paths:
        top.created_variables.extend(p.ctx.created_variables)
    return top, result


def _var(path, v):
    for var, iv in path.ctx.var_inputs.values():
        if iv is v:
            return var
    raise AssertionError("not a variable input")


def _output_kinds(paths):
    """Per output leaf: ("tensor", aval) when any path gives a tensor, else ("py", value)."""
    kinds = []
    for k, leaves in enumerate(zip(*[p.result[1] for p in paths])):
        avals = {x.aval for x in leaves if isinstance(x, Value)}
        if len(avals) > 1:
            raise TracingError(f"output {k} of the function has different types on the sides of "
                               f"the `if` ({paths[0].points[0][2]}): "
                               f"{', '.join(sorted(_aval(a) for a in avals))}")
        if avals:
            kinds.append(("tensor", avals.pop()))
            continue
        values = [x[1] for x in leaves]
        if any(v is not values[0] and v != values[0] for v in values):
            raise TracingError(f"output {k} of the function is a different Python value on the "
                               f"sides of the `if` ({paths[0].points[0][2]}): {values}")
        kinds.append(("py", values[0]))
    return kinds


def _replay(path, start, stop, env):
    for node in path.ctx.graph.nodes[start:stop]:
        outs = apply_node(node, [env[path.key[v.id]] for v in node.inputs])
        for v, t in zip(node.outputs, outs, strict=True):
            env[path.key[v.id]] = t


def _combine(group, k, env, start, kinds, assigned):
    """The outputs of the paths in ``group`` (which share their first ``k`` decisions), built
    in the current trace from ``env`` (the values of everything before node ``start``)."""
    p = group[0]
    if len(group) == 1:
        _replay(p, start, len(p.ctx.graph.nodes), env)
        return _path_outputs(p, env, kinds, assigned)
    stop, pred, line, _ = p.points[k]
    for q in group[1:]:
        if q.points[k][0] != stop:
            raise TracingError(f"the function traced differently on two runs before the `if` at "
                               f"{line} (does it depend on randomness or Python state?)")
    _replay(p, start, stop, env)
    sides = [[q for q in group if q.decisions[k] is d] for d in (True, False)]
    then_trace, else_trace = [
        SubTrace(lambda side=side: _combine(side, k + 1, dict(env), stop, kinds, assigned))
        for side in sides]
    return emit_if(predicate(env[p.key[pred.id]], f"the condition at {line}"), then_trace, else_trace)


def _path_outputs(p, env, kinds, assigned):
    outs = []
    for kind, leaf in zip(kinds, p.result[1], strict=True):
        if kind[0] != "tensor":
            continue
        aval = kind[1]
        if isinstance(leaf, Value):
            outs.append(env[p.key[leaf.id]])
        elif leaf[1] is None:
            outs.append(creation.zeros(aval.shape, aval.dtype))   # None on this side: zeros
        else:
            outs.append(creation.fill(aval.shape, convert_to_tensor(leaf[1], dtype=aval.dtype)))
    for vid in assigned:
        state = p.ctx.var_state.get(vid) if vid in p.ctx.assigned else None
        outs.append(env[p.key[state.id]] if state is not None
                    else math.stop_gradient(env[("v", vid)]))   # unchanged: no gradient path
    return outs


__all__ = ["cond", "while_loop", "loop", "SubTrace", "emit_if", "explore", "merge", "MAX_PATHS"]
