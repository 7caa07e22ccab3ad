"""``load``: a saved-program directory back to functions and variables, everything read checked.

The manifest is validated field by field (types, ranges, references between
entries), graphs are decoded by ``ir.codec.decode`` (registered ops, arity,
attribute kinds, the ops' own shape inference), arrays are read by
``files.Directory.read_npy`` (header checked against the manifest first), and
each concrete function's wiring is checked against its graph: every argument,
variable and constant must have the type of the graph input it feeds, every
variable written must keep its type. Nothing from the file is imported, executed
or unpickled. Any problem raises ``SavedModelError`` naming the file.

One memory budget covers the whole load (``TAPEFLOW_LOAD_BUDGET_MB``, default 1 GiB):
file bytes, parsed JSON, the sum of all variables' and constants' bytes (checked from the
manifest before any array is read), graph nodes and the object tree's list padding are
charged before they are allocated.
"""
from __future__ import annotations

import os
import re

from .. import env
from ..ir.codec import Budget, DecodeError, decode, dtype_of, shape_of
from ..ir.opdef import AVal
from ..runtime.tensor import Variable, wrap
from ..tracer.concrete_function import ConstLeaf, ConcreteFunction, OutRef
from . import limits
from .errors import SavedModelError
from .files import Directory, nbytes
from .loaded import _NO_DEFAULT, ArgLeaf, LoadedFunction, LoadedModule, Param, SavedConcrete
from .save import FORMAT, FORMAT_VERSION, MANIFEST

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOP = {"format", "format_version", "tapeflow_version", "custom_gradients", "root", "objects",
        "signatures", "functions", "variables", "constants"}
_RESERVED = {"signatures", "_name", "_scope_name"}


class _Bad(Exception):
    """A problem in the manifest; ``load`` adds the manifest's name."""


def _check(cond, msg):
    if not cond:
        raise _Bad(msg)


def _obj(x, what, keys, optional=()):
    _check(isinstance(x, dict), f"{what} is not an object")
    missing = set(keys) - set(x)
    extra = set(x) - set(keys) - set(optional)
    _check(not missing, f"{what}: missing {sorted(missing)}")
    _check(not extra, f"{what}: unexpected {sorted(extra)!r:.100}")
    return x


def _list(x, what, max_len=limits.MAX_ENTRIES):
    _check(isinstance(x, list), f"{what} is not a list")
    _check(len(x) <= max_len, f"{what} has {len(x)} entries, more than {max_len}")
    return x


def _index(x, n, what):
    _check(type(x) is int and 0 <= x < n, f"{what}: {x!r:.40} is not an index below {n}")
    return x


def _name(x, what):
    _check(isinstance(x, str) and 0 < len(x) <= limits.MAX_NAME and x.isprintable(),
           f"{what}: {x!r:.60} is not a name")
    return x


def _scalar(x, what):
    _check(x is None or type(x) in (bool, int, float, str), f"{what}: {x!r:.60} is not a Python scalar")
    _check(type(x) is not int or abs(x) <= 1 << 63, f"{what}: integer out of range")
    _check(type(x) is not str or len(x) <= limits.MAX_NAME, f"{what}: string too long")
    return x


def _typed(x, what, allow_none=True):
    """(shape, dtype) of a {"shape", "dtype"} entry."""
    try:
        return shape_of(x["shape"], what, allow_none), dtype_of(x["dtype"], what)
    except DecodeError as e:
        raise _Bad(str(e)) from None


def _compatible(a, b):
    """Shapes/dtypes that can feed each other (None matches any size)."""
    return a.dtype == b.dtype and len(a.shape) == len(b.shape) and all(
        x is None or y is None or x == y for x, y in zip(a.shape, b.shape))


