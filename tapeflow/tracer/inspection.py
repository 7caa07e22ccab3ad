"""What TensorFlow shows of a traced function: ``ConcreteFunction.graph`` (its operations and
tensors by TensorFlow's names) and the pretty-printed signatures.

Views over the IR graph; nothing here changes what passes or codegen read. The graph stays
our IR ``Graph`` (``inputs``/``outputs`` are its Values, with ``shape`` and ``dtype``);
``get_operations()`` adds TensorFlow's picture: a ``Placeholder`` per input, the nodes in
order, names made unique per op type as TensorFlow does (``Mul``, ``Mul_1``).
"""
from .. import _nest
from ..ir.graph import Graph
from ..runtime.tensor import TensorShape
from .outputs import ConstLeaf, OutRef


class GraphTensor:
    """A graph value as TensorFlow's graph tensors show it: ``<tf.Tensor 'Mul:0' shape=(2,) ...>``."""

    __slots__ = ("value", "name", "op")

    def __init__(self, value, name, op):
        self.value, self.name, self.op = value, name, op

    @property
    def shape(self):
        return TensorShape(self.value.aval.shape)

    @property
    def dtype(self):
        return self.value.aval.dtype

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    def __str__(self):
        return f'Tensor("{self.name}", shape={self.shape}, dtype={self.dtype.name})'


class Operation:
    """One node (or input placeholder) as TensorFlow's ``tf.Operation``: name, type, tensors."""

    __slots__ = ("name", "type", "inputs", "outputs", "node")

    def __init__(self, name, type_, node):
        self.name, self.type, self.node = name, type_, node
        self.inputs, self.outputs = [], []

    def __repr__(self):
        return f"<tf.Operation '{self.name}' type={self.type}>"


class FuncGraph(Graph):
    """``ConcreteFunction.graph``: the IR graph itself plus TensorFlow's inspection methods."""

    name = "function"
    input_names = ()

    @classmethod
    def adopt(cls, graph, name):
        """``graph`` itself, made a FuncGraph in place: it stays the same object, since tables
        are keyed by graph identity (the jacobian reports of a trace, ``jacobian.REPORTS``).
        A FuncGraph adds no state a pass or codegen reads. Other Graph subclasses stay as
        they are."""
        if type(graph) is Graph:
            graph.__class__ = cls
            graph.name = name
        return graph

    def get_operations(self):
        """Placeholders for the inputs, then every node, as TensorFlow's ``Graph.get_operations``."""
        counts, tensors, ops = {}, {}, []

        def unique(base):
            k = counts.get(base, 0)
            counts[base] = k + 1
            return base if k == 0 else f"{base}_{k}"

        for i, v in enumerate(self.inputs):
            base = self.input_names[i] if i < len(self.input_names) and self.input_names[i] else "input"
            op = Operation(unique(base), "Placeholder", None)
            op.outputs.append(GraphTensor(v, f"{op.name}:0", op))
            tensors[v.id] = op.outputs[0]
            ops.append(op)
        for node in self.nodes:
            op = Operation(unique(node.op), node.op, node)
            op.inputs = [tensors[v.id] for v in node.inputs]
            op.outputs = [GraphTensor(v, f"{op.name}:{k}", op) for k, v in enumerate(node.outputs)]
            tensors.update((v.id, t) for v, t in zip(node.outputs, op.outputs, strict=True))
            ops.append(op)
        return ops

    def get_operation_by_name(self, name):
        for op in self.get_operations():
            if op.name == name:
                return op
        raise KeyError(f"The name {name!r} refers to an Operation not in the graph.")

    def get_tensor_by_name(self, name):
        for op in self.get_operations():
            for t in op.outputs:
                if t.name == name:
                    return t
        raise KeyError(f"The name {name!r} refers to a Tensor which does not exist.")


# -- signatures -----------------------------------------------------------------------------
def _spec_text(shape, dtype, name=None):
    shape = "<unknown>" if shape is None else str(tuple(shape))
    return f"TensorSpec(shape={shape}, dtype=tf.{dtype.name}, name={name!r})"


class Spec:
    """A tensor leaf of a printed signature."""
    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype, name=None):
        self.shape, self.dtype, self.name = shape, dtype, name


class Unknown:
    """An output type known only per call (a function traced per rank)."""


def _type_text(x):
    """An argument or output as TensorFlow's ``FunctionType`` prints it."""
    if isinstance(x, Unknown):
        return "Unknown (traced for each rank it is called with)"
    if isinstance(x, Spec):
        return _spec_text(x.shape, x.dtype, x.name)
    if isinstance(x, tuple):
        return "Tuple[" + ", ".join(_type_text(v) for v in x) + "]"
    if isinstance(x, list):
        return "List[" + ", ".join(_type_text(v) for v in x) + "]"
    if isinstance(x, dict):
        return "Dict[" + ", ".join(f"[{k!r}, {_type_text(v)}]" for k, v in x.items()) + "]"
    if x is None:
        return "None"
    if isinstance(x, (bool, int, float, str)):
        return f"Literal[{x!r}]"
    return type(x).__name__


def spec_leaf(leaf, aval):
    """What an argument leaf is in a signature: its traced spec, or the Python value."""
    return Spec(aval.shape, aval.dtype, getattr(leaf, "name", None)) if aval is not None else leaf


def signature_text(params, outputs, captures):
    """TensorFlow's ``pretty_printed_signature``: ``params`` are (name, kind name, structure
    with ``spec_leaf`` leaves), ``outputs`` the output structure (same leaves), ``captures``
    (id, aval) per captured tensor or variable."""
    lines = ["Input Parameters:"]
    lines += [f"  {name} ({kind}): {_type_text(value)}" for name, kind, value in params]
    lines += ["Output Type:", f"  {_type_text(outputs)}", "Captures:"]
    if captures:
        lines += [f"  {cid}: {_spec_text(aval.shape, aval.dtype)}" for cid, aval in captures]
    else:
        lines.append("  None")
    return "\n".join(lines)


def output_structure(template, graph):
    """A ConcreteFunction's output template with spec leaves (``OutRef`` -> the output's aval)."""
    def leaf(x):
        if isinstance(x, OutRef):
            a = graph.outputs[x.index].aval
            return Spec(a.shape, a.dtype)
        return x.value if isinstance(x, ConstLeaf) else x
    return _nest.map_structure(leaf, template)


__all__ = ["FuncGraph", "GraphTensor", "Operation", "Spec", "Unknown", "signature_text", "output_structure",
           "spec_leaf"]
