"""The IR's one JSON format: ``encode`` a Graph, ``decode`` it back with every field checked.

Layout: ``{"version", "inputs", "nodes", "outputs"}``; values are numbered in definition
order; a node is ``{"op", "inputs", "outputs", "attrs"}``; arrays are base64 with their
dtype and shape; graph-valued attributes nest. Saved programs store their graphs this
way (``saved_model`` adds only the files and the manifest around them), and any graph
can go through it (``tapeflow dump --saved``, tests).

Decoding trusts nothing, since a graph may come from a hostile file: ops must be
registered, arity and attribute names must match the OpDef, attribute values must have
the kind the OpDef gives the attribute (``OpDef.attrs``, kinds in ``opdef.ATTR_KINDS``),
every shape is bounded (``ir/limits.py``), each node's declared outputs must equal what
the op's own inference gives, and ``CustomGradient`` gradient graphs must fit the node
they belong to. Any problem raises ``DecodeError`` saying where and what.

A custom gradient encoded without its graph (``custom_gradients=False``) is
``{"registered_gradient": key}``: the key finds the graph only in the process that
encoded it, as TensorFlow's gradient registry does.
"""
import base64
import binascii
import math
import uuid

import numpy as np

from ..errors import InferError
from . import dtypes as D
from . import limits
from .graph import Graph, Value
from .opdef import ATTR_KINDS, OPS, AVal
from .shapes import broadcast_shapes

FORMAT_VERSION = 1
# The dtypes a graph may name.
_DTYPES = {d.name: d for d in D.ALL}

# Gradient graphs of custom gradients encoded without them: findable in this process only.
_PROCESS_GRADIENTS: dict[str, Graph] = {}


class DecodeError(ValueError):
    """A graph's JSON is malformed or breaks the IR; the message says where and what."""


# -- encoding --------------------------------------------------------------------------------

def encode(graph, custom_gradients=True):
    """The JSON-able dict of ``graph`` (``custom_gradients=False`` keeps gradient graphs out)."""
    ids = {}

    def num(v):
        return ids.setdefault(v.id, len(ids))

    def aval(v):
        return {"shape": list(v.aval.shape), "dtype": v.aval.dtype.name, "id": num(v)}

    inputs = [aval(v) for v in graph.inputs]
    nodes = []
    for node in graph.nodes:
        ins = [ids[v.id] for v in node.inputs]
        attrs = {}
        for k, v in sorted(node.attrs.items()):
            if node.op == "CustomGradient" and k == "grad" and not custom_gradients:
                attrs[k] = {"registered_gradient": _register(v)}
            else:
                attrs[k] = _enc_attr(v, custom_gradients)
        nodes.append({"op": node.op, "inputs": ins, "outputs": [aval(v) for v in node.outputs],
                      "attrs": attrs})
    return {"version": FORMAT_VERSION, "inputs": inputs, "nodes": nodes,
            "outputs": [ids[v.id] for v in graph.outputs]}


def _register(grad):
    if grad is None:
        return "missing"
    for key, g in _PROCESS_GRADIENTS.items():
        if g is grad:
            return key
    key = uuid.uuid4().hex
    _PROCESS_GRADIENTS[key] = grad
    return key


