"""``save``: a Module (or a function) to a directory of JSON and ``.npy`` files.

What is saved, per ``tapeflow.function`` found: every concrete function already
traced, plus the ``input_signature``'s own trace. A spec of unknown rank
(``TensorSpec(None)``) cannot be one graph in tapeflow (graphs have a rank), so
it is saved at ranks 0..4 with every dimension unknown; ranks the function cannot
trace at are left out (calling the loaded function at one says which ranks exist).
Variables are saved by value with their names and trainability; eager tensors a
function captured are saved as constants. The layout is in docs/saved_programs.md.
"""
from __future__ import annotations

import inspect
import itertools
import os
import shutil

import numpy as np

from ..ir import codec
from .._version import __version__
from ..runtime.module import Module, module_name
from ..runtime.tensor import Tensor, Variable
from ..tracer.concrete_function import ConstLeaf, OutRef
from ..tracer.function import Function, TensorSpec
from .files import Directory
from .loaded import _NO_DEFAULT, LoadedFunction, LoadedModule

MANIFEST = "saved_program.json"
FORMAT = "tapeflow-saved-program"
FORMAT_VERSION = 1
UNKNOWN_RANKS = range(5)


class SaveOptions:
    """Options for ``tf.saved_model.save``.

    Options of ``save``.

    ``experimental_custom_gradients`` (default True, as in TensorFlow): save the
    gradient graphs of custom gradients. Saved programs are data, so saving them
    costs no safety; without them, a loaded function that used one can be
    differentiated only in the process that saved it (TensorFlow's behaviour).

    >>> tf.saved_model.SaveOptions(experimental_custom_gradients=False).experimental_custom_gradients
    False
    """

    def __init__(self, experimental_custom_gradients: bool = True, **unsupported) -> None:
        if unsupported:
            raise TypeError(f"SaveOptions: unsupported option(s) {sorted(unsupported)}")
        self.experimental_custom_gradients = bool(experimental_custom_gradients)


class _Writer:
    def __init__(self, custom_gradients):
        self.custom_gradients = custom_gradients
        self.variables = {}    # id(Variable) -> (index, Variable)
        self.constants = {}    # id(Tensor) -> (index, Tensor)
        self.functions = {}    # id(function object) -> index
        self.function_records = []
        self.graphs = []       # (file name, json)

    def variable(self, var):
        if id(var) not in self.variables:
            self.variables[id(var)] = (len(self.variables), var)
        return self.variables[id(var)][0]

    def constant(self, t):
        if id(t) not in self.constants:
            self.constants[id(t)] = (len(self.constants), t)
        return self.constants[id(t)][0]

    def function(self, fn):
        if id(fn) not in self.functions:
            self.functions[id(fn)] = len(self.function_records)
            self.function_records.append(None)
            self.function_records[self.functions[id(fn)]] = self._function_record(fn)
        return self.functions[id(fn)]

    def _function_record(self, fn):
        if isinstance(fn, LoadedFunction):
            params = [_param(p.name, p.keyword_only, p.default) for p in fn.params]
            entries = [(sc.concrete, sc.structure, [_leaf_of_arg(leaf) for leaf in sc.leaves])
                       for sc in fn.concretes]
        else:
            params = _params(fn)
            entries = [(c, tuple(s for _, s in key[0]), [_leaf(spec, fn.name) for spec in key[1]])
                       for key, c in _traces(fn)]
        concrete = [self._concrete(c, structure, leaves) for c, structure, leaves in entries]
        return {"name": fn.name, "params": params, "concrete": concrete}

    def _concrete(self, c, structure, leaves):
        file = f"graphs/{len(self.graphs)}.json"
        self.graphs.append((file, codec.encode(c.graph, self.custom_gradients)))
        return {"graph": file, "structure": [_structure(s) for s in structure], "leaves": leaves,
                "sources": [self._source(kind, ref) for kind, ref in c.sources],
                "outputs": _template(c.out_template), "n_out": c.n_out,
                "assigned": [self._source(kind, ref) for kind, ref in c.assigned]}

    def _source(self, kind, ref):
        if kind == "arg":
            return {"arg": ref}
        if kind == "var":
            return {"variable": self.variable(ref)}
        if isinstance(ref, Tensor):
            return {"constant": self.constant(ref)}
        if kind == "feed":
            raise ValueError("cannot save a function that iterates a tf.data dataset or iterator: "
                             "tapeflow feeds its elements from Python at each call")
        raise ValueError(f"cannot save a function that captures {type(ref).__name__} {ref!r:.60}")


