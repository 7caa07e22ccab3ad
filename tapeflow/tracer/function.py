"""``tapeflow.function``: trace a Python function into a graph once per input signature.

The cache key is the structure of the arguments with tensors replaced by their
shape and dtype, variables by shape/dtype/trainable, other Python values by
value (or identity). A miss on a function already traced explains itself: the
argument that changed, old versus new; from the fifth trace on, a warning says so.
With an ``input_signature`` (or ``reduce_retracing``, once a dimension has been seen
with two sizes), ``None`` dimensions match any size: the body is traced once with ``None``
in ``x.shape``, as TensorFlow does, and that one graph serves every matching call (sizes
the graph needs are computed at run time, ``tf.shape``). A call also reuses an earlier
trace whose signature accepts it (``get_concrete_function(TensorSpec([None, 3]))`` serves a
later ``f(x)`` of shape ``[4, 3]``), the most specific one first.
"""
from __future__ import annotations

import functools
import inspect
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import _nest
from ..ir import dtypes as D
from ..errors import user_frame
from ..ir.opdef import AVal
from ..ops.indexed_slices import IndexedSlices
from ..runtime.type_spec import TypeSpec
from ..runtime.tensor import Tensor, TensorShape, Variable, convert_to_tensor
from ..runtime.traceback_filter import drop_internal_frames
from . import compile_log
from .concrete_function import ConcreteFunction
from .context import DecisionLimitError, TraceContext
from .control import explore
from .convert import converted, unconverted_note
from .fastcall import function_caller, leaf_key, structure_of
from .inspection import Spec, Unknown, signature_text, spec_leaf
from .lower import Lowered
from .outputs import ConstLeaf, OutRef, SlicesRef
from .pywhile import undefined_after_loop
from .symbolic_tensor import SymbolicTensor

RETRACE_WARNING_THRESHOLD = 5


class RetracingWarning(UserWarning):
    """A tapeflow.function was traced again, repeatedly; the message says which argument changed."""


class TensorSpec(TypeSpec):
    """Shape (``None`` dims, or ``None`` for any rank) and dtype an argument must have.

    Args:
      shape: a list of ints and ``None`` (any size), or ``None`` (any rank).
      dtype: the argument's dtype (float32 by default).
      name: a name for the argument, as in TensorFlow.

    >>> spec = tf.TensorSpec([None, 3], tf.float32)
    >>> spec
    TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)
    >>> @tf.function(input_signature=[spec])
    ... def total(x):
    ...     return tf.reduce_sum(x, axis=1)
    >>> total(tf.ones([2, 3]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 3.], dtype=float32)>
    """

    def __init__(self, shape: Sequence[int | None] | None = None, dtype: D.DType | str = D.float32,
                 name: str | None = None) -> None:
        self.shape = TensorShape(shape)     # TensorShape(None) for any rank, as TensorFlow's
        self.dtype = D.as_dtype(dtype)
        self.name = name

    def is_compatible_with(self, aval):
        if aval.dtype != self.dtype:
            return False
        if self.shape.rank is None:
            return True
        return len(self.shape) == len(aval.shape) and all(
            a is None or a == b for a, b in zip(self.shape, aval.shape))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype!r}, name={self.name!r})"

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))


def _spec_dims(spec):
    """A spec's dims as a tuple, or None for any rank (what trace keys and printed
    signatures hold)."""
    return None if spec.shape.rank is None else tuple(spec.shape)


def _fmt_spec(spec):
    if spec[0] == "T":
        dims = ",".join("?" if d is None else str(d) for d in spec[1]) if spec[1] is not None else "*"
        return f"{spec[2]}[{dims}]"
    if spec[0] == "V":
        return f"Variable {spec[2]}{list(spec[1])}{'' if spec[3] else ' (non-trainable)'}"
    if spec[0] == "O":
        return f"object at 0x{spec[1]:x}"
    return repr(spec[2])