def _enc_attr(v, custom_gradients):
    if isinstance(v, Graph):
        return {"graph": encode(v, custom_gradients)}
    if isinstance(v, D.DType):
        return {"dtype": v.name}
    if v is Ellipsis:
        return {"ellipsis": True}
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.array(v, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
        return {"array": base64.b64encode(a.tobytes()).decode(), "dtype": D.as_dtype(a.dtype).name,
                "shape": list(a.shape)}
    if isinstance(v, tuple):
        return {"tuple": [_enc_attr(x, custom_gradients) for x in v]}
    if isinstance(v, list):
        return {"list": [_enc_attr(x, custom_gradients) for x in v]}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise TypeError(f"attribute value {v!r:.80} of type {type(v).__name__} cannot be encoded")


# -- decoding --------------------------------------------------------------------------------

class Budget:
    """What decoding may allocate: one per file for nodes and graphs, bytes shared by a whole load.

    Every count read from the data is charged here *before* anything is built from it, so a
    small hostile file cannot make decoding allocate much more than its own size. A saved
    program's loader passes one Budget through all its files (JSON, arrays, graphs), so
    ``max_bytes`` bounds the load as a whole; ``new_file`` resets the per-file counts.
    """

    def __init__(self, max_bytes=limits.DEFAULT_BUDGET_BYTES):
        self.max_bytes = max_bytes
        self.used = 0
        self.new_file()

    def new_file(self):
        self.nodes = 0
        self.graphs = 0

    def charge(self, nbytes, what):
        """Count ``nbytes`` about to be allocated for ``what``; DecodeError past the budget."""
        self.used += nbytes
        if self.used > self.max_bytes:
            raise DecodeError(f"{what} would take the load past its memory budget of "
                              f"{self.max_bytes >> 20} MiB (TAPEFLOW_LOAD_BUDGET_MB)")


def decode(data, budget=None):
    """A Graph from ``encode``'s JSON, every field checked; DecodeError says what is wrong."""
    budget = Budget() if budget is None else budget
    budget.new_file()
    return _graph(data, 0, budget)


def _graph(data, depth, budget):
    if depth > limits.MAX_GRAPH_NESTING:
        raise DecodeError(f"graphs nest deeper than {limits.MAX_GRAPH_NESTING} levels")
    budget.graphs += 1
    if budget.graphs > limits.MAX_GRAPHS:
        raise DecodeError(f"more than {limits.MAX_GRAPHS} graphs (nested ones included)")
    _keys(data, "graph", {"version", "inputs", "nodes", "outputs"})
    if data["version"] != FORMAT_VERSION:
        raise DecodeError(f"graph format version {data['version']!r:.40} is not {FORMAT_VERSION}")
    vals = {}
    g = Graph()
    budget.charge(limits.VALUE_BYTES * len(_list(data["inputs"], "graph inputs")), "graph inputs")
    for k, e in enumerate(data["inputs"]):
        v = Value(_aval(e, f"input {k}"))
        _define(vals, e, v, f"input {k}")
        g.inputs.append(v)
    nodes = _list(data["nodes"], "graph nodes")
    budget.nodes += len(nodes)
    if budget.nodes > limits.MAX_NODES:
        raise DecodeError(f"more than {limits.MAX_NODES} nodes")
    budget.charge(limits.NODE_BYTES * len(nodes), f"{len(nodes)} nodes")
    for k, n in enumerate(nodes):
        _node(g, vals, n, k, depth, budget)
    g.outputs = [_use(vals, i, "graph outputs") for i in _list(data["outputs"], "graph outputs")]
    return g


def _node(g, vals, n, k, depth, budget):
    _keys(n, f"node {k}", {"op", "inputs", "outputs", "attrs"})
    op = n["op"]
    where = f"node {k} ({op!r:.40})" if isinstance(op, str) else f"node {k}"
    if not isinstance(op, str):
        raise DecodeError(f"{where}: op is not a string")
    inputs = [_use(vals, i, where) for i in _list(n["inputs"], f"{where} inputs")]
    outs = _list(n["outputs"], f"{where} outputs")
    budget.charge(limits.VALUE_BYTES * len(outs), f"{where}: {len(outs)} outputs")
    out_avals = [_aval(o, f"{where} output {j}") for j, o in enumerate(outs)]
    attrs_in = n["attrs"]
    if not isinstance(attrs_in, dict):
        raise DecodeError(f"{where}: attrs is not an object")
    opdef = OPS.get(op)
    if opdef is None:
        raise DecodeError(f"{where}: unknown op {op!r:.60} (not in the op registry)")
    if opdef.arity is not None and len(inputs) != opdef.arity:
        raise DecodeError(f"{where}: {len(inputs)} inputs, the op takes {opdef.arity}")
    extra = set(attrs_in) - set(opdef.attrs)
    if extra:
        raise DecodeError(f"{where}: unknown attribute(s) {sorted(extra)!r:.100}; the op takes "
                          f"{list(opdef.attrs)}")
    missing = set(opdef.attrs) - set(attrs_in)
    if missing:  # tapeflow always records every attribute; kernels rely on it
        raise DecodeError(f"{where}: attribute(s) {sorted(missing)} missing")
    attrs = {name: _attr(opdef.attrs[name], v, f"{where} attribute {name!r}", depth, budget)
             for name, v in attrs_in.items()}
    _check_counts(opdef, attrs, len(outs), where)
    inferred = _infer(opdef, inputs, attrs, where)
    if [(tuple(a.shape), a.dtype) for a in inferred] != [(tuple(a.shape), a.dtype) for a in out_avals]:
        raise DecodeError(f"{where}: declared outputs {[_fmt(a) for a in out_avals]} but the op "
                          f"infers {[_fmt(a) for a in inferred]}")
    if op == "CustomGradient":
        _check_custom(inputs, attrs, out_avals, where)
    node = g.add(op, inputs, attrs, out_avals)
    for j, (o, v) in enumerate(zip(outs, node.outputs)):
        _define(vals, o, v, f"{where} output {j}")


# Attributes whose integer value is the number of outputs the op's inference builds (Unpack's
# ``num``, Split's count): checked against the declared outputs before inference runs, which
# would otherwise build a tuple that long (2**40) before anything else noticed. While's
# ``n_vars`` is bounded by its operands in its own inference; CustomGradient's counts slice.
_OUTPUT_COUNTS = {"Unpack": "num", "Split": "sizes"}


def _check_counts(opdef, attrs, n_outputs, where):
    name = _OUTPUT_COUNTS.get(opdef.name)
    v = attrs.get(name)
    if type(v) is int and v > n_outputs:
        raise DecodeError(f"{where}: attribute {name!r} is {v}, but the node declares {n_outputs} outputs")


_INFER_ERRORS = (InferError, TypeError, ValueError, IndexError, KeyError, ZeroDivisionError,
                 OverflowError, AttributeError)


def _infer(opdef, inputs, attrs, where):
    try:
        out = opdef.infer([v.aval for v in inputs], **attrs)
    except _INFER_ERRORS as e:
        raise DecodeError(f"{where}: the op rejects its inputs or attributes: {str(e)[:200]}") from None
    out = list(out) if opdef.multi_output else [out]
    for a in out:
        if not isinstance(a, AVal):
            raise DecodeError(f"{where}: inference gave no type")
        _check_size(a.shape, a.dtype, where)
    return out


def _check_custom(inputs, attrs, out_avals, where):
    """The gradient graph of a CustomGradient must take (upstream..., captured...) and fit ``mask``."""
    for name in ("n_in", "n_cap", "mask"):
        if name not in attrs:
            raise DecodeError(f"{where}: attribute {name!r} is missing")
    n_in, n_cap, mask = attrs["n_in"], attrs["n_cap"], attrs["mask"]
    if not (isinstance(n_in, int) and isinstance(n_cap, int) and n_in >= 0 and n_cap >= 0
            and n_in + n_cap < len(inputs)):
        raise DecodeError(f"{where}: n_in={n_in} and n_cap={n_cap} do not fit {len(inputs)} operands")
    if not isinstance(mask, tuple) or len(mask) != n_in or not all(type(m) is bool for m in mask):
        raise DecodeError(f"{where}: mask must be a tuple of {n_in} booleans")
    grad = attrs.get("grad")
    if grad is None:
        return
    if not isinstance(grad, Graph):
        raise DecodeError(f"{where}: grad is not a graph")
    want = out_avals + [v.aval for v in inputs[n_in:n_in + n_cap]]
    got = [v.aval for v in grad.inputs]
    if len(got) != len(want) or any(not _compatible(a, b) for a, b in zip(got, want)):
        raise DecodeError(f"{where}: its gradient graph takes {[_fmt(a) for a in got]}, expected the "
                          f"upstream gradients and captured values {[_fmt(a) for a in want]}")
    targets = [v.aval for v, has in zip(inputs[:n_in], mask) if has]
    results = [v.aval for v in grad.outputs]
    if len(results) != len(targets):
        raise DecodeError(f"{where}: its gradient graph returns {len(results)} gradients, mask says "
                          f"{len(targets)}")
    for r, t in zip(results, targets):
        if r.dtype != t.dtype or not _broadcasts_to(r.shape, t.shape):
            raise DecodeError(f"{where}: a gradient of type {_fmt(r)} cannot be the gradient of an "
                              f"input of type {_fmt(t)}")


def _compatible(a, b):
    return a.dtype == b.dtype and len(a.shape) == len(b.shape) and all(
        x is None or y is None or x == y for x, y in zip(a.shape, b.shape))


def _broadcasts_to(shape, target):
    try:
        out = broadcast_shapes(tuple(shape), tuple(target))
    except (InferError, ValueError):
        return False
    return len(out) == len(target) and all(
        o is None or t is None or o == t for o, t in zip(out, target))


def _fmt(a):
    return f"{a.dtype.name}{list(a.shape)}"


# -- fields ----------------------------------------------------------------------------------

def _keys(obj, what, keys):
    if not isinstance(obj, dict):
        raise DecodeError(f"{what} is not an object")
    if set(obj) != keys:
        missing, extra = keys - set(obj), set(obj) - keys
        raise DecodeError(f"{what}: " + "; ".join(
            ([f"missing {sorted(missing)}"] if missing else []) +
            ([f"unexpected {sorted(extra)!r:.100}"] if extra else [])))


def _list(obj, what):
    if not isinstance(obj, list):
        raise DecodeError(f"{what} is not a list")
    if len(obj) > limits.MAX_NODES:
        raise DecodeError(f"{what}: more than {limits.MAX_NODES} entries")
    return obj


def _int(x, what, lo=0, hi=limits.MAX_DIM):
    if type(x) is not int or not lo <= x <= hi:
        raise DecodeError(f"{what}: {x!r:.40} is not an integer in [{lo}, {hi}]")
    return x


def _define(vals, e, value, what):
    i = _int(e.get("id") if isinstance(e, dict) else None, f"{what} id", 0, 1 << 40)
    if i in vals:
        raise DecodeError(f"{what}: value id {i} is defined twice")
    vals[i] = value


def _use(vals, i, what):
    if type(i) is not int or i not in vals:
        raise DecodeError(f"{what}: value {i!r:.40} is not defined before it is used")
    return vals[i]


def dtype_of(name, what):
    if not isinstance(name, str) or name not in _DTYPES:
        raise DecodeError(f"{what}: unknown dtype {name!r:.40}")
    return _DTYPES[name]


def shape_of(shape, what, allow_none=True):
    if not isinstance(shape, list) or len(shape) > limits.MAX_RANK:
        raise DecodeError(f"{what}: shape {shape!r:.60} is not a list of at most {limits.MAX_RANK} dims")
    dims = []
    for d in shape:
        if d is None and allow_none:
            dims.append(None)
        else:
            dims.append(_int(d, f"{what} dimension"))
    return tuple(dims)


def _check_size(shape, dtype, what):
    n = np.dtype(dtype.np).itemsize
    for d in shape:
        if d is not None:
            if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 0:
                raise DecodeError(f"{what}: dimension {d!r:.40} is not a size")
            n *= d
    if n > limits.MAX_TENSOR_BYTES:
        raise DecodeError(f"{what}: a value of {dtype.name}{list(shape)} would take {n} bytes, more "
                          f"than the {limits.MAX_TENSOR_BYTES} allowed")


def _aval(e, what):
    _keys(e, what, {"shape", "dtype", "id"})
    dtype = dtype_of(e["dtype"], what)
    shape = shape_of(e["shape"], what)
    _check_size(shape, dtype, what)
    return AVal(shape, dtype)


def _array(e, where, budget):
    if not isinstance(e, dict) or set(e) != {"array", "dtype", "shape"}:
        raise DecodeError(f"{where}: an array is {{array, dtype, shape}}")
    dtype = dtype_of(e["dtype"], where)
    shape = shape_of(e["shape"], where, allow_none=False)
    _check_size(shape, dtype, where)
    nbytes = np.dtype(dtype.np).itemsize * math.prod(shape)
    budget.charge(2 * nbytes, f"{where}: a constant of {dtype.name}{list(shape)}")
    text = e["array"]
    if not isinstance(text, str) or len(text) != 4 * ((nbytes + 2) // 3):
        raise DecodeError(f"{where}: array data is not the base64 of {nbytes} bytes")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise DecodeError(f"{where}: array data is not valid base64") from None
    if len(raw) != nbytes:
        raise DecodeError(f"{where}: array data is {len(raw)} bytes, expected {nbytes}")
    return np.frombuffer(raw, dtype=dtype.np).reshape(shape).copy()


# -- attributes: each value checked against the kind its OpDef gives it ---------------------

def _dec_plain(v, what, depth, budget):
    """Any attribute encoding: scalars, tuples, lists, dtypes, Ellipsis (kinds checked after)."""
    if isinstance(v, dict):
        if set(v) == {"tuple"} and isinstance(v["tuple"], list):
            return tuple(_dec_plain(x, what, depth, budget) for x in v["tuple"])
        if set(v) == {"list"} and isinstance(v["list"], list):
            return [_dec_plain(x, what, depth, budget) for x in v["list"]]
        if set(v) == {"dtype"}:
            return dtype_of(v["dtype"], what)
        if v == {"ellipsis": True}:
            return Ellipsis
        raise DecodeError(f"{what}: unknown attribute encoding {sorted(v)!r:.100}")
    if v is None or type(v) in (bool, int, float, str):
        if type(v) is str and len(v) > limits.MAX_NAME:
            raise DecodeError(f"{what}: string too long")
        if type(v) is int and abs(v) > limits.MAX_DIM:
            raise DecodeError(f"{what}: integer {v} out of range")
        return v
    raise DecodeError(f"{what}: {type(v).__name__} is not an attribute value")


def _attr(kind, v, what, depth, budget):
    if kind == "array":         # a Const's value
        return _array(v, what, budget)
    if kind == "gradient":
        if isinstance(v, dict) and set(v) == {"graph"}:
            try:
                return _graph(v["graph"], depth + 1, budget)
            except DecodeError as e:
                raise DecodeError(f"{what} (its gradient graph): {e}") from None
        if isinstance(v, dict) and set(v) == {"registered_gradient"} and isinstance(
                v["registered_gradient"], str):
            return _PROCESS_GRADIENTS.get(v["registered_gradient"])  # None in another process
        raise DecodeError(f"{what}: expected a graph or a registered gradient")
    if kind == "graph":
        if isinstance(v, dict) and set(v) == {"graph"}:
            try:
                return _graph(v["graph"], depth + 1, budget)
            except DecodeError as e:
                raise DecodeError(f"{what}: {e}") from None
        raise DecodeError(f"{what}: expected a graph")
    value = _dec_plain(v, what, depth, budget)
    if not ATTR_KINDS[kind](value):
        raise DecodeError(f"{what}: {value!r:.80} is not a valid {kind} attribute")
    return value


__all__ = ["encode", "decode", "Budget", "DecodeError", "FORMAT_VERSION", "dtype_of", "shape_of"]
