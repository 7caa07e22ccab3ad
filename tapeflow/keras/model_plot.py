"""``keras.utils.model_to_dot`` and ``plot_model``: a model's layers as a Graphviz graph.

Keras 3 builds a ``pydot.Dot``; tapeflow writes the same graph itself (``DotGraph``, with the
part of pydot's interface users call: ``to_string``, ``create``, ``write``, ``get_nodes``,
``get_edges``, ``get_subgraphs``, ``get``) and ``plot_model`` runs Graphviz's ``dot``
program on it. Node labels are Keras 3.15's HTML tables (``keras/src/utils/
model_visualization.py``): ``<b>name</b> (Class)``, then optional rows for the activation,
the input and output shapes of its first call (``(None, 784)``; ``?`` if unknown), the
output dtype and trainability. Node names are ``str(id(layer))`` as in Keras.
"""
import os
import re
import shutil
import subprocess

from .models import Functional, Sequential

_ID = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*|-?(\.[0-9]+|[0-9]+(\.[0-9]*)?))$")


def _quote(value):
    text = str(value)
    if text.startswith("<") and text.endswith(">"):
        return text                                   # an HTML label
    if _ID.match(text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _attrs(attrs):
    return ", ".join(f"{k}={_quote(v)}" for k, v in attrs.items())


class DotGraph:
    """A Graphviz digraph (or a ``cluster`` subgraph of one): attributes, nodes and edges."""

    def __init__(self, graph_name="G", cluster=False, **attrs):
        self.graph_name, self.cluster = graph_name, cluster
        self.attrs, self.node_defaults = dict(attrs), {}
        self.nodes, self.edges, self.subgraphs = {}, {}, []

    def set(self, name, value):
        self.attrs[name] = value

    def get(self, name):
        return self.attrs.get(name)

    def set_node_defaults(self, **attrs):
        self.node_defaults.update(attrs)

    def add_node(self, name, **attrs):
        self.nodes[str(name)] = attrs

    def add_edge(self, src, dst, **attrs):
        self.edges.setdefault((str(src), str(dst)), attrs)

    def add_subgraph(self, graph):
        self.subgraphs.append(graph)

    def get_nodes(self):
        """[(name, attributes)] of this graph's own nodes."""
        return list(self.nodes.items())

    def get_node(self, name):
        return self.nodes.get(str(name))

    def get_edges(self):
        """[(source name, destination name)], in the order they were added."""
        return list(self.edges)

    def get_edge(self, src, dst):
        return self.edges.get((str(src), str(dst)))

    def get_subgraphs(self):
        return list(self.subgraphs)

    def to_string(self):
        """The graph in the DOT language."""
        head = f"subgraph {_quote('cluster_' + self.graph_name)}" if self.cluster else f"digraph {self.graph_name}"
        lines = [head + " {"]
        lines += [f"{k}={_quote(v)};" for k, v in self.attrs.items()]
        if self.node_defaults:
            lines.append(f"node [{_attrs(self.node_defaults)}];")
        lines += [f"{_quote(n)} [{_attrs(a)}];" if a else f"{_quote(n)};" for n, a in self.nodes.items()]
        lines += [sub.to_string() for sub in self.subgraphs]
        lines += [f"{_quote(s)} -> {_quote(d)}" + (f"  [{_attrs(a)}];" if a else ";")
                  for (s, d), a in self.edges.items()]
        lines.append("}")
        return "\n".join(lines) + "\n"

    def create(self, prog="dot", format="png"):
        """The bytes Graphviz's ``prog`` renders the graph to in ``format``."""
        exe = shutil.which(prog)
        if exe is None:
            raise ImportError("You must install graphviz (see instructions at "
                              "https://graphviz.gitlab.io/download/) for `plot_model` to work.")
        done = subprocess.run([exe, f"-T{format}"], input=self.to_string().encode(), capture_output=True,
                              check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{prog} failed (exit {done.returncode}): {done.stderr.decode()[:500]}")
        return done.stdout

    def write(self, path, prog="dot", format="raw"):
        """Write the DOT text (``format="raw"``) or Graphviz's rendering in ``format`` to ``path``."""
        data = self.to_string().encode() if format == "raw" else self.create(prog, format)
        with open(path, "wb") as f:
            f.write(data)
        return True


# -- labels ---------------------------------------------------------------------------------

def _activation_name(layer):
    activation = layer.activation
    return getattr(activation, "name", None) or getattr(activation, "__name__", None) or str(activation)


def _format_shape(shape):
    if shape is None:
        return "?"
    return str(shape).replace("}", "").replace("{", "")


def _one_or_list(values):
    return values[0] if len(values) == 1 else values


def _shape(t):
    return tuple(t.shape)


def _io_of(model):
    """{id(layer): (input tensors' shapes, output shapes, output dtypes)} as Keras' ``layer.input``
    and ``layer.output`` give them (of the layer's first call)."""
    info = {}
    if isinstance(model, Sequential):
        shape = getattr(model, "_sequential_build_shape", None)
        for layer in model.layers:
            out = getattr(layer, "_keras_output_shape", None)
            dtype = getattr(getattr(layer, "_dtype", None), "name", None)   # its compute dtype
            info[id(layer)] = (shape, None if out is None else tuple(out), dtype)
            shape = None if out is None else tuple(out)
    elif isinstance(model, Functional):
        for t in model.inputs:
            info[id(t.node.layer)] = (None, _shape(t), t.dtype.name)
        for node in model._nodes:
            outs = node.output_tensors
            info.setdefault(id(node.layer), (_one_or_list([_shape(t) for t in node.input_tensors]),
                                             _one_or_list([_shape(t) for t in outs]),
                                             _one_or_list([t.dtype.name for t in outs])))
    return info


def make_layer_label(layer, io, show_layer_names, show_layer_activations, show_dtype, show_shapes,
                     show_trainable):
    """Keras 3's HTML-table label of ``layer``'s node."""
    class_name = type(layer).__name__
    table = '<<table border="0" cellborder="1" bgcolor="black" cellpadding="10">'
    colspan = max(1, sum(int(x) for x in (show_dtype, show_trainable)) + (2 if show_shapes else 0))
    title = f"<b>{layer.name}</b> ({class_name})" if show_layer_names else f"<b>{class_name}</b>"
    table += (f'<tr><td colspan="{colspan}" bgcolor="black"><font point-size="16" color="white">'
              f"{title}</font></td></tr>")
    if show_layer_activations and getattr(layer, "activation", None) is not None:
        table += (f'<tr><td bgcolor="white" colspan="{colspan}"><font point-size="14">'
                  f"Activation: <b>{_activation_name(layer)}</b></font></td></tr>")
    input_shape, output_shape, dtype = (None, None, None) if io is None else io
    cols = []
    if show_shapes:
        if class_name != "InputLayer":
            cols.append(f'<td bgcolor="white"><font point-size="14">Input shape: '
                        f"<b>{_format_shape(input_shape)}</b></font></td>")
        cols.append(f'<td bgcolor="white"><font point-size="14">Output shape: '
                    f"<b>{_format_shape(output_shape)}</b></font></td>")
    if show_dtype:
        cols.append(f'<td bgcolor="white"><font point-size="14">Output dtype: <b>{dtype or "?"}</b></font></td>')
    if show_trainable and hasattr(layer, "trainable") and layer.weights:
        if layer.trainable:
            cols.append('<td bgcolor="forestgreen"><font point-size="14" color="white"><b>Trainable</b></font></td>')
        else:
            cols.append('<td bgcolor="firebrick"><font point-size="14" color="white"><b>Non-trainable</b></font></td>')
    if cols:
        table += f"<tr>{''.join(cols)}</tr>"
    return table + "</table>>"


def _add_layer(dot, layer, io, options):
    dot.add_node(str(id(layer)), label=make_layer_label(layer, io, **options), fontname="Helvetica",
                 border="0", margin="0")


def _add_edge(dot, src, dst):
    dot.add_edge(str(id(src)), str(id(dst)), penwidth="2")


def _first_layer(model):
    """The node an edge into a nested model points at (Keras: its input layer, or first layer)."""
    while isinstance(model, (Functional, Sequential)):
        model = model.inputs[0].node.layer if isinstance(model, Functional) else model.layers[0]
    return model


def _last_layer(model):
    while isinstance(model, (Functional, Sequential)):
        model = model.outputs[0].node.layer if isinstance(model, Functional) else model.layers[-1]
    return model


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True, rankdir="TB",
                 expand_nested=False, dpi=200, subgraph=False, show_layer_activations=False,
                 show_trainable=False, splines="ortho", **kwargs):
    """The model's layers and connections as a ``DotGraph`` (Keras 3 returns a ``pydot.Dot``).

    >>> model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2, name="d")])
    >>> dot = tf.keras.utils.model_to_dot(model, show_shapes=True)
    >>> "Input shape: <b>(None, 4)</b>" in dot.get_nodes()[0][1]["label"], dot.get("rankdir")
    (True, 'TB')
    """
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by calling `build()` "
                         "or by calling the model on a batch of data.")
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError("Argument `layer_range` is no longer supported.")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
    if subgraph:
        dot = DotGraph(model.name, cluster=True, style="dashed", label=model.name, labeljust="l")
    else:
        dot = DotGraph(rankdir=rankdir, concentrate=True, dpi=dpi, splines=splines)
        dot.set_node_defaults(shape="record")
    options = {"show_layer_names": show_layer_names, "show_layer_activations": show_layer_activations,
               "show_dtype": show_dtype, "show_shapes": show_shapes, "show_trainable": show_trainable}
    if not isinstance(model, (Sequential, Functional)):
        _add_layer(dot, model, None, options)         # a subclassed model: one node
        return dot
    io = _io_of(model)
    layers = model.layers
    for layer in layers:
        if expand_nested and isinstance(layer, (Functional, Sequential)):
            dot.add_subgraph(model_to_dot(layer, show_shapes, show_dtype, show_layer_names, rankdir,
                                          expand_nested, subgraph=True,
                                          show_layer_activations=show_layer_activations,
                                          show_trainable=show_trainable))
        else:
            _add_layer(dot, layer, io.get(id(layer)), options)
    if isinstance(model, Sequential):
        for a, b in zip(layers, layers[1:]):
            _add_edge(dot, _last_layer(a) if expand_nested else a, _first_layer(b) if expand_nested else b)
        return dot
    for node in model._nodes:
        for t in node.input_tensors:
            source, destination = t.node.layer, node.layer
            if expand_nested:
                source, destination = _last_layer(source), _first_layer(destination)
            _add_edge(dot, source, destination)
    return dot


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False, show_layer_names=False,
               rankdir="TB", expand_nested=False, dpi=200, show_layer_activations=False,
               show_trainable=False, splines="ortho", **kwargs):
    """Draw ``model_to_dot(model, ...)`` into ``to_file`` with Graphviz's ``dot`` (the format is
    the file's extension, ``png`` without one, as in Keras).

    >>> model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "model.dot")
    >>> tf.keras.utils.plot_model(model, to_file=path)
    >>> open(path).read().startswith("digraph G {")
    True
    """
    if shutil.which("dot") is None:
        raise ImportError("You must install graphviz (see instructions at "
                          "https://graphviz.gitlab.io/download/) for `plot_model` to work.")
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError("Argument `layer_range` is no longer supported.")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
    dot = model_to_dot(model, show_shapes=show_shapes, show_dtype=show_dtype,
                       show_layer_names=show_layer_names, rankdir=rankdir, expand_nested=expand_nested,
                       dpi=dpi, show_layer_activations=show_layer_activations,
                       show_trainable=show_trainable, splines=splines)
    to_file = str(to_file)
    extension = os.path.splitext(to_file)[1][1:] or "png"
    dot.write(to_file, format=extension)


__all__ = ["model_to_dot", "plot_model", "DotGraph", "make_layer_label"]