def _traces(fn):
    """(concrete key, ConcreteFunction) pairs of ``fn``: its traces and its signature's."""
    if fn.input_signature is not None:
        sig = list(fn.input_signature)
        unknown = [i for i, s in enumerate(sig) if isinstance(s, TensorSpec) and s.shape.rank is None]
        combos = itertools.product(UNKNOWN_RANKS, repeat=len(unknown)) if len(unknown) <= 2 else [()]
        errors = []
        for ranks in combos:
            specs = list(sig)
            for i, r in zip(unknown, ranks):
                specs[i] = TensorSpec([None] * r, sig[i].dtype, sig[i].name)
            if any(isinstance(s, TensorSpec) and s.shape.rank is None for s in specs):
                continue
            try:
                fn.get_concrete_function(*specs)
            except Exception as e:  # noqa: BLE001 (a rank the function cannot trace at is left out)
                errors.append(e)
        if errors and not fn._concrete:
            raise errors[0]
    if not fn._concrete:
        raise ValueError(f"cannot save function {fn.name!r}: it was never called and has no "
                         f"input_signature, so there is no traced program to save")
    return list(fn._concrete.items())


def _param(name, keyword_only, default):
    p = {"name": name, "keyword_only": keyword_only}
    if default is not _NO_DEFAULT:
        p["default"] = default
    return p


def _params(fn):
    out = []
    for p in fn._signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            raise ValueError(f"cannot save function {fn.name!r}: parameter {p.name!r} is "
                             f"{p.kind.description}; saved functions take plain parameters")
        default = _NO_DEFAULT
        if p.default is not p.empty:
            if p.default is None or type(p.default) in (bool, int, float, str):
                default = p.default
        out.append(_param(p.name, p.kind is p.KEYWORD_ONLY, default))
    return out


def _structure(s):
    if s == "leaf":
        return "leaf"
    kind, items = s
    if kind == "dict":
        for k, _ in items:
            if not isinstance(k, str):
                raise ValueError(f"cannot save an argument dict with key {k!r}: keys must be strings")
        return {"dict": [[k, _structure(v)] for k, v in items]}
    if kind not in ("list", "tuple"):
        raise ValueError(f"cannot save a function taking a {kind} argument; pass a tuple, list or dict")
    return {kind: [_structure(v) for v in items]}


def _leaf(spec, name):
    tag = spec[0]
    if tag == "T":
        return {"tensor": {"shape": list(spec[1]), "dtype": spec[2]}}
    if tag == "V":
        return {"variable": {"shape": list(spec[1]), "dtype": spec[2], "trainable": spec[3]}}
    if tag == "P" and (spec[2] is None or type(spec[2]) in (bool, int, float, str)):
        return {"python": spec[2]}
    raise ValueError(f"cannot save function {name!r}: it was traced with an argument of type "
                     f"{spec[1] if tag == 'P' else 'object'} that a saved program cannot hold")


def _leaf_of_arg(leaf):
    if leaf.kind == "python":
        return {"python": leaf.value}
    d = {"shape": list(leaf.shape), "dtype": leaf.dtype.name}
    if leaf.kind == "variable":
        d["trainable"] = leaf.trainable
    return {leaf.kind: d}


def _template(t):
    if isinstance(t, OutRef):
        return {"out": t.index}
    if isinstance(t, ConstLeaf):
        v = t.value
        if v is None or type(v) in (bool, int, float, str):
            return {"const": v}
        raise ValueError(f"cannot save a function returning {type(v).__name__} {v!r:.60}")
    if isinstance(t, dict):
        if not all(isinstance(k, str) for k in t):
            raise ValueError("cannot save a function returning a dict with non-string keys")
        return {"dict": [[k, _template(v)] for k, v in t.items()]}
    if isinstance(t, list):
        return {"list": [_template(v) for v in t]}
    if isinstance(t, tuple):
        return {"tuple": [_template(v) for v in t]}
    raise ValueError(f"cannot save a function returning {type(t).__name__}")


# -- the object tree -------------------------------------------------------------------------

def _module_functions(module):
    """(attribute name, function) for the module's ``tapeflow.function`` methods and attributes."""
    found = {}
    for name in sorted(dir(type(module))):
        if isinstance(inspect.getattr_static(type(module), name, None), Function):
            found[name] = getattr(module, name)
    for name, v in sorted(vars(module).items()):
        if isinstance(v, (Function, LoadedFunction)):
            found[name] = v
    return sorted(found.items())


def _walk(obj, path, w, objects, seen):
    """Record the variables, functions and submodules reachable from ``obj`` by attribute paths."""
    if isinstance(obj, Variable):
        objects.append({"path": path, "variable": w.variable(obj)})
        return
    if id(obj) in seen:
        return
    if isinstance(obj, Module):
        seen.add(id(obj))
        if path:
            objects.append({"path": path, "module": module_name(obj)})
        for name, fn in _module_functions(obj):
            if isinstance(fn, Function) and not fn._concrete and fn.input_signature is None:
                continue  # never called, no signature: no program to save (as in TensorFlow)
            objects.append({"path": path + [{"attr": name}], "function": w.function(fn)})
        for name in sorted(vars(obj)):
            v = vars(obj)[name]
            if name in getattr(obj, "_TF_MODULE_IGNORED_PROPERTIES", ()) or (
                    name == "signatures" and isinstance(obj, LoadedModule)):
                continue  # a loaded module's signatures are saved as signatures
            if isinstance(v, (Variable, Module, list, tuple, dict)):
                _walk(v, path + [{"attr": name}], w, objects, seen)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            if isinstance(v, (Variable, Module, list, tuple, dict)):
                _walk(v, path + [{"index": i}], w, objects, seen)
    elif isinstance(obj, dict):
        for k in sorted((k for k in obj if isinstance(k, str))):
            if isinstance(obj[k], (Variable, Module, list, tuple, dict)):
                _walk(obj[k], path + [{"key": k}], w, objects, seen)