class _Loader:
    def __init__(self, path):
        self.dir = Directory(path, Budget(int(env.get("TAPEFLOW_LOAD_BUDGET_MB") * (1 << 20))))
        self.manifest_name = MANIFEST
        self.graph_cache = {}
        self.padding = 0

    def run(self):
        m = self.dir.read_json(MANIFEST, "manifest")
        self.dir.referrer = MANIFEST     # every file name from here on is read from the manifest
        where = self.dir.where(MANIFEST)
        try:
            return self._manifest(m)
        except _Bad as e:
            raise SavedModelError(where, str(e)) from None

    # -- the manifest --------------------------------------------------------------------------
    def _manifest(self, m):
        _check(isinstance(m, dict), "the manifest is not a JSON object")
        _check(m.get("format") == FORMAT, f"not a tapeflow saved program (format is "
                                          f"{m.get('format')!r:.60}, expected {FORMAT!r})")
        version = m.get("format_version")
        _check(version == FORMAT_VERSION, f"format version {version!r:.40} is not supported; this "
                                          f"tapeflow reads version {FORMAT_VERSION}")
        _obj(m, "manifest", _TOP)
        _check(isinstance(m["custom_gradients"], bool), "custom_gradients is not a boolean")
        _name(m["tapeflow_version"], "tapeflow_version")
        self.m = m
        self._charge_arrays(_list(m["variables"], "variables"), _list(m["constants"], "constants"))
        self.variables = [self._variable(v, i) for i, v in enumerate(_list(m["variables"], "variables"))]
        self.constants = [self._constant(c, i) for i, c in enumerate(_list(m["constants"], "constants"))]
        fns = _list(m["functions"], "functions")
        total = sum(len(f.get("concrete", ())) if isinstance(f, dict) and isinstance(
            f.get("concrete"), list) else 0 for f in fns)
        _check(total <= limits.MAX_ENTRIES, f"{total} concrete functions, more than {limits.MAX_ENTRIES}")
        self.functions = [self._function(f, i) for i, f in enumerate(fns)]
        root = _obj(m["root"], "root", {"kind"}, optional={"name", "function"})
        sigs = m["signatures"]
        _check(isinstance(sigs, dict) and len(sigs) <= limits.MAX_ENTRIES, "signatures is not an object")
        signatures = {_name(k, "signature name"): self.functions[_index(j, len(self.functions),
                                                                          f"signature {k!r:.40}")]
                      for k, j in sigs.items()}
        if root["kind"] == "function":
            _obj(root, "root", {"kind", "function"})
            _check(not m["objects"], "a function root has no objects")
            fn = self.functions[_index(root["function"], len(self.functions), "root function")]
            fn.signatures = signatures
            return fn
        _check(root["kind"] == "module", f"root kind {root['kind']!r:.40} is not 'module' or 'function'")
        _obj(root, "root", {"kind", "name"})
        module = LoadedModule(_name(root["name"], "root name"))
        module.signatures = signatures
        placed = self._objects(module, _list(m["objects"], "objects"))
        loose = [v for i, v in enumerate(self.variables) if i not in placed]
        if loose:  # captured by functions but not attributes of the module: still trainable
            module._captured_variables = loose
        return module

    def _charge_arrays(self, variables, constants):
        """All arrays' bytes against the budget before any is read (one file may be named by many)."""
        total = 0
        for what, entries in (("variables", variables), ("constants", constants)):
            for i, e in enumerate(entries):
                _check(isinstance(e, dict) and "shape" in e and "dtype" in e,
                       f"{what}[{i}]: missing shape or dtype")
                shape, dtype = _typed(e, f"{what}[{i}]", allow_none=False)
                try:
                    total += nbytes(shape, dtype, "")
                except SavedModelError as err:
                    raise _Bad(f"{what}[{i}]: {err.problem}") from None
        try:
            self.dir.budget.charge(total, f"{len(variables)} variables and {len(constants)} "
                                              f"constants of {total} bytes in all")
        except DecodeError as e:
            raise _Bad(str(e)) from None

    def _variable(self, v, i):
        what = f"variables[{i}]"
        _obj(v, what, {"name", "trainable", "file", "shape", "dtype"})
        shape, dtype = _typed(v, what, allow_none=False)
        _check(isinstance(v["trainable"], bool), f"{what}: trainable is not a boolean")
        name = _name(v["name"], f"{what} name")
        array = self.dir.read_npy(v["file"], shape, dtype)
        var = Variable(array, trainable=v["trainable"])
        var._name = name
        return var

    def _constant(self, c, i):
        what = f"constants[{i}]"
        _obj(c, what, {"file", "shape", "dtype"})
        shape, dtype = _typed(c, what, allow_none=False)
        return wrap(self.dir.read_npy(c["file"], shape, dtype))

    # -- functions ---------------------------------------------------------------------------
    def _function(self, f, i):
        what = f"functions[{i}]"
        _obj(f, what, {"name", "params", "concrete"})
        name = _name(f["name"], f"{what} name")
        params = [self._param(p, f"{what} params[{k}]") for k, p in enumerate(_list(f["params"], what))]
        _check(len({p.name for p in params}) == len(params), f"{what}: parameter names repeat")
        kinds = [p.keyword_only for p in params]
        _check(kinds == sorted(kinds), f"{what}: a keyword-only parameter comes before a positional one")
        concretes = [self._concrete(c, len(params), name, f"{what} concrete[{k}]")
                     for k, c in enumerate(_list(f["concrete"], f"{what} concrete"))]
        _check(concretes, f"{what}: no concrete functions")
        return LoadedFunction(name, params, concretes)

    def _param(self, p, what):
        _obj(p, what, {"name", "keyword_only"}, optional={"default"})
        _check(isinstance(p["name"], str) and _IDENT.fullmatch(p["name"]) and len(p["name"]) <= 200,
               f"{what}: {p['name']!r:.60} is not a parameter name")
        _check(isinstance(p["keyword_only"], bool), f"{what}: keyword_only is not a boolean")
        default = _scalar(p["default"], f"{what} default") if "default" in p else _NO_DEFAULT
        return Param(p["name"], p["keyword_only"], default)

    def _graph(self, file):
        if file not in self.graph_cache:
            data = self.dir.read_json(file, "graph file")
            try:
                self.graph_cache[file] = decode(data, self.dir.budget)
            except DecodeError as e:  # the codec's error, named by the file here
                raise SavedModelError(self.dir.where(file), str(e)) from None
        return self.graph_cache[file]

    def _concrete(self, c, n_params, name, what):
        _obj(c, what, {"graph", "structure", "leaves", "sources", "outputs", "n_out", "assigned"})
        _check(isinstance(c["graph"], str), f"{what}: graph is not a file name")
        graph = self._graph(c["graph"])
        structure = tuple(self._structure(s, f"{what} structure") for s in _list(c["structure"], what))
        _check(len(structure) == n_params, f"{what}: structure has {len(structure)} parameters, the "
                                           f"function {n_params}")
        leaves = [self._leaf(x, f"{what} leaves[{k}]") for k, x in enumerate(_list(c["leaves"], what))]
        _check(sum(_count(s) for s in structure) == len(leaves),
               f"{what}: the structure has {sum(_count(s) for s in structure)} leaves, "
               f"{len(leaves)} are described")
        sources = _list(c["sources"], f"{what} sources")
        _check(len(sources) == len(graph.inputs), f"{what}: {len(sources)} sources for "
                                                   f"{len(graph.inputs)} graph inputs")
        srcs = [self._source(s, leaves, v.aval, f"{what} sources[{k}]")
                for k, (s, v) in enumerate(zip(sources, graph.inputs))]
        n_out = c["n_out"]
        _check(type(n_out) is int and 0 <= n_out <= len(graph.outputs),
               f"{what}: n_out {n_out!r:.40} does not fit {len(graph.outputs)} graph outputs")
        assigned = _list(c["assigned"], f"{what} assigned")
        _check(n_out + len(assigned) == len(graph.outputs),
               f"{what}: {n_out} outputs and {len(assigned)} assigned variables, but the graph has "
               f"{len(graph.outputs)} outputs")
        written = [self._assigned(s, leaves, v.aval, f"{what} assigned[{k}]")
                   for k, (s, v) in enumerate(zip(assigned, graph.outputs[n_out:]))]
        template = self._template(c["outputs"], n_out, f"{what} outputs")
        concrete = ConcreteFunction(graph, srcs, template, n_out, written, name)
        return SavedConcrete(concrete, structure, leaves)

    def _structure(self, s, what):
        if s == "leaf":
            return "leaf"
        _check(isinstance(s, dict) and len(s) == 1, f"{what}: {s!r:.60} is not a structure")
        (kind, items), = s.items()
        _check(kind in ("list", "tuple", "dict") and isinstance(items, list),
               f"{what}: {kind!r:.40} is not list, tuple or dict")
        if kind == "dict":
            for it in items:
                _check(isinstance(it, list) and len(it) == 2 and isinstance(it[0], str),
                       f"{what}: a dict entry is [key, structure]")
            return ("dict", tuple((k, self._structure(v, what)) for k, v in items))
        return (kind, tuple(self._structure(v, what) for v in items))

    def _leaf(self, x, what):
        _check(isinstance(x, dict) and len(x) == 1, f"{what} is not a leaf description")
        (kind, d), = x.items()
        if kind == "python":
            return ArgLeaf("python", value=_scalar(d, what))
        _check(kind in ("tensor", "variable"), f"{what}: unknown leaf kind {kind!r:.40}")
        _obj(d, what, {"shape", "dtype"} | ({"trainable"} if kind == "variable" else set()))
        shape, dtype = _typed(d, what, allow_none=kind == "tensor")
        if kind == "variable":
            _check(isinstance(d["trainable"], bool), f"{what}: trainable is not a boolean")
        return ArgLeaf(kind, shape, dtype, trainable=d.get("trainable"))

    def _source(self, s, leaves, aval, what):
        _check(isinstance(s, dict) and len(s) == 1, f"{what} is not a source")
        (kind, i), = s.items()
        if kind == "arg":
            leaf = leaves[_index(i, len(leaves), what)]
            _check(leaf.kind != "python", f"{what}: argument {i} is a Python value, not a tensor")
            have = AVal(leaf.shape, leaf.dtype)
            _check(have == (tuple(aval.shape), aval.dtype) or (leaf.kind == "variable" and
                                                               _compatible(have, aval)),
                   f"{what}: argument {i} is {leaf.describe()} but feeds a graph input of "
                   f"{aval.dtype.name}{list(aval.shape)}")
            return ("arg", i)
        if kind == "variable":
            var = self.variables[_index(i, len(self.variables), what)]
            _check(_compatible(var.aval, aval), f"{what}: variable {i} is {var.dtype.name}"
                   f"{list(var.shape)} but feeds a graph input of {aval.dtype.name}{list(aval.shape)}")
            return ("var", var)
        if kind == "constant":
            t = self.constants[_index(i, len(self.constants), what)]
            _check(_compatible(t.aval, aval), f"{what}: constant {i} is {t.dtype.name}{list(t.shape)} "
                   f"but feeds a graph input of {aval.dtype.name}{list(aval.shape)}")
            return ("tensor", t)
        raise _Bad(f"{what}: unknown source kind {kind!r:.40}")

    def _assigned(self, s, leaves, aval, what):
        _check(isinstance(s, dict) and len(s) == 1, f"{what} is not a variable reference")
        (kind, i), = s.items()
        if kind == "arg":
            leaf = leaves[_index(i, len(leaves), what)]
            _check(leaf.kind == "variable", f"{what}: argument {i} is not a variable")
            target, ref = AVal(leaf.shape, leaf.dtype), ("arg", i)
        else:
            _check(kind == "variable", f"{what}: unknown kind {kind!r:.40}")
            var = self.variables[_index(i, len(self.variables), what)]
            target, ref = var.aval, ("var", var)
        _check(_compatible(target, aval), f"{what}: writes {aval.dtype.name}{list(aval.shape)} to a "
                                          f"variable of {target.dtype.name}{list(target.shape)}")
        return ref

    def _template(self, t, n_out, what):
        _check(isinstance(t, dict) and len(t) == 1, f"{what}: {t!r:.60} is not an output description")
        (kind, v), = t.items()
        if kind == "out":
            return OutRef(_index(v, n_out, what))
        if kind == "const":
            return ConstLeaf(_scalar(v, what))
        _check(kind in ("list", "tuple", "dict") and isinstance(v, list), f"{what}: unknown kind "
                                                                          f"{kind!r:.40}")
        if kind == "dict":
            out = {}
            for it in v:
                _check(isinstance(it, list) and len(it) == 2 and isinstance(it[0], str)
                       and it[0] not in out, f"{what}: a dict entry is [unique key, output]")
                out[it[0]] = self._template(it[1], n_out, what)
            return out
        items = [self._template(x, n_out, what) for x in v]
        return items if kind == "list" else tuple(items)

    # -- the object tree -----------------------------------------------------------------------
    def _objects(self, root, objects):
        placed = set()
        for k, o in enumerate(objects):
            what = f"objects[{k}]"
            _check(isinstance(o, dict) and len(o) == 2 and "path" in o, f"{what} is not {{path, kind}}")
            path = [self._segment(s, f"{what} path") for s in _list(o["path"], what, 64)]
            _check(path, f"{what}: empty path")
            (kind, ref), = ((kk, vv) for kk, vv in o.items() if kk != "path")
            if kind == "variable":
                value = self.variables[_index(ref, len(self.variables), what)]
                placed.add(ref)
            elif kind == "function":
                value = self.functions[_index(ref, len(self.functions), what)]
            elif kind == "module":
                value = LoadedModule(_name(ref, what))
            else:
                raise _Bad(f"{what}: unknown object kind {kind!r:.40}")
            self._place(root, path, value, what)
        return placed

    def _pad(self, node, key, what):
        """Fill a list up to ``key`` with None (entries not saved), within the load's padding bound."""
        extra = key + 1 - len(node)
        self.padding += extra
        _check(self.padding <= limits.MAX_PADDING, f"{what}: list indices leave more than "
                                                   f"{limits.MAX_PADDING} unsaved entries in all")
        node.extend([None] * extra)

    def _segment(self, s, what):
        _check(isinstance(s, dict) and len(s) == 1, f"{what}: {s!r:.60} is not a path segment")
        (kind, v), = s.items()
        if kind == "attr":
            _check(v == "__call__" or isinstance(v, str) and _IDENT.fullmatch(v) and len(v) <= 200 and
                   not v.startswith("__") and v not in _RESERVED and not hasattr(LoadedModule, v),
                   f"{what}: {v!r:.60} cannot be an attribute of a loaded module")
        elif kind == "index":
            _check(type(v) is int and 0 <= v < limits.MAX_ENTRIES, f"{what}: bad index {v!r:.40}")
        else:
            _check(kind == "key" and isinstance(v, str) and len(v) <= limits.MAX_NAME,
                   f"{what}: {s!r:.60} is not a path segment")
        return kind, v

    def _place(self, root, path, value, what):
        node = root
        for (kind, key), (next_kind, _) in zip(path, path[1:]):
            child = _get(node, kind, key, what)
            if child is None:
                child = {"attr": lambda: LoadedModule("module"), "index": list, "key": dict}[next_kind]()
                self._set(node, kind, key, child, what)
            want = {"attr": LoadedModule, "index": list, "key": dict}[next_kind]
            _check(isinstance(child, want), f"{what}: the path goes through a "
                                            f"{type(child).__name__}, not a container")
            node = child
        kind, key = path[-1]
        existing = _get(node, kind, key, what)
        if isinstance(value, LoadedModule) and isinstance(existing, LoadedModule):
            return
        _check(key != "__call__" or isinstance(value, LoadedFunction),
               f"{what}: only a function can be __call__")
        _check(existing is None, f"{what}: the path is already taken")
        self._set(node, kind, key, value, what)

    def _set(self, node, kind, key, value, what):
        if kind == "attr":
            setattr(node, key, value)
        elif kind == "index":
            if key >= len(node):  # entries that were not saved (not variables or modules) stay None
                self._pad(node, key, what)
            node[key] = value
        else:
            node[key] = value


