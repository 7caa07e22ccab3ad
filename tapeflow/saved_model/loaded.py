"""What ``load`` returns: functions rebuilt from saved graphs, and modules holding them.

A ``LoadedFunction`` is the saved ``tapeflow.function``: a list of its concrete
functions (one per saved trace), each with the argument structure it accepts.
A call picks the concrete function whose arguments match (exact shapes first,
then ``None`` dimensions); a graph with ``None`` dimensions is specialised to
the call's shapes once per shape, as ``tapeflow.function`` does, so programs
run compiled and differentiate like traced ones.
"""
import threading

import numpy as np

from .. import _nest
from ..ir import dtypes as D
from ..ir.opdef import AVal
from ..runtime.module import Module
from ..runtime.tensor import Tensor, Variable, convert_to_tensor
from ..tracer.concrete_function import ConcreteFunction, specialize
from ..tracer.lower import Lowered
from ..tracer.symbolic_tensor import SymbolicTensor

_NO_DEFAULT = object()


class Param:
    """One parameter of a saved function: its name, whether it is keyword-only, its default."""

    def __init__(self, name, keyword_only=False, default=_NO_DEFAULT):
        self.name = name
        self.keyword_only = keyword_only
        self.default = default


class ArgLeaf:
    """What one flat argument must be: a tensor/variable of a shape and dtype, or a Python value."""

    def __init__(self, kind, shape=None, dtype=None, value=None, trainable=None):
        self.kind, self.shape, self.dtype, self.value, self.trainable = kind, shape, dtype, value, trainable

    def matches(self, x):
        """0: no; 1: with None dims; 2: exactly."""
        if self.kind == "python":
            if isinstance(x, (Tensor, Variable, SymbolicTensor, np.ndarray)):
                return 0
            return 2 if type(x) is type(self.value) and x == self.value else 0
        if self.kind == "variable":
            if not isinstance(x, Variable):
                return 0
            return 2 if (tuple(x.shape) == self.shape and x.dtype == self.dtype) else 0
        if isinstance(x, Variable):
            return 0
        aval = _aval_of(x, self.dtype)
        if aval is None or aval.dtype != self.dtype or len(aval.shape) != len(self.shape):
            return 0
        if tuple(aval.shape) == self.shape:
            return 2
        ok = all(s is None or s == d for s, d in zip(self.shape, aval.shape))
        return 1 if ok else 0

    def describe(self):
        if self.kind == "python":
            return repr(self.value)
        dims = ",".join("?" if d is None else str(d) for d in self.shape)
        return f"{'Variable ' if self.kind == 'variable' else ''}{self.dtype.name}[{dims}]"


def _aval_of(x, dtype):
    if isinstance(x, (Tensor, SymbolicTensor)):
        return x.aval
    if isinstance(x, np.ndarray):
        try:
            return AVal(x.shape, D.as_dtype(x.dtype))
        except TypeError:
            return None
    if isinstance(x, (bool, int, float, list, tuple)):
        try:
            return convert_to_tensor(x, dtype=dtype).aval
        except (TypeError, ValueError):
            return None
    return None


class SavedConcrete:
    """One saved trace: its ConcreteFunction and the arguments it accepts."""

    def __init__(self, concrete, structure, leaves):
        self.concrete = concrete
        self.structure = structure      # per parameter, _nest.structure(argument)
        self.leaves = leaves            # ArgLeaf per flat argument
        self._unknown = any(None in v.aval.shape for v in concrete.graph.inputs)
        self._by_shape = {}
        self._lock = threading.Lock()

    def for_arrays(self, flat):
        """The ConcreteFunction to run these flat arguments (specialised if the graph has None dims)."""
        if not self._unknown:
            return self.concrete
        inputs = self.concrete._inputs(flat)
        key = tuple((tuple(t.shape), t.dtype.name) for t in inputs)
        with self._lock:
            cf = self._by_shape.get(key)
            if cf is None:
                c = self.concrete
                graph = specialize(c.graph, [t.aval for t in inputs])
                cf = self._by_shape[key] = ConcreteFunction(graph, c.sources, c.out_template, c.n_out,
                                                            c.assigned, c.name)
            return cf


