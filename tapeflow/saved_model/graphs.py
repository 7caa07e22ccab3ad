"""IR graphs as JSON for saved programs: the IR's own layout, decoded with every field checked.

The layout is ``ir.graph.to_json``'s (``{"version", "inputs", "nodes", "outputs"}``),
so ``ir.graph.from_json`` reads these graphs too. Decoding here trusts nothing:
ops must be registered, arity and attribute names must match the OpDef,
attribute values must have the kind the attribute takes, every shape is bounded,
each node's declared outputs must equal what the op's own inference gives, and
``CustomGradient`` gradient graphs must fit the node they belong to.

A custom gradient saved without its graph (``experimental_custom_gradients=False``)
is ``{"registered_gradient": key}``: the key finds the graph only in the process
that saved it, as TensorFlow's gradient registry does.
"""
import base64
import binascii
import math
import uuid

import numpy as np

from ..errors import InferError
from ..ir import dtypes as D
from ..ir.graph import FORMAT_VERSION, Graph, Value
from ..ir.opdef import OPS, AVal
from ..ir.shapes import broadcast_shapes
from . import limits
from .files import DTYPES

# Gradient graphs of custom gradients saved without them: findable in this process only.
_PROCESS_GRADIENTS: dict[str, Graph] = {}


class GraphError(Exception):
    """Raised while decoding; the loader adds the file name (it becomes a SavedModelError)."""


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
    raise TypeError(f"attribute value {v!r:.80} of type {type(v).__name__} cannot be saved")


# -- decoding --------------------------------------------------------------------------------

class _Budget:
    """Counts nodes over all graphs of one file (nested ones too)."""

    def __init__(self):
        self.nodes = 0


def decode(data, depth=0, budget=None):
    """A Graph from ``encode``'s JSON, every field checked; GraphError says what is wrong."""
    budget = budget or _Budget()
    if depth > limits.MAX_GRAPH_NESTING:
        raise GraphError(f"graphs nest deeper than {limits.MAX_GRAPH_NESTING} levels")
    _keys(data, "graph", {"version", "inputs", "nodes", "outputs"})
    if data["version"] != FORMAT_VERSION:
        raise GraphError(f"graph format version {data['version']!r:.40} is not {FORMAT_VERSION}")
    vals = {}
    g = Graph()
    for k, e in enumerate(_list(data["inputs"], "graph inputs")):
        v = Value(_aval(e, f"input {k}"))
        _define(vals, e, v, f"input {k}")
        g.inputs.append(v)
    nodes = _list(data["nodes"], "graph nodes")
    budget.nodes += len(nodes)
    if budget.nodes > limits.MAX_NODES:
        raise GraphError(f"more than {limits.MAX_NODES} nodes")
    for k, n in enumerate(nodes):
        _node(g, vals, n, k, depth, budget)
    g.outputs = [_use(vals, i, "graph outputs") for i in _list(data["outputs"], "graph outputs")]
    return g


def _node(g, vals, n, k, depth, budget):
    _keys(n, f"node {k}", {"op", "inputs", "outputs", "attrs"})
    op = n["op"]
    where = f"node {k} ({op!r:.40})" if isinstance(op, str) else f"node {k}"
    if not isinstance(op, str):
        raise GraphError(f"{where}: op is not a string")
    inputs = [_use(vals, i, where) for i in _list(n["inputs"], f"{where} inputs")]
    outs = _list(n["outputs"], f"{where} outputs")
    out_avals = [_aval(o, f"{where} output {j}") for j, o in enumerate(outs)]
    attrs_in = n["attrs"]
    if not isinstance(attrs_in, dict):
        raise GraphError(f"{where}: attrs is not an object")
    if op == "Const":
        if set(attrs_in) != {"value"} or inputs or len(out_avals) != 1:
            raise GraphError(f"{where}: a Const has no inputs, one output and one attribute 'value'")
        value = _array(attrs_in["value"], where)
        if (tuple(value.shape), D.as_dtype(value.dtype)) != tuple(out_avals[0]):
            raise GraphError(f"{where}: Const value does not match its declared type")
        attrs = {"value": value}
    else:
        opdef = OPS.get(op)
        if opdef is None:
            raise GraphError(f"{where}: unknown op {op!r:.60} (not in the op registry)")
        if opdef.arity is not None and len(inputs) != opdef.arity:
            raise GraphError(f"{where}: {len(inputs)} inputs, the op takes {opdef.arity}")
        extra = set(attrs_in) - set(opdef.attrs)
        if extra:
            raise GraphError(f"{where}: unknown attribute(s) {sorted(extra)!r:.100}; the op takes "
                             f"{list(opdef.attrs)}")
        missing = set(opdef.attrs) - set(attrs_in)
        if missing:  # tapeflow always records every attribute; kernels rely on it
            raise GraphError(f"{where}: attribute(s) {sorted(missing)} missing")
        attrs = {name: _attr(name, v, f"{where} attribute {name!r}", depth, budget)
                 for name, v in attrs_in.items()}
        inferred = _infer(opdef, inputs, attrs, where)
        if [(tuple(a.shape), a.dtype) for a in inferred] != [(tuple(a.shape), a.dtype) for a in out_avals]:
            raise GraphError(f"{where}: declared outputs {[_fmt(a) for a in out_avals]} but the op "
                             f"infers {[_fmt(a) for a in inferred]}")
        if op == "CustomGradient":
            _check_custom(inputs, attrs, out_avals, where)
    node = g.add(op, inputs, attrs, out_avals)
    for j, (o, v) in enumerate(zip(outs, node.outputs)):
        _define(vals, o, v, f"{where} output {j}")


