"""ConcreteFunction: one traced graph, callable eagerly, inlined when traced, one op to the tape.

Called under a tape, it records a single entry whose outputs are the function's
outputs plus the residuals the backward program reads, and whose gradient is
that backward program, itself a ConcreteFunction, so nested tapes differentiate
through compiled code. This reproduces TensorFlow's rule for gradients through
a function: an input that reaches any output gets a tensor (zeros where the
requested target does not depend on it); an input that reaches none gets None.
"""
from __future__ import annotations

import functools
import threading
import types
from typing import Any

import numpy as np

from ..autodiff.custom_gradient import int_outputs_through_call
from ..errors import InvalidArgumentError
from ..ir import dtypes as D
from ..ir.graph import Graph, Value, constant_of, print_graph
from ..ir.defs.loops import stack_output
from ..ir.opdef import OPS, AVal
from ..runtime.interpret import apply_node, replay
from ..runtime.kernels.loops import backward_loops
from ..runtime.recorder import STATE, Entry
from ..runtime.registry import GradRule
from ..runtime.tensor import Variable, convert_to_tensor, wrap
from ..runtime import placement_log
from ..runtime.placement_log import ENABLED as LOG_PLACEMENT
from ..runtime.traceback_filter import drop_internal_frames
from . import compile_log, engine as backend, tiers
from ..passes.keep_stacks import keep_stacks
from ..passes.partition import partition
from .. import env
from .graph_vjp import Joint, split, vjp_graph
from .context import TraceContext, current, feed_input
from .fastcall import assigns_inline, fast_caller
from .inspection import FuncGraph, output_structure, signature_text, spec_leaf
from .outputs import ConstLeaf, OutRef, builder  # noqa: F401 - ConstLeaf, OutRef: saved_model imports them from here


def _within_budget(joint, fwd_graph, bwd_graph, n_res):
    """TensorFlow's split, or, when its computed residuals pass ``TAPEFLOW_MEMORY_MB``, the
    min-cut partition fitted to that budget (the backward recomputes activations)."""
    budget = env.get("TAPEFLOW_MEMORY_MB")
    if budget is None:
        return fwd_graph, bwd_graph, n_res
    limit = int(budget * 2**20)
    inputs = {v.id for v in fwd_graph.inputs}
    kept = sum(_aval_bytes(v.aval) for v in fwd_graph.outputs[len(fwd_graph.outputs) - n_res:]
               if v.id not in inputs)
    if kept <= limit:
        return fwd_graph, bwd_graph, n_res
    fwd, bwd, _ = partition(joint.graph, joint.n_primals, joint.n_outputs, budget=limit)
    return fwd, bwd, len(fwd.outputs) - joint.n_outputs


def _aval_bytes(aval):
    n = aval.dtype.size
    for d in aval.shape:
        n *= 1 if d is None else d
    return n