def _leaf_spec(x):
    """Hashable description of one argument leaf for the trace cache."""
    if isinstance(x, Tensor):
        return ("T", tuple(x.shape), x.dtype.name)
    if isinstance(x, np.ndarray):
        return ("T", x.shape, D.as_dtype(x.dtype).name)
    if isinstance(x, Variable):
        return ("V", tuple(x.shape), x.dtype.name, x.trainable)
    if isinstance(x, TensorSpec):
        return ("T", _spec_dims(x), x.dtype.name)
    if isinstance(x, SymbolicTensor):
        return ("T", tuple(x.shape), x.dtype.name)
    try:
        hash(x)
        return ("P", type(x).__name__, x)
    except TypeError:
        return ("O", id(x))


def _to_spec(spec, value):
    """``value`` with each Python list/tuple standing where ``spec`` has a TensorSpec converted to a
    tensor of the spec's dtype (TensorFlow binds ``[[1., 2.]]`` to ``TensorSpec([None, 2])``)."""
    if isinstance(spec, TensorSpec):
        if isinstance(value, (list, tuple)):
            return convert_to_tensor(value, dtype=spec.dtype)
        return value
    if isinstance(spec, (list, tuple)) and isinstance(value, (list, tuple)) and len(spec) == len(value):
        return type(value)(_to_spec(s, v) for s, v in zip(spec, value))
    if isinstance(spec, dict) and isinstance(value, dict):
        return {k: _to_spec(spec[k], v) if k in spec else v for k, v in value.items()}
    return value


def _cannot_cast(name, got, spec):
    """TensorFlow's error for a call that does not fit the input_signature (a TypeError)."""
    return TypeError(f"Binding inputs to tf.function `{name}` failed due to `Can not cast "
                     f"{got} to {spec}`")


def _same_value(a, b):
    """Whether a call's non-tensor argument equals the one a ConcreteFunction was traced with."""
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:   # noqa: BLE001 - values without a truthy ==: compare identity
        return a is b


# Argument leaves a ConcreteFunction takes at each call (the others are bound at its trace).
_TENSOR_LIKE = (Tensor, Variable, np.ndarray, SymbolicTensor, TensorSpec)