def _get(node, kind, key, what):
    if kind == "attr":
        _check(isinstance(node, LoadedModule), f"{what}: attribute of a non-module")
        return vars(node).get(key)
    if kind == "index":
        _check(isinstance(node, list), f"{what}: index into a non-list")
        return node[key] if key < len(node) else None
    _check(isinstance(node, dict), f"{what}: key into a non-dict")
    return node.get(key)


def _count(s):
    if s == "leaf":
        return 1
    kind, items = s
    return sum(_count(v if kind != "dict" else v[1]) for v in items)


def load(export_dir: str | os.PathLike) -> LoadedModule | LoadedFunction:
    """The Module (or function) saved in ``export_dir``; raises SavedModelError if the files are bad.

    Args:
      export_dir: a directory written by ``save``.

    Returns:
      The loaded Module (its functions run and differentiate; its variables train and save
      again), or the loaded function.

    Raises:
      SavedModelError: a missing, malformed or hostile file, naming the file and the problem.

    >>> import os, tempfile
    >>> m = tf.Module()
    >>> m.w = tf.Variable(3.0)
    >>> m.f = tf.function(lambda x: m.w * x, input_signature=[tf.TensorSpec([], tf.float32)])
    >>> path = os.path.join(tempfile.mkdtemp(), "m")
    >>> tf.saved_model.save(m, path)
    >>> loaded = tf.saved_model.load(path)
    >>> loaded.f(tf.constant(2.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=6.0>
    >>> with tf.GradientTape() as tape:
    ...     y = loaded.f(tf.constant(2.0))
    >>> tape.gradient(y, loaded.w)
    <tf.Tensor: shape=(), dtype=float32, numpy=2.0>
    """
    return _Loader(export_dir).run()


__all__ = ["load"]