class ConcreteFunction:
    """A graph with its calling convention.

    ``sources``: per graph input, ("arg", k) for the k-th flat argument (a tensor or a
    Variable), ("var", Variable) for a variable captured from the closure, or
    ("tensor", Tensor) for an eager tensor captured from the closure, or ("feed", (feed, j))
    for part j of what ``feed.pull`` gives at each call (a dataset a ``for`` loop iterates,
    ``context.feed_input``).
    ``out_template``: the Python output structure, with graph output indices at tensor leaves.
    ``assigned``: where the variables written inside come from (same form as ``sources``);
    their new values are the trailing graph outputs.

    >>> f = tf.function(lambda x: x * 2.0)
    >>> c = f.get_concrete_function(tf.TensorSpec([None], tf.float32))
    >>> c(tf.constant([1.0, 2.0, 3.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([2., 4., 6.], dtype=float32)>
    """

    def __init__(self, graph, sources, out_template, n_out, assigned, name="function", binder=None,
                 jit_compile=None):
        self.graph = FuncGraph.adopt(graph, name)
        self.sources = sources
        self.out_template = out_template
        self.n_out = n_out
        self.assigned = assigned
        self.name = name
        self._binder = binder  # Python arguments -> the flat argument list (for __call__)
        self.jit_compile = jit_compile  # True: wait for Numba; False: interpreter; None: tiered
        self._program = None
        self._tiered = None    # the background compile while the interpreter tier runs
        self._specialized = {}
        self._feeds = any(kind == "feed" for kind, _ in sources or ())
        self._unknown_dims = any(None in v.aval.shape for v in graph.inputs) or any(
            None in v.aval.shape and not stack_output(v) for n in graph.nodes for v in n.outputs)
        self._joint = {}          # wrt mask (None: every float input) -> Joint
        self._tape_pair = {}      # wrt mask -> (forward, backward, number of residuals)
        self._rules = {}          # (trainable outputs, inputs kept) -> GradRule of a Call entry
        self._full_vjp = None
        self._lock = threading.Lock()
        self._build = None if out_template is None else builder(out_template)
        # the plain call's path, flat arguments in: call_fast until the program exists, then
        # straight-line code generated for this function and program (fastcall.py)
        self.fast = self.call_fast

    def __call__(self, *args, **kwargs) -> Any:
        """Call with the same kind of arguments as the Python function it was traced from.

        >>> c = tf.function(lambda x, y: x - y).get_concrete_function(tf.constant(1.0), tf.constant(2.0))
        >>> c(tf.constant(5.0), y=tf.constant(3.0))
        <tf.Tensor: shape=(), dtype=float32, numpy=2.0>
        """
        if self._binder is None:
            raise TypeError(f"{self.name} is an internal program; call it through its function")
        try:
            return self.call_flat(self._binder(args, kwargs))
        except Exception as e:   # the user reads their frames (runtime/traceback_filter.py)
            drop_internal_frames(e)
            raise

    def __repr__(self):
        return f"<ConcreteFunction {self.name}>\n{print_graph(self.graph)}"

    # (name, kind, argument structure with Spec leaves) per parameter; set by the tracer
    signature_params = None

    def pretty_printed_signature(self, verbose=True):
        """TensorFlow's text of this function's signature: parameters, output type, captures."""
        args = [v for (kind, _), v in zip(self.sources, self.graph.inputs, strict=True)
                if kind == "arg"]
        params = self.signature_params or [(f"arg_{k}", "POSITIONAL_ONLY", spec_leaf(None, v.aval))
                                           for k, v in enumerate(args)]
        captures = [(id(ref), v.aval) for (kind, ref), v in zip(self.sources, self.graph.inputs,
                                                                strict=True) if kind != "arg"]
        outputs = None if self.out_template is None else output_structure(self.out_template,
                                                                          self.graph)
        return signature_text(params, outputs, captures)

    @property
    def program(self):
        """What runs the graph: the compiled program, or (tiered, until it is ready) the
        interpreter. The tier switch replaces ``_program`` and ``fast`` (``_install``), so a
        compiled call checks nothing about tiers."""
        if self._program is None:
            with self._lock:
                if self._program is None:
                    prog = backend.compile(self.graph, self.name, backend.mode_for(self.jit_compile))
                    if isinstance(prog, tiers.Tiered):
                        self._tiered = prog
                        self._install(prog.interpreted)
                        prog.on_ready(self._switch)
                    else:
                        self._install(prog)
        return self._program

    def _install(self, prog):
        if (self.out_template is not None and not self._unknown_dims and not self._feeds
                and (not self.assigned or assigns_inline(self, prog))):
            self.fast = fast_caller(self, prog)
        self._program = prog

    def _switch(self, prog):
        """The tier switch: the compiled program replaces the interpreter (compiler thread)."""
        self._install(prog)
        t = self._tiered
        compile_log.record("tier", self.name, [v.aval for v in self.graph.inputs], t.seconds,
                           tier="numba", note="compiled in the background; replaces the interpreter")

    def wait_compiled(self, timeout=None):
        """Block until a background compile is done (tests, benchmarks); True if compiled."""
        self.program
        if self._tiered is not None:
            self._tiered.ready.wait(timeout)
        return self._program is not getattr(self._tiered, "interpreted", None)

    def run(self, arrays):
        """The program on NumPy values. A graph with unknown dims runs as it is on the
        interpreter; the Numba backend compiles it per input shape (specialised: ``Shape``
        folds to constants and the shape-tensor ops to their static forms), sizes that only
        the run decides (a TensorArray grown in a loop) read from the arrays at run time."""
        if not self._unknown_dims or self._shape_generic():
            return self.program(*arrays)
        key = tuple((np.shape(a), np.asarray(a).dtype.str) for a in arrays)
        prog = self._specialized.get(key)
        if prog is None:
            avals = [AVal(np.shape(a), D.as_dtype(np.asarray(a).dtype)) for a in arrays]
            mode = backend.mode_for(self.jit_compile)
            try:
                graph = specialize(self.graph, avals)
            except InvalidArgumentError:
                # a While whose loop variables change size (a concat in its body): compiled
                # as traced, made concrete per call shape (codegen/concrete_function.py), which raises
                # naming the op and line if the call itself does not fit
                graph = self.graph
            # sizes that depend on the data stay unknown: the program reads them from the
            # arrays holding them (codegen/shape_free.py), or runs on the interpreter
            prog = self._specialized[key] = backend.compile(graph, self.name, mode)
        return prog(*arrays)

    def _shape_generic(self):
        """Whether this function's program runs any input sizes: the interpreter does."""
        return (backend.get_backend() != "numba"
                or backend.mode_for(self.jit_compile) == "interpreted")

    # -- calling -------------------------------------------------------------------------
    def _inputs(self, flat_args):
        fed = self._fed() if self._feeds and current() is None else None
        out = []
        for k, (kind, ref) in enumerate(self.sources):
            if kind == "feed":      # inlined into another function's trace: fed to that one
                x = None if fed is not None else feed_input(*ref, self.graph.inputs[k].aval)
                if x is None:       # no function's trace (a jacobian's): the values now
                    fed = self._fed() if fed is None else fed
                    x = wrap(fed[k])
                out.append(x)
                continue
            x = flat_args[ref] if kind == "arg" else ref
            out.append(x.read() if isinstance(x, Variable) else convert_to_tensor(x))
        return out

    def _fed(self):
        """Input position -> array of each fed input: every feed pulled once, in order."""
        call, pulled, out = {}, {}, {}
        for k, (kind, ref) in enumerate(self.sources):
            if kind == "feed":
                feed, j = ref
                if id(feed) not in pulled:
                    pulled[id(feed)] = feed.pull(call)
                out[k] = pulled[id(feed)][j]
        return out

    def call_flat(self, flat_args):
        """Call with the flat argument list; returns the structured outputs."""
        inputs = self._inputs(flat_args)
        if current() is not None:
            outs = replay(self.graph, inputs)  # traced inside another function: inline
            outs = int_outputs_through_call(outs, self.n_out)   # TensorFlow's call gradient
        else:
            if LOG_PLACEMENT[0]:   # tf.debugging.set_log_device_placement
                placement_log.function_called(self)
            outs = self.call_tensors(inputs)
        for (kind, ref), val in zip(self.assigned, outs[self.n_out:], strict=True):
            (flat_args[ref] if kind == "arg" else ref).assign(val)
        return self._build(outs)

    def call_slow(self, args):
        """``fast``'s path when a tape, trace or custom_gradient is watching."""
        return self.call_flat(list(args))

    def call_fast(self, args):
        """``__call__``'s path when no tape, trace or custom_gradient is watching: arrays in, out."""
        if STATE.tapes or STATE.var_watchers or STATE.traces:
            return self.call_flat(list(args))
        if self._feeds:
            fed = self._fed()
            arrays = [args[ref]._value if kind == "arg" else fed[k] if kind == "feed" else
                      ref._value for k, (kind, ref) in enumerate(self.sources)]
        else:
            arrays = [args[ref]._value if kind == "arg" else ref._value for kind, ref in self.sources]
        prog = self._program
        outs = [wrap(a) for a in (self.run(arrays) if prog is None or self._unknown_dims
                                  else prog(*arrays))]
        if self.assigned:
            for (kind, ref), val in zip(self.assigned, outs[self.n_out:], strict=True):
                (args[ref] if kind == "arg" else ref).assign(val)
        return self._build(outs)

    def call_tensors(self, inputs):
        """Run on concrete tensors; record one entry on the tapes that track an input."""
        if current() is not None:  # a gradient rule traced into a graph (tape_graph): inline
            return replay(self.graph, inputs)
        ids = tuple(t._id for t in inputs)
        avals = tuple(t.aval for t in inputs)
        tapes = [rec for rec in STATE.tapes if rec.should_record(ids, avals)]
        if not tapes:
            return [wrap(np.asarray(a)) for a in self.run([t._value for t in inputs])]
        # The inputs are needed only if the residuals themselves get differentiated, which
        # takes a second tape or a persistent one; otherwise the entry keeps just the residuals.
        keep_inputs = len(tapes) > 1 or any(rec.persistent for rec in tapes)
        # One tape that can differentiate the gradient no further: only the inputs it tracks
        # get gradients (an untracked one's would be dropped), so a loop's gradient w.r.t.
        # data the tape does not watch is never computed. Otherwise every float input, as
        # TensorFlow's backward function: which of its inputs reach which outputs decides
        # None or zeros at second order through the call.
        wrt = None if keep_inputs else tuple(tapes[0].tracks(i) for i in ids)
        if wrt is not None and all(w or not a.dtype.is_floating for w, a in zip(wrt, avals)):
            wrt = None
        forward = self.tape_pair(wrt)[0]
        arrays = forward.run([t._value for t in inputs])
        outs = [wrap(np.asarray(a)) for a in arrays]
        results, residuals = outs[:len(self.graph.outputs)], outs[len(self.graph.outputs):]
        # As in TensorFlow, only floating-point outputs are the recorded op's outputs: an
        # integer output is not tracked, so a gradient of it is None.
        trainable = [i for i, o in enumerate(results) if o.dtype.is_floating]
        recorded = [results[i] for i in trainable] + residuals
        kept_inputs = list(inputs) if keep_inputs else None
        rule = self._grad_rule(tuple(trainable), keep_inputs, wrt)
        entry = Entry(f"Call:{self.name}", {}, rule, ids, tuple(o._id for o in recorded),
                      tuple(kept_inputs) if keep_inputs else (None,) * len(inputs),
                      (None,) * (len(recorded) - len(residuals)) + tuple(residuals), avals,
                      tuple(o.aval for o in recorded))
        for rec in tapes:
            rec.record(entry)
        return results

    # -- gradients -----------------------------------------------------------------------
    def joint(self, wrt=None):
        """``vjp_graph(self.graph)``, built once per ``wrt`` (a mask of the inputs to
        differentiate; None: every float input): ``tape_pair`` splits it, ``full_vjp`` runs it
        whole, ``lower`` partitions it. Sharing is safe because nothing edits a graph's nodes
        (passes build new graphs, passes/rewrite.py) and the splits copy the node lists."""
        with self._lock:
            return self._build_joint(wrt)

    def _build_joint(self, wrt=None, keep_slices=False):
        key = (wrt, "slices") if keep_slices else wrt
        if key not in self._joint:
            sliced = self._joint.get((wrt, "slices"))
            if sliced is not None and not sliced.slices:    # no IndexedSlices: the same graph
                self._joint[key] = sliced
            else:
                self._joint[key] = vjp_graph(self.graph, wrt, keep_slices)
        return self._joint[key]

    def tape_pair(self, wrt=None):
        """(forward with residuals, backward, number of residuals), built once per ``wrt``."""
        with self._lock:
            return self._build_tape_pair(wrt)

    def _build_tape_pair(self, wrt=None):
        if wrt not in self._tape_pair:
            # the tape gets TensorFlow's IndexedSlices from the backward (Joint.slices)
            joint = self._build_joint(wrt, keep_slices=True)
            # the forward returns its loops' stacks, the backward reads them (keep_stacks)
            graph = keep_stacks(joint.graph, joint.n_forward_nodes)
            fwd_graph, bwd_graph, n_res = split(joint if graph is joint.graph else Joint(
                graph, joint.n_primals, joint.n_outputs, joint.ct_outputs, joint.grad_inputs,
                joint.n_forward_nodes, joint.slices))
            if graph is joint.graph:      # no loop stacks: the memory budget may apply
                fwd_graph, bwd_graph, n_res = _within_budget(joint, fwd_graph, bwd_graph, n_res)
            fwd = ConcreteFunction(fwd_graph, self.sources, None, len(fwd_graph.outputs), [],
                                   f"{self.name}_forward", jit_compile=self.jit_compile)
            bwd = ConcreteFunction(bwd_graph, None, None, len(bwd_graph.outputs), [],
                                   f"{self.name}_backward", jit_compile=self.jit_compile)
            bwd.joint = joint
            self._tape_pair[wrt] = (fwd, bwd, n_res)
        return self._tape_pair[wrt]

    def full_vjp(self):
        """Inputs + cotangents of every output -> input gradients (recomputes the forward)."""
        with self._lock:
            return self._build_full_vjp()

    def _build_full_vjp(self):
        if self._full_vjp is None:
            joint = self._build_joint()
            g = joint.graph
            graph = Graph(g.inputs, g.nodes, g.outputs[joint.n_outputs:])
            f = ConcreteFunction(graph, None, None, len(graph.outputs), [], f"{self.name}_vjp",
                                 jit_compile=self.jit_compile)
            f.joint = joint
            self._full_vjp = f
        return self._full_vjp

    def _grad_rule(self, trainable, keep_inputs, wrt=None):
        """The gradient rule of this function's tape entries, one per (trainable outputs,
        inputs kept): it reads the residuals (and kept inputs) from the entry, never from a
        closure, so the tape's reverse sweep over calls is a graph of saved tensors with one
        structure for every call (tape_graph: cached, compiled after repeats)."""
        key = (trainable, keep_inputs, wrt)
        if key not in self._rules:
            self._rules[key] = GradRule(self._make_rule(trainable, keep_inputs, wrt),
                                        accepts_none=True,
                                        holds=functools.partial(self._loops_held, len(trainable), wrt))
        return self._rules[key]

    def _loops_held(self, n_trainable, wrt, entry):
        """What the backward program's loop gradients will hold for this call (saved_bytes)."""
        return backward_loops(self.tape_pair(wrt)[1].graph, entry.outputs[n_trainable:], self.name)

    def _make_rule(self, trainable, keep_inputs, wrt=None):
        def rule(op, *grads):
            backward = self.tape_pair(wrt)[1]
            joint = backward.joint
            residuals = op.outputs[len(trainable):]
            inputs = op.inputs if keep_inputs else None
            by_output = dict(zip(trainable, grads[:len(trainable)], strict=True))
            res_grads = grads[len(trainable):]
            # the entry's avals are this call's (the graph's may have None dims)
            out_avals = dict(zip(trainable, op.out_avals, strict=False))
            cts = [_ct(by_output.get(i), out_avals[i]) for i in joint.ct_outputs]
            if all(g is None for g in res_grads):
                in_grads = joint.gradients(backward.call_tensors(list(residuals) + cts))
                owner = joint
            else:  # something differentiates the residuals: the gradient of the whole forward
                if inputs is None:
                    raise AssertionError(f"{self.name}: residual gradients without kept inputs")
                full = self.tape_pair(wrt)[0].full_vjp()
                n = len(self.graph.outputs)
                all_grads = [by_output.get(i) for i in range(n)] + list(res_grads)
                all_avals = [out_avals.get(i) for i in range(n)] + [r.aval for r in residuals]
                all_cts = [_ct(all_grads[i], all_avals[i]) for i in full.joint.ct_outputs]
                in_grads = full.call_tensors(list(inputs) + all_cts)
                owner = full.joint
            result = [None] * len(op.in_avals)
            for i, g in zip(owner.grad_inputs, in_grads, strict=True):
                result[i] = g
            return result

        return rule