class Function:
    """A Python function compiled per input signature (TensorFlow's ``tf.function``).

    Made by ``tf.function``; calling it traces ``python_function`` once per input signature
    (shapes and dtypes of tensor arguments, values of the others) and runs the compiled program.

    >>> f = tf.function(lambda x: x * 2.0)
    >>> f(tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 4.], dtype=float32)>
    >>> f.experimental_get_tracing_count()
    1
    """

    def __init__(self, python_function, input_signature=None, jit_compile=None,
                 reduce_retracing=False, name=None):
        self.python_function = python_function
        self.input_signature = None if input_signature is None else list(input_signature)
        self.jit_compile = jit_compile
        self.reduce_retracing = reduce_retracing
        self.name = name or getattr(python_function, "__name__", "function")
        self._signature = inspect.signature(python_function)
        self._concrete = {}        # trace key (None dims where generalized) -> ConcreteFunction
        self._calls = {}           # concrete key -> the ConcreteFunction serving such calls
        self._general = {}         # generalized key -> trace number (what tracing count counts)
        self._retrace_reasons = []
        self._lock = threading.RLock()
        self._fast = {}            # (class, shape, dtype per tensor leaf) -> ConcreteFunction
        self._fast_structure = None  # the argument structure the generated __call__ serves
        params = list(self._signature.parameters.values())
        self._fast_arity = len(params) if all(
            p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in params) else -1
        self._bound = weakref.WeakKeyDictionary()
        self._bound_by_id = {}
        functools.update_wrapper(self, python_function)

    def __repr__(self):
        n = len(self._concrete)
        return (f"<tapeflow.function {self.name}{self._signature}: {n} "
                f"trace{'' if n == 1 else 's'}>")

    # -- methods ---------------------------------------------------------------------------
    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        try:
            bound = self._bound.get(instance)
        except TypeError:
            bound = self._bound_by_id.get(id(instance))
        if bound is None:
            bound = Function(self.python_function.__get__(instance, owner), self.input_signature,
                             self.jit_compile, self.reduce_retracing, self.name)
            try:
                self._bound[instance] = bound
            except TypeError:
                self._bound_by_id[id(instance)] = bound
        return bound

    # -- keys ------------------------------------------------------------------------------
    def _bind(self, args, kwargs):
        try:
            ba = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.name}(): {e}") from None
        ba.apply_defaults()
        return ba

    def _apply_signature(self, flat):
        """Check the call against input_signature; Python values become tensors of the spec's dtype."""
        sig = _nest.flatten(self.input_signature)
        if len(sig) > len(flat):
            raise TypeError(f"{self.name}(): input_signature has {len(sig)} specs but the call "
                            f"has {len(flat)} arguments")
        for i, (spec, x) in enumerate(zip(sig, flat)):
            if isinstance(x, TensorSpec):
                ok = x.dtype == spec.dtype and (spec.shape.rank is None or (
                    x.shape.rank is not None and len(x.shape) == len(spec.shape) and
                    all(a is None or a == b for a, b in zip(spec.shape, x.shape))))
                if not ok:
                    raise _cannot_cast(self.name, x, spec)
                continue
            if not isinstance(x, (Tensor, Variable, SymbolicTensor)):
                x = flat[i] = convert_to_tensor(x, dtype=spec.dtype)
            if not spec.is_compatible_with(x.aval):
                raise _cannot_cast(self.name, TensorSpec(x.shape, x.dtype), spec)

    def _keys(self, ba):
        names = list(ba.arguments)
        if self.input_signature is not None:   # as TF: a list where the spec is a tensor is one tensor
            for name, spec in zip(names, self.input_signature):
                ba.arguments[name] = _to_spec(spec, ba.arguments[name])
        flat, labels = [], []
        for name in names:
            leaves = _nest.flatten(ba.arguments[name])
            for j, leaf in enumerate(leaves):
                flat.append(leaf)
                labels.append(name if len(leaves) == 1 else f"{name}[{j}]")
        if self.input_signature is not None:
            self._apply_signature(flat)
        specs = [_leaf_spec(leaf) for leaf in flat]
        structure = tuple((n, _nest.structure(ba.arguments[n])) for n in names)
        concrete_key = (structure, tuple(specs))
        general = list(specs)
        if self.input_signature is not None:
            for i, spec in enumerate(_nest.flatten(self.input_signature)):
                general[i] = ("T", _spec_dims(spec), spec.dtype.name)
        elif self.reduce_retracing:
            general = [self._generalize(i, s) for i, s in enumerate(general)]
        return flat, labels, concrete_key, (structure, tuple(general))

    def _generalize(self, i, spec):
        """reduce_retracing: a dimension seen with two sizes becomes None."""
        if spec[0] != "T":
            return spec
        for (_, old_specs) in self._general:
            o = old_specs[i] if i < len(old_specs) else None
            if o and o[0] == "T" and o[2] == spec[2] and o[1] is not None and len(o[1]) == len(spec[1]):
                return ("T", tuple(a if a == b else None for a, b in zip(o[1], spec[1])), spec[2])
        return spec

    def _explain(self, general, labels):
        """Why ``general`` missed the cache: the nearest earlier key, argument by argument."""
        best = None
        for old in reversed(list(self._general)):  # the most recent of equally near keys
            if old[0] != general[0]:
                continue
            diffs = [(labels[i] if i < len(labels) else f"#{i}", a, b)
                     for i, (a, b) in enumerate(zip(old[1], general[1])) if a != b]
            if best is None or len(diffs) < len(best):
                best = diffs
        if best is None:
            return "the structure of the arguments changed"
        return "; ".join(f"argument {name!r} changed from {_fmt_spec(a)} to {_fmt_spec(b)}"
                         for name, a, b in best)

    # -- calling ---------------------------------------------------------------------------
    def __call__(self, *args, **kwargs) -> Any:
        try:
            return self._call(args, kwargs)
        except Exception as e:   # the user reads their frames (runtime/traceback_filter.py)
            drop_internal_frames(e)
            raise

    def _call(self, args, kwargs):
        """The general path: bind, key, trace on a miss, call. Once a call with positional
        tensor arguments succeeds, a generated ``__call__`` serves calls of that structure."""
        if _EAGER.on:
            return self.python_function(*args, **kwargs)
        ba = self._bind(args, kwargs)
        flat, labels, ckey, gkey = self._keys(ba)
        concrete = self._calls.get(ckey)
        if concrete is None:
            concrete = self._serving(ba, flat, labels, ckey, gkey)
        if not kwargs and len(args) == self._fast_arity:
            self._remember_fast(args, flat, concrete)
        return concrete.call_flat(flat)

    def _remember_fast(self, args, flat, concrete):
        """Key ``concrete`` for the generated fast path (fastcall.py), installing it once."""
        structure = structure_of(args)
        if structure is None:
            return
        with self._lock:
            if self._fast_structure is None and not _EAGER.on:
                self._fast_structure = structure
                _WITH_FAST_PATH.add(self)
                call = function_caller(structure, self._fast.get, Function._call)
                self.__class__ = type("Function", (Function,), {"__call__": call, "__slots__": ()})
            if structure == self._fast_structure:
                self._fast[leaf_key(flat)] = concrete

    def _serving(self, ba, flat, labels, ckey, gkey):
        """The ConcreteFunction for a call of concrete key ``ckey``: the trace of its trace
        key, else (TensorFlow) the most specific earlier trace accepting it, else a new trace."""
        with self._lock:
            concrete = self._calls.get(ckey)
            if concrete is None:
                tkey = _trace_key(ckey, gkey)
                concrete = self._concrete.get(tkey) or self._accepting(tkey)
                if concrete is None:
                    concrete = self._trace(ba, flat, labels, tkey, gkey)
                self._calls[ckey] = concrete
            return concrete

    def _accepting(self, tkey):
        """The earlier trace with ``None`` dims whose signature accepts ``tkey``, the one with
        the fewest ``None`` dims (TensorFlow's most specific compatible trace), or None."""
        best, best_unknown = None, None
        for key, concrete in self._concrete.items():
            if key[0] != tkey[0] or len(key[1]) != len(tkey[1]):
                continue
            unknown = 0
            for old, new in zip(key[1], tkey[1]):
                if old == new:
                    continue
                if not (old[0] == new[0] == "T" and old[2] == new[2] and len(old[1]) == len(new[1])
                        and all(a is None or a == b for a, b in zip(old[1], new[1]))):
                    break
                unknown += sum(a is None for a in old[1])
            else:
                if best is None or unknown < best_unknown:
                    best, best_unknown = concrete, unknown
        return best

    def _trace(self, ba, flat, labels, tkey, gkey):
        reason = None
        if gkey not in self._general:
            if self._general:
                reason = self._explain(gkey, labels)
                self._retrace_reasons.append(reason)
                if len(self._general) + 1 >= RETRACE_WARNING_THRESHOLD:
                    frame = user_frame()
                    warnings.warn_explicit(
                        f"tapeflow.function {self.name!r} was traced {len(self._general) + 1} "
                        f"times; this time because {reason}. Pass an input_signature with None "
                        f"dimensions, or reduce_retracing=True, to trace less.", RetracingWarning,
                        frame.f_code.co_filename if frame else "<unknown>", frame.f_lineno if frame else 0)
            self._general[gkey] = len(self._general)
        traced = converted(self.python_function)   # Python `while` on tensors -> While nodes
        arg_positions = [k for k, leaf in enumerate(flat)
                         if isinstance(leaf, (Tensor, np.ndarray, SymbolicTensor, TensorSpec))]
        traced_avals = {}   # flat position -> the aval the body sees (None dims: any size)

        def run(ctx):
            sym = []
            for k, (leaf, label) in enumerate(zip(flat, labels, strict=True)):
                name = label.split("[")[0]  # TensorFlow names a graph input after its parameter
                if isinstance(leaf, (Tensor, np.ndarray, SymbolicTensor)):
                    aval = leaf.aval if hasattr(leaf, "aval") else convert_to_tensor(leaf).aval
                    aval = traced_avals[k] = AVal(tkey[1][k][1], aval.dtype)
                    sym.append(ctx.input(aval, name))
                elif isinstance(leaf, TensorSpec):
                    if leaf.shape.rank is None:
                        raise ValueError(f"{self.name}: tapeflow traces with a known rank; "
                                         f"{leaf} has none. Call the function with tensors (an "
                                         f"input_signature of shape None accepts any rank and "
                                         f"traces each one), or give the spec a shape.")
                    sym.append(ctx.input(AVal(tuple(leaf.shape), leaf.dtype), leaf.name or name))
                else:
                    sym.append(leaf)
            args, kwargs = _rebuild(ba, sym)
            try:
                return traced(*args, **kwargs)
            except NameError as e:
                err = undefined_after_loop(e)
                if err is None:
                    raise
                raise err from e
            except DecisionLimitError as e:
                err = unconverted_note(e, getattr(self.python_function, "__func__",
                                                  self.python_function),
                                       getattr(traced, "__func__", traced))
                if err is None:
                    raise
                raise err.with_traceback(e.__traceback__) from None

        first = not self._concrete
        t0 = time.perf_counter()
        ctx, result = explore(run, len(arg_positions),
                              lambda: TraceContext(allow_variable_creation=first, feeding=True))
        if first and ctx.created_variables:
            # TensorFlow traces a function that created variables once more, and raises if
            # that trace creates more: variables must be made once (guarded by `if`).
            ctx, result = explore(run, len(arg_positions),
                                  lambda: TraceContext(allow_variable_creation=False, feeding=True))
        arg_inputs = {v.id: k for v, k in zip(ctx.graph.inputs, arg_positions)}
        with ctx:
            template, out_values = _outputs(ctx, result)
            assigned = list(ctx.assigned.values())
        graph = ctx.graph
        graph.outputs = out_values + [ctx.var_state[v._id] for v in assigned]
        var_pos = {id(x): k for k, x in enumerate(flat) if isinstance(x, Variable)}
        sources = []
        by_value = {v.id: var for var, v in ctx.var_inputs.values()}

        def source_of(var):
            return ("arg", var_pos[id(var)]) if id(var) in var_pos else ("var", var)

        for v in graph.inputs:
            if v.id in arg_inputs:
                sources.append(("arg", arg_inputs[v.id]))
            elif v.id in ctx.captures:
                sources.append(("tensor", ctx.captures[v.id]))
            elif v.id in ctx.feeds:     # a dataset's elements, pulled at each call
                sources.append(("feed", ctx.feeds[v.id]))
            else:
                sources.append(source_of(by_value[v.id]))
        concrete = ConcreteFunction(graph, sources, template, len(out_values),
                                    [source_of(v) for v in assigned], self.name,
                                    binder=_flat_binder(self, self._concrete_binder(ba)),
                                    jit_compile=self.jit_compile)
        self._describe(concrete, ba, labels, arg_inputs, traced_avals)
        self._concrete[tkey] = concrete
        compile_log.record("trace", self.name, [v.aval for v in graph.inputs],
                           time.perf_counter() - t0, note=reason and f"retraced: {reason}")
        return concrete

    def _describe(self, concrete, ba, labels, arg_inputs, traced_avals):
        """What TensorFlow shows of ``concrete``: its parameters with the traced specs (for
        ``pretty_printed_signature``) and its graph inputs' names (``graph.get_operations``)."""
        position = iter(range(len(labels)))

        def leaf(x):
            k = next(position)
            if isinstance(x, TensorSpec):
                return Spec(_spec_dims(x), x.dtype, x.name)
            if isinstance(x, (Tensor, np.ndarray, SymbolicTensor)):
                return spec_leaf(None, traced_avals[k])
            return x
        concrete.signature_params = [
            (name, self._signature.parameters[name].kind.name,
             _nest.map_structure(leaf, ba.arguments[name])) for name in ba.arguments]
        by_input = {k: labels[pos].split("[")[0] for k, pos in enumerate(
            arg_inputs.get(v.id) for v in concrete.graph.inputs) if pos is not None}
        concrete.graph.input_names = [by_input.get(k) for k in range(len(concrete.graph.inputs))]

    def pretty_printed_concrete_signatures(self, verbose: bool = True) -> str:
        """Every traced signature as TensorFlow prints them, separated by a blank line."""
        return "\n\n".join(c.pretty_printed_signature(verbose) for c in self._concrete.values())

    def _concrete_binder(self, traced):
        """How a ConcreteFunction traced with the bound arguments ``traced`` binds a call: as
        the function does, or (TensorFlow) with only the arguments that held tensors, the
        others keeping their traced values: ``get_concrete_function(model, x)`` is called
        as ``cf(x)``."""
        held = dict(traced.arguments)
        tensor_params = [p for name, p in self._signature.parameters.items()
                         if name in held and any(isinstance(leaf, _TENSOR_LIKE)
                                                 for leaf in _nest.flatten(held[name]))]
        tensor_sig = self._signature.replace(parameters=[
            p.replace(default=p.empty) if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD,
                                                     p.KEYWORD_ONLY) else p
            for p in tensor_params])

        fixed = {name: value for name, value in held.items()
                 if not any(isinstance(leaf, _TENSOR_LIKE) for leaf in _nest.flatten(value))}

        def bind(args, kwargs):
            try:
                ba = self._bind(args, kwargs)
            except TypeError as full_error:
                try:
                    part = tensor_sig.bind(*args, **kwargs)
                except TypeError:
                    raise full_error from None
                return inspect.BoundArguments(self._signature, {**held, **part.arguments})
            for name, value in fixed.items():   # a traced value is part of the program
                if name in ba.arguments and not _same_value(ba.arguments[name], value):
                    raise TypeError(f"Binding inputs to tf.function `{self.name}` failed due to "
                                    f"`Can not cast {ba.arguments[name]!r} to Literal[{value!r}]`")
            return ba

        return bind

    def get_concrete_function(self, *args, **kwargs) -> ConcreteFunction | AnyRankConcreteFunction:
        """The ConcreteFunction for these arguments (TensorSpecs allowed), tracing if needed.

        Args:
          *args, **kwargs: arguments as for a call, or ``TensorSpec``s standing for tensors
            (none needed when the function has an ``input_signature``).

        Returns:
          A ConcreteFunction: the traced program for that signature, callable with tensors.

        >>> f = tf.function(lambda x: x + 1.0)
        >>> c = f.get_concrete_function(tf.TensorSpec([2], tf.float32))
        >>> c(tf.constant([1.0, 2.0]))
        <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 3.], dtype=float32)>
        """
        if not args and not kwargs and self.input_signature is not None:
            args = tuple(self.input_signature)
        ba = self._bind(args, kwargs)
        flat, labels, ckey, gkey = self._keys(ba)
        if any(isinstance(x, TensorSpec) and x.shape.rank is None for x in flat):
            return AnyRankConcreteFunction(self, ba, flat)
        return self._serving(ba, flat, labels, ckey, gkey)

    def lower(self, *args, **kwargs) -> Lowered:
        """Every compilation stage for these arguments (see ``tracer.lower.Lowered``).

        Beyond TensorFlow (as JAX's ``jit(f).lower(x)``): the traced graph, each pass, the
        programs that run under a tape and their generated source, as text (``tapeflow dump``
        prints the same).

        >>> f = tf.function(lambda x: tf.reduce_sum(x * x))
        >>> low = f.lower(tf.constant([1.0, 2.0]))
        >>> print(low.traced)
        { lambda a:f32[2] ; let
            b:f32[2] = Mul a a
            c:f32[] = Sum[axis=None keepdims=False] b
          in (c) }
        """
        concrete = self.get_concrete_function(*args, **kwargs)
        if not args and not kwargs and self.input_signature is not None:
            args = tuple(self.input_signature)
        return Lowered(concrete, arg_names=self._keys(self._bind(args, kwargs))[1])

    def experimental_get_tracing_count(self) -> int:
        """How many times this function has been traced (one per new input signature).

        >>> f = tf.function(lambda x: x * x)
        >>> _ = f(tf.constant(1.0)); _ = f(tf.constant(2.0)); _ = f(tf.constant([1.0]))
        >>> f.experimental_get_tracing_count()
        2
        """
        return len(self._general)

    @property
    def retrace_reasons(self):
        """Why each retrace happened (beyond TensorFlow), oldest first."""
        return list(self._retrace_reasons)