_INFER_ERRORS = (InferError, TypeError, ValueError, IndexError, KeyError, ZeroDivisionError,
                 OverflowError, AttributeError)


def _infer(opdef, inputs, attrs, where):
    try:
        out = opdef.infer([v.aval for v in inputs], **attrs)
    except _INFER_ERRORS as e:
        raise GraphError(f"{where}: the op rejects its inputs or attributes: {str(e)[:200]}") from None
    out = list(out) if opdef.multi_output else [out]
    for a in out:
        if not isinstance(a, AVal):
            raise GraphError(f"{where}: inference gave no type")
        _check_size(a.shape, a.dtype, where)
    return out


def _check_custom(inputs, attrs, out_avals, where):
    """The gradient graph of a CustomGradient must take (upstream..., captured...) and fit ``mask``."""
    for name in ("n_in", "n_cap", "mask"):
        if name not in attrs:
            raise GraphError(f"{where}: attribute {name!r} is missing")
    n_in, n_cap, mask = attrs["n_in"], attrs["n_cap"], attrs["mask"]
    if not (isinstance(n_in, int) and isinstance(n_cap, int) and n_in >= 0 and n_cap >= 0
            and n_in + n_cap < len(inputs)):
        raise GraphError(f"{where}: n_in={n_in} and n_cap={n_cap} do not fit {len(inputs)} operands")
    if not isinstance(mask, tuple) or len(mask) != n_in or not all(type(m) is bool for m in mask):
        raise GraphError(f"{where}: mask must be a tuple of {n_in} booleans")
    grad = attrs.get("grad")
    if grad is None:
        return
    if not isinstance(grad, Graph):
        raise GraphError(f"{where}: grad is not a graph")
    want = out_avals + [v.aval for v in inputs[n_in:n_in + n_cap]]
    got = [v.aval for v in grad.inputs]
    if len(got) != len(want) or any(not _compatible(a, b) for a, b in zip(got, want)):
        raise GraphError(f"{where}: its gradient graph takes {[_fmt(a) for a in got]}, expected the "
                         f"upstream gradients and captured values {[_fmt(a) for a in want]}")
    targets = [v.aval for v, has in zip(inputs[:n_in], mask) if has]
    results = [v.aval for v in grad.outputs]
    if len(results) != len(targets):
        raise GraphError(f"{where}: its gradient graph returns {len(results)} gradients, mask says "
                         f"{len(targets)}")
    for r, t in zip(results, targets):
        if r.dtype != t.dtype or not _broadcasts_to(r.shape, t.shape):
            raise GraphError(f"{where}: a gradient of type {_fmt(r)} cannot be the gradient of an "
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
        raise GraphError(f"{what} is not an object")
    if set(obj) != keys:
        missing, extra = keys - set(obj), set(obj) - keys
        raise GraphError(f"{what}: " + "; ".join(
            ([f"missing {sorted(missing)}"] if missing else []) +
            ([f"unexpected {sorted(extra)!r:.100}"] if extra else [])))


def _list(obj, what):
    if not isinstance(obj, list):
        raise GraphError(f"{what} is not a list")
    if len(obj) > limits.MAX_NODES:
        raise GraphError(f"{what}: more than {limits.MAX_NODES} entries")
    return obj


def _int(x, what, lo=0, hi=limits.MAX_DIM):
    if type(x) is not int or not lo <= x <= hi:
        raise GraphError(f"{what}: {x!r:.40} is not an integer in [{lo}, {hi}]")
    return x


def _define(vals, e, value, what):
    i = _int(e.get("id") if isinstance(e, dict) else None, f"{what} id", 0, 1 << 40)
    if i in vals:
        raise GraphError(f"{what}: value id {i} is defined twice")
    vals[i] = value


def _use(vals, i, what):
    if type(i) is not int or i not in vals:
        raise GraphError(f"{what}: value {i!r:.40} is not defined before it is used")
    return vals[i]


def dtype_of(name, what):
    if not isinstance(name, str) or name not in DTYPES:
        raise GraphError(f"{what}: unknown dtype {name!r:.40}")
    return DTYPES[name]


def shape_of(shape, what, allow_none=True):
    if not isinstance(shape, list) or len(shape) > limits.MAX_RANK:
        raise GraphError(f"{what}: shape {shape!r:.60} is not a list of at most {limits.MAX_RANK} dims")
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
                raise GraphError(f"{what}: dimension {d!r:.40} is not a size")
            n *= d
    if n > limits.MAX_TENSOR_BYTES:
        raise GraphError(f"{what}: a value of {dtype.name}{list(shape)} would take {n} bytes, more "
                         f"than the {limits.MAX_TENSOR_BYTES} allowed")


def _aval(e, what):
    _keys(e, what, {"shape", "dtype", "id"})
    dtype = dtype_of(e["dtype"], what)
    shape = shape_of(e["shape"], what)
    _check_size(shape, dtype, what)
    return AVal(shape, dtype)


def _array(e, where):
    if not isinstance(e, dict) or set(e) != {"array", "dtype", "shape"}:
        raise GraphError(f"{where}: an array is {{array, dtype, shape}}")
    dtype = dtype_of(e["dtype"], where)
    shape = shape_of(e["shape"], where, allow_none=False)
    _check_size(shape, dtype, where)
    nbytes = np.dtype(dtype.np).itemsize * math.prod(shape)
    text = e["array"]
    if not isinstance(text, str) or len(text) != 4 * ((nbytes + 2) // 3):
        raise GraphError(f"{where}: array data is not the base64 of {nbytes} bytes")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise GraphError(f"{where}: array data is not valid base64") from None
    if len(raw) != nbytes:
        raise GraphError(f"{where}: array data is {len(raw)} bytes, expected {nbytes}")
    return np.frombuffer(raw, dtype=dtype.np).reshape(shape).copy()


# -- attributes: what kind each attribute name takes ---------------------------------------

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
        raise GraphError(f"{what}: unknown attribute encoding {sorted(v)!r:.100}")
    if v is None or type(v) in (bool, int, float, str):
        if type(v) is str and len(v) > limits.MAX_NAME:
            raise GraphError(f"{what}: string too long")
        if type(v) is int and abs(v) > limits.MAX_DIM:
            raise GraphError(f"{what}: integer {v} out of range")
        return v
    raise GraphError(f"{what}: {type(v).__name__} is not an attribute value")


def _is_int(x):
    return type(x) is int


def _seq(x):
    return isinstance(x, (tuple, list))


def _ints(x):
    return _seq(x) and all(_is_int(i) for i in x)


def _slice_item(s):
    return (s is None or s is Ellipsis or _is_int(s) or
            (_seq(s) and len(s) == 3 and all(i is None or _is_int(i) for i in s)))


_KINDS = {
    "bool": lambda x: type(x) is bool,
    "number": lambda x: type(x) in (bool, int, float),
    "int": _is_int,
    "int_or_none": lambda x: x is None or _is_int(x),
    "axis": lambda x: x is None or _is_int(x) or _ints(x),
    "dtype": lambda x: isinstance(x, D.DType),
    "str": lambda x: type(x) is str,
    "ints": _ints,
    "shape": lambda x: _seq(x) and all(i is None or _is_int(i) for i in x),
    "pairs": lambda x: _seq(x) and all(_ints(p) and len(p) == 2 for p in x),
    "spec": lambda x: _seq(x) and all(_slice_item(s) for s in x),
    "bools": lambda x: isinstance(x, tuple) and all(type(b) is bool for b in x),
}

ATTR_KINDS = {
    "adjoint": "bool", "transpose_a": "bool", "transpose_b": "bool", "keepdims": "bool",
    "alpha": "number", "on_value": "number", "off_value": "number", "constant_values": "number",
    "batch_dims": "int", "depth": "int", "num": "int_or_none", "num_segments": "int",
    "n_in": "int", "n_cap": "int", "n_vars": "int",
    "axis": "axis", "dtype": "dtype", "out_type": "dtype", "output_type": "dtype",
    "equation": "str", "multiples": "ints", "perm": "ints", "sizes": "ints", "shape": "shape",
    "paddings": "pairs", "spec": "spec", "mask": "bools",
}

# Attributes holding a graph (control flow): decoded as nested graphs, checked like the file's.
GRAPH_ATTRS = {"then_graph", "else_graph", "cond_graph", "body_graph"}


def _attr(name, v, what, depth, budget):
    if name == "grad":
        if isinstance(v, dict) and set(v) == {"graph"}:
            try:
                return decode(v["graph"], depth + 1, budget)
            except GraphError as e:
                raise GraphError(f"{what} (its gradient graph): {e}") from None
        if isinstance(v, dict) and set(v) == {"registered_gradient"} and isinstance(
                v["registered_gradient"], str):
            return _PROCESS_GRADIENTS.get(v["registered_gradient"])  # None in another process
        raise GraphError(f"{what}: expected a graph or a registered gradient")
    if name in GRAPH_ATTRS:
        if isinstance(v, dict) and set(v) == {"graph"}:
            try:
                return decode(v["graph"], depth + 1, budget)
            except GraphError as e:
                raise GraphError(f"{what}: {e}") from None
        raise GraphError(f"{what}: expected a graph")
    kind = ATTR_KINDS.get(name)
    if kind is None:
        raise GraphError(f"{what}: this loader does not know the kind of attribute {name!r}")
    value = _dec_plain(v, what, depth, budget)
    if not _KINDS[kind](value):
        raise GraphError(f"{what}: {value!r:.80} is not a valid {kind} attribute")
    return value


__all__ = ["encode", "decode", "GraphError", "ATTR_KINDS", "dtype_of", "shape_of"]