def specialize(graph, avals, known=None):
    """``graph`` re-traced with concrete input avals (for graphs traced with None dims).

    The branches of an If and the condition and body of a While are specialised too, to
    their operands' concrete avals (their nodes check that the two agree), with the operands
    that are constants (the sizes ``Shape`` folds to; not a While's loop variables) seen as
    constants inside, so the shape
    ops there become static too. ``known``: {input position: concrete Tensor}; such an input
    stays an input of the new graph (the node that runs it passes every operand)."""
    ctx = TraceContext()
    with ctx:
        inputs = [ctx.input(a) for a in avals]
        for k, t in (known or {}).items():   # made inside: a constant, not a capture
            inputs[k] = wrap(np.array(t._value))
        env = {v.id: t for v, t in zip(graph.inputs, inputs, strict=True)}
        for node in graph.nodes:
            ins = [env[v.id] for v in node.inputs]
            stand_in = _nested_specialized(node, ins)
            _check_specialized(stand_in, ins)
            for v, t in zip(node.outputs, apply_node(stand_in, ins), strict=True):
                env[v.id] = t
        ctx.graph.outputs = [ctx.value_of(env[v.id]) for v in graph.outputs]
    return ctx.graph


def _nested_specialized(node, inputs):
    """``node``, or a stand-in for it whose nested graphs take the avals of ``inputs`` (from
    the operand at the given position on) where they took unknown dims."""
    specs = OPS[node.op].graph_operands if node.op in OPS else ()
    attrs = dict(node.attrs)
    for name, start in specs:
        operands = inputs[start:]
        nested = attrs[name]
        if [v.aval for v in nested.inputs] != [t.aval for t in operands]:
            fixed = node.attrs.get("n_vars", 0)   # a While's loop variables change
            known = {k: _constant(t) for k, t in enumerate(operands) if k >= fixed}
            known = {k: t for k, t in known.items() if t is not None}
            attrs[name] = specialize(nested, [t.aval for t in operands], known)
    if attrs == node.attrs:
        return node
    return types.SimpleNamespace(op=node.op, attrs=attrs, line=node.line)


def _check_specialized(node, inputs):
    """Raise InvalidArgumentError if a nested graph of a control-flow ``node`` keeps a dim
    unknown while its operands are all known (a WhileGrad's, which ``_nested_specialized``
    leaves; a loop variable that grows): their type checks let such a graph take them
    (``ir/defs/control._fits``, for replays of a traced backward), but a specialised graph is
    one of static sizes, so ``run`` interprets the graph as traced instead, as before."""
    if node.op not in OPS or not OPS[node.op].static_graphs or any(None in t.aval.shape for t in inputs):
        return
    for nested in node.attrs.values():
        if isinstance(nested, Graph) and any(None in v.aval.shape for v in nested.inputs):
            raise InvalidArgumentError(f"{node.op}: a nested graph keeps unknown dims")


def _constant(t):
    """``t`` as a concrete Tensor if its value is known while tracing, else None."""
    if hasattr(t, "_value"):
        return t
    value = getattr(t, "value", None)
    array = constant_of(value) if isinstance(value, Value) else None
    return None if array is None else wrap(array)


def _ct(g, aval):
    return wrap(np.zeros(aval.shape, aval.dtype.np)) if g is None else g


__all__ = ["ConcreteFunction", "OutRef", "ConstLeaf"]