def _trace_key(ckey, gkey):
    """The key of the trace serving a call: its general key, where a tensor's generalized
    shape (``None`` dims) replaces the concrete one; a spec of unknown rank (``TensorSpec(
    None)``) takes the call's rank with every dim ``None``, as tapeflow traces known ranks."""
    specs = []
    for c, g in zip(ckey[1], gkey[1], strict=True):
        if g[0] == "T" and c[0] == "T" and c[1] is not None:
            shape = g[1] if g[1] is not None and len(g[1]) == len(c[1]) else (None,) * len(c[1])
            specs.append(("T", shape, c[2]))
        else:
            specs.append(c)
    return ckey[0], tuple(specs)


def _flat_binder(function, bind):
    return lambda args, kwargs: function._keys(bind(args, kwargs))[0]


class AnyRankConcreteFunction:
    """``get_concrete_function(TensorSpec(None))``: TensorFlow traces one graph of unknown
    rank; tapeflow traces known ranks only, so this stands for it: a call checks the specs
    (TypeError, as TensorFlow's) and runs the function, which traces once per rank and
    shape. It has no single graph."""

    def __init__(self, function, ba, flat):
        self._function = function
        self._bind = function._concrete_binder(ba)
        self._specs = {k: x for k, x in enumerate(flat) if isinstance(x, TensorSpec)}
        self._params = [(name, function._signature.parameters[name].kind.name,
                         _nest.map_structure(lambda x: Spec(_spec_dims(x), x.dtype, x.name)
                                             if isinstance(x, TensorSpec) else x, value))
                        for name, value in ba.arguments.items()]
        self.name = function.name

    def __call__(self, *args, **kwargs):
        ba = self._bind(args, kwargs)
        flat = [leaf for value in ba.arguments.values() for leaf in _nest.flatten(value)]
        for k, spec in self._specs.items():
            x = flat[k] if k < len(flat) else None
            if not isinstance(x, (Tensor, Variable, SymbolicTensor)):
                x = convert_to_tensor(x, dtype=spec.dtype)
            if not spec.is_compatible_with(x.aval):
                raise TypeError(f"{self.name}(): argument {k} ({x.dtype.name}{list(x.shape)}) does "
                                f"not match {spec}")
        args, kwargs = _rebuild(ba, [leaf for value in ba.arguments.values()
                                     for leaf in _nest.flatten(value)])
        return self._function(*args, **kwargs)

    @property
    def graph(self):
        raise ValueError(f"{self.name}: a concrete function of unknown rank has no single graph "
                         f"in tapeflow (it traces each rank it is called with); trace with a "
                         f"known rank, e.g. TensorSpec([None, None]), to inspect one")

    def pretty_printed_signature(self, verbose=True):
        return signature_text(self._params, Unknown(), [])

    def __repr__(self):
        return f"<ConcreteFunction {self.name} (any rank)>"