def _signature_functions(obj, signatures, w):
    if signatures is None and isinstance(obj, LoadedModule):
        signatures = obj.signatures  # saving a loaded module again keeps its signatures
    if signatures is None:
        if isinstance(obj, Module):
            fns = [(n, f) for n, f in _module_functions(obj)
                   if isinstance(f, LoadedFunction) or f.input_signature is not None]
            return {"serving_default": w.function(fns[0][1])} if len(fns) == 1 else {}
        return {}
    if not isinstance(signatures, dict):
        signatures = {"serving_default": signatures}
    out = {}
    for key, fn in signatures.items():
        if not isinstance(key, str):
            raise ValueError(f"signature names must be strings, got {key!r}")
        if not isinstance(fn, (Function, LoadedFunction)):
            raise ValueError(f"signature {key!r} must be a tapeflow.function, got {type(fn).__name__}")
        out[key] = w.function(fn)
    return out


def save(obj, export_dir: str | os.PathLike, signatures=None,
         options: SaveOptions | None = None) -> None:
    """Save ``obj`` (a Module, a ``tapeflow.function`` or a loaded one) as a saved program.

    The files are data (JSON graphs and ``.npy`` arrays; ``docs/saved_programs.md``): loading
    them never imports or runs code from them.

    Args:
      obj: a ``tf.Module`` with ``function`` methods (traced at least once, or with an
        ``input_signature``), or a ``function``.
      export_dir: the directory to write (created).
      signatures: a function, or {name: function}, to save as serving signatures.
      options: a ``SaveOptions``.

    >>> import os, tempfile
    >>> class Affine(tf.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = tf.Variable(2.0)
    ...     @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    ...     def __call__(self, x):
    ...         return self.w * x + 1.0
    >>> path = os.path.join(tempfile.mkdtemp(), "affine")
    >>> tf.saved_model.save(Affine(), path)
    >>> sorted(os.listdir(path))[:2]
    ['graphs', 'saved_program.json']
    """
    options = options or SaveOptions()
    if not isinstance(options, SaveOptions):
        raise TypeError(f"options must be a tapeflow.saved_model.SaveOptions, got {type(options).__name__}")
    w = _Writer(options.experimental_custom_gradients)
    objects = []
    if isinstance(obj, Module):
        root = {"kind": "module", "name": module_name(obj)}
        _walk(obj, [], w, objects, set())
        for v in obj.variables:  # variables a module tracks in ways the walk does not follow
            w.variable(v)
    elif isinstance(obj, (Function, LoadedFunction)):
        root = {"kind": "function", "function": w.function(obj)}
    elif callable(obj):
        raise ValueError(f"cannot save {obj!r:.60}: wrap it in tapeflow.function (with an "
                         f"input_signature, or call it once) first")
    else:
        raise ValueError(f"cannot save an object of type {type(obj).__name__}; save a tapeflow.Module "
                         f"or a tapeflow.function")
    sigs = _signature_functions(obj, signatures, w)
    manifest = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "tapeflow_version": __version__,
        "custom_gradients": w.custom_gradients, "root": root, "objects": objects,
        "signatures": sigs, "functions": w.function_records,
        "variables": [], "constants": []}
    _write(export_dir, manifest, w)


def _write(export_dir, manifest, w):
    export_dir = os.fspath(export_dir)
    if os.path.lexists(os.path.join(export_dir, MANIFEST)):
        for sub in ("graphs", "variables", "constants"):  # replacing an earlier save
            if os.path.isdir(os.path.join(export_dir, sub)) and not os.path.islink(
                    os.path.join(export_dir, sub)):
                shutil.rmtree(os.path.join(export_dir, sub))
    os.makedirs(export_dir, exist_ok=True)
    d = Directory(export_dir)
    for index, var in sorted(w.variables.values(), key=lambda p: p[0]):
        file = f"variables/{index}.npy"
        d.write_npy(file, np.asarray(var._value))
        manifest["variables"].append({"name": var._name, "trainable": var.trainable, "file": file,
                                      "shape": list(var.shape), "dtype": var.dtype.name})
    for index, t in sorted(w.constants.values(), key=lambda p: p[0]):
        file = f"constants/{index}.npy"
        d.write_npy(file, np.asarray(t._value))
        manifest["constants"].append({"file": file, "shape": list(t.shape), "dtype": t.dtype.name})
    for file, data in w.graphs:
        d.write_json(file, data, compact=True)
    d.write_json(MANIFEST, manifest)  # last: a directory without it is not a saved program


__all__ = ["save", "SaveOptions", "MANIFEST", "FORMAT", "FORMAT_VERSION"]