class LoadedFunction:
    """A saved ``tapeflow.function``: call it like the original; it runs the saved programs."""

    def __init__(self, name, params, concretes):
        self.name = name
        self.params = params
        self.concretes = concretes

    def __repr__(self):
        return f"<LoadedFunction {self.name}: {len(self.concretes)} concrete function(s)>"

    def _flat(self, args, kwargs):
        positional = [p for p in self.params if not p.keyword_only]
        if len(args) > len(positional):
            raise TypeError(f"{self.name}() takes {len(positional)} positional arguments, got "
                            f"{len(args)}")
        values, kwargs = {}, dict(kwargs)
        for p, a in zip(positional, args):
            values[p.name] = a
        for p in self.params:
            if p.name in kwargs:
                if p.name in values:
                    raise TypeError(f"{self.name}() got multiple values for argument {p.name!r}")
                values[p.name] = kwargs.pop(p.name)
            elif p.name not in values:
                if p.default is _NO_DEFAULT:
                    raise TypeError(f"{self.name}() missing required argument {p.name!r}")
                values[p.name] = p.default
        if kwargs:
            raise TypeError(f"{self.name}() got unexpected keyword argument(s) {sorted(kwargs)}")
        structure = tuple(_nest.structure(values[p.name]) for p in self.params)
        flat = [leaf for p in self.params for leaf in _nest.flatten(values[p.name])]
        return structure, flat

    def _select(self, structure, flat):
        best, best_score = None, 0
        for sc in self.concretes:
            if sc.structure != structure or len(sc.leaves) != len(flat):
                continue
            scores = [leaf.matches(x) for leaf, x in zip(sc.leaves, flat)]
            if all(scores):
                score = 2 if all(s == 2 for s in scores) else 1
                if score > best_score:
                    best, best_score = sc, score
        if best is None:
            got = ", ".join(_describe(x) for x in flat)
            options = "\n  ".join("(" + ", ".join(leaf.describe() for leaf in sc.leaves) + ")"
                                  for sc in self.concretes)
            raise ValueError(f"Could not find matching concrete function to call loaded function "
                             f"{self.name!r} with arguments ({got}). Saved ones take:\n  {options}")
        return best

    def _convert(self, sc, flat):
        out = []
        for leaf, x in zip(sc.leaves, flat):
            if leaf.kind == "tensor" and not isinstance(x, (Tensor, SymbolicTensor)):
                x = convert_to_tensor(x, dtype=leaf.dtype)
            out.append(x)
        return out

    def __call__(self, *args, **kwargs):
        structure, flat = self._flat(args, kwargs)
        sc = self._select(structure, flat)
        flat = self._convert(sc, flat)
        return sc.for_arrays(flat).call_flat(flat)

    def get_concrete_function(self, *args, **kwargs):
        """The ConcreteFunction these arguments would run (TensorSpecs not needed: pass tensors)."""
        structure, flat = self._flat(args, kwargs)
        sc = self._select(structure, flat)
        return sc.for_arrays(self._convert(sc, flat))

    def lower(self, *args, **kwargs):
        """Every compilation stage for these arguments (as ``tapeflow.function(...).lower``)."""
        return Lowered(self.get_concrete_function(*args, **kwargs))


def _describe(x):
    if isinstance(x, (Tensor, Variable, SymbolicTensor)):
        return f"{'Variable ' if isinstance(x, Variable) else ''}{x.dtype.name}{list(x.shape)}"
    return repr(x)[:40]


class LoadedModule(Module):
    """A loaded ``Module``: its variables, submodules and functions at their saved attribute paths."""

    def __init__(self, name):
        super().__init__(name=name if name.isidentifier() else None)
        self.signatures = {}

    def __call__(self, *args, **kwargs):
        fn = vars(self).get("__call__")
        if fn is None:
            raise TypeError(f"loaded module {self.name!r} is not callable: no __call__ was saved")
        return fn(*args, **kwargs)


def example_args(fn):
    """Arguments for ``fn``'s first saved trace: zeros of its types (unknown dims become 1)."""
    sc = fn.concretes[0]
    flat = []
    for leaf in sc.leaves:
        if leaf.kind == "python":
            flat.append(leaf.value)
        else:
            z = np.zeros([1 if d is None else d for d in leaf.shape], leaf.dtype.np)
            flat.append(Variable(z) if leaf.kind == "variable" else convert_to_tensor(z))
    it = iter(flat)
    return [_nest.from_structure(s, it) for s in sc.structure]


def find_function(loaded, name=None):
    """(function, example arguments): ``name`` is an attribute path ('a.b') or a signature name."""
    if isinstance(loaded, LoadedFunction):
        if name not in (None, loaded.name):
            raise LookupError(f"the saved program is the function {loaded.name!r}; it has no {name!r}")
        return loaded, example_args(loaded)
    functions = {k: v for k, v in vars(loaded).items() if isinstance(v, LoadedFunction)}
    if name is None:
        if len(functions) == 1:
            fn = next(iter(functions.values()))
        elif "serving_default" in loaded.signatures:
            fn = loaded.signatures["serving_default"]
        else:
            raise LookupError(f"the saved module has functions {sorted(functions)}: name one, "
                              f"as PATH:NAME")
        return fn, example_args(fn)
    if name in loaded.signatures:
        fn = loaded.signatures[name]
        return fn, example_args(fn)
    obj = loaded
    for part in name.split("."):
        obj = vars(obj).get(part) if isinstance(obj, LoadedModule) else None
    if not isinstance(obj, LoadedFunction):
        raise LookupError(f"no function {name!r} in the saved program; it has "
                          f"{sorted(functions) + sorted(loaded.signatures)}")
    return obj, example_args(obj)


__all__ = ["LoadedFunction", "LoadedModule", "SavedConcrete", "ArgLeaf", "Param",
           "find_function", "example_args"]