def _rebuild(ba, sym):
    it = iter(sym)
    values = {}
    for name, val in ba.arguments.items():
        leaves = _nest.flatten(val)
        values[name] = _nest.pack_sequence_as(val, [next(it) for _ in leaves])
    args, kwargs = [], {}
    for name, p in ba.signature.parameters.items():
        v = values[name]
        if p.kind is p.VAR_POSITIONAL:
            args.extend(v)
        elif p.kind is p.VAR_KEYWORD:
            kwargs.update(v)
        elif p.kind is p.KEYWORD_ONLY:
            kwargs[name] = v
        else:
            args.append(v)
    return args, kwargs


def _outputs(ctx, result):
    out_values, leaves = [], []
    for leaf in _nest.flatten(result):
        if isinstance(leaf, Variable):
            leaf = leaf.read()
        elif isinstance(leaf, (bool, int, float, np.number, np.ndarray)):
            leaf = convert_to_tensor(leaf)  # TensorFlow returns Python numbers as tensors
        if isinstance(leaf, IndexedSlices):     # TensorFlow returns it as it is: three tensors
            parts = []
            for part in (leaf.values, leaf.indices, leaf.dense_shape):
                if part is None:
                    parts.append(ConstLeaf(None))
                else:
                    parts.append(OutRef(len(out_values)))
                    out_values.append(ctx.value_of(convert_to_tensor(part)))
            leaves.append(SlicesRef(parts))
        elif isinstance(leaf, (SymbolicTensor, Tensor)):
            leaves.append(OutRef(len(out_values)))
            out_values.append(ctx.value_of(leaf))
        else:
            leaves.append(ConstLeaf(leaf))
    return _nest.pack_sequence_as(result, leaves), out_values


class _Eager:
    on = False


_EAGER = _Eager()                    # tf.config.run_functions_eagerly
_WITH_FAST_PATH = weakref.WeakSet()  # Functions with a generated __call__ (undone when eager)


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Run every ``function``'s Python body eagerly (no trace, no compile), or stop.

    ``tf.config.run_functions_eagerly``: calls of every ``function`` run its Python body
    eagerly (no trace, no compile) until turned off again, the way to debug a function with
    print and pdb.

    Args:
      run_eagerly: True to run every function's Python body eagerly; False to trace again.

    >>> tf.config.run_functions_eagerly(True)
    >>> tf.config.functions_run_eagerly()
    True
    >>> tf.config.run_functions_eagerly(False)
    """
    _EAGER.on = bool(run_eagerly)
    if _EAGER.on:
        for fn in list(_WITH_FAST_PATH):
            with fn._lock:
                fn.__class__, fn._fast_structure = Function, None
                fn._fast.clear()
        _WITH_FAST_PATH.clear()


def functions_run_eagerly() -> bool:
    """Whether ``run_functions_eagerly(True)`` is in effect.

    ``tf.config.functions_run_eagerly``.

    >>> tf.config.functions_run_eagerly()
    False
    """
    return _EAGER.on


def function(func: Callable | None = None, input_signature: Sequence[TensorSpec] | None = None,
             jit_compile: bool | None = None, reduce_retracing: bool = False,
             experimental_relax_shapes=None,
             name: str | None = None) -> Function | Callable[[Callable], Function]:
    """Decorator compiling ``func`` (TensorFlow's ``tf.function``); works on methods too.

    The Python function is traced into a graph once per input signature, optimized, and run
    as one compiled program; tapes outside record one op for the call, and tapes inside are
    part of the program.

    Args:
      func: the function to compile (or None, to use ``function(...)`` as a decorator factory).
      input_signature: a list of ``TensorSpec``s fixing the arguments' shapes and dtypes.
      jit_compile: ``None`` (the default) is tiered: a new signature's first calls run the
        optimized graph on the NumPy interpreter while its Numba program compiles in a
        background process, which takes over when ready (``TAPEFLOW_TIERED=0`` makes every call
        wait instead); ``True`` waits for the Numba program; ``False`` never compiles (the
        interpreter only). ``tapeflow.config.set_log_compiles(True)`` shows each trace, compile
        and tier switch.
      reduce_retracing: trace with ``None`` dims after a shape changes, instead of once per shape.
      experimental_relax_shapes: the old name of ``reduce_retracing``.
      name: the function's name in dumps and logs.

    Returns:
      A ``Function`` (or, with ``func=None``, a decorator making one).

    >>> @tf.function(jit_compile=False)
    ... def loss(x, w):
    ...     return tf.reduce_mean(tf.nn.relu(x @ w) ** 2)
    >>> x, w = tf.ones([4, 3]), tf.Variable(tf.ones([3, 2]))
    >>> with tf.GradientTape() as tape:
    ...     y = loss(x, w)
    >>> y
    <tf.Tensor: shape=(), dtype=float32, numpy=9.0>
    >>> tape.gradient(y, w)
    <tf.Tensor: shape=(3, 2), dtype=float32, numpy=
    array([[3., 3.],
           [3., 3.],
           [3., 3.]], dtype=float32)>
    """
    if experimental_relax_shapes is not None:
        reduce_retracing = reduce_retracing or experimental_relax_shapes

    def wrap(f):
        return Function(f, input_signature, jit_compile, reduce_retracing, name)

    return wrap if func is None else wrap(func)
