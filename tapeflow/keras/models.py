"""Keras 3 models: ``Model`` (subclassed or functional), ``Sequential``, ``Input``.

* Subclassing: layers assigned as attributes are tracked (``Layer.__setattr__``),
  ``call`` does the math, weights come from the sublayers in assignment order.
* Functional: ``Model(inputs, outputs)`` keeps the recorded layer calls (nodes,
  node.py) between its Keras tensors, in the order they were made (which is
  a topological order), and ``call`` replays them on real tensors.
* ``Sequential``: a list of layers called in turn; built on first call, or at
  once when it starts with an ``Input`` or its first layer has ``input_shape``.

Training (compile/fit/evaluate/predict) is the ``Trainer`` mixin (trainer.py).
"""
import numpy as np

from .. import _nest
from ..ir import dtypes as D
from ..runtime.tensor import STATE_paused, TensorShape, convert_to_tensor
from . import serialization
from .auto_config import plain
from .layers import Layer, unique_object_name
from .node import KerasTensor, Node, check_creation
from .summary import summary_lines
from .trainer import Trainer


# -- Input ---------------------------------------------------------------------------------

class InputLayer(Layer):
    """The layer behind ``Input``: its one node has no inputs and outputs the Keras tensor."""

    def __init__(self, shape=None, batch_size=None, dtype=None, batch_shape=None, name=None, **kwargs):
        super().__init__(name=name or unique_object_name("input_layer"), dtype=dtype, **kwargs)
        if shape is not None and batch_shape is not None:
            raise ValueError("You cannot pass both `shape` and `batch_shape` at the same time.")
        if batch_shape is None:
            if shape is None:
                raise ValueError("You must pass a `shape` argument.")
            batch_shape = (batch_size,) + tuple(shape)
        self._batch_shape = tuple(batch_shape)
        self._keras_output_shape = self._batch_shape
        self.built = True
        node = Node(self, (), {}, None)
        node.outputs = KerasTensor(self._batch_shape, self._dtype, name=self.name, node=node)
        self.output = node.outputs

    @property
    def batch_shape(self):
        return self._batch_shape

    def get_config(self):
        return {"batch_shape": list(self._batch_shape), "dtype": self.dtype, "sparse": False,
                "ragged": False, "name": self.name, "optional": False}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for key in ("sparse", "ragged", "optional"):
            if config.pop(key, False):
                raise NotImplementedError(f"tapeflow's InputLayer has no {key} inputs")
        serialization.check_shape(config.get("batch_shape"), "InputLayer batch_shape")
        return cls(**config)


def Input(shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, name=None,
          tensor=None, optional=False):
    """A symbolic input of shape ``(batch_size, *shape)`` for functional models."""
    if sparse or tensor is not None or optional:
        raise NotImplementedError("tapeflow's Input has no sparse, tensor or optional inputs")
    return InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, batch_shape=batch_shape,
                      name=name).output


# saving.py (above this module: it rebuilds models) registers the functions behind
# ``save``/``save_weights``/``load_weights`` here.
SAVING = {}


# -- Model -----------------------------------------------------------------------------------

class Model(Trainer, Layer):
    """A layer that trains. ``Model(inputs, outputs)`` makes a functional model."""

    def __new__(cls, *args, **kwargs):
        if cls is Model and (len(args) >= 2 or "inputs" in kwargs or "outputs" in kwargs):
            cls = Functional
        obj = object.__new__(cls)
        obj._record_init_args(args, kwargs)
        return obj

    def __init__(self, *args, **kwargs):
        if type(self) is not Functional and (len(args) >= 2 or "outputs" in kwargs):
            # A subclass called as Model(inputs, outputs) (one that customizes train_step, say)
            # is a functional model too: Keras 3 puts Functional under it, so does this.
            self.__class__ = _with_functional(type(self))
            Functional.__init__(self, *args, **kwargs)
            return
        super().__init__(*args, **kwargs)

    @property
    def layers(self):
        return self._child_layers()

    def get_layer(self, name=None, index=None):
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: {[l.name for l in self.layers]}.")

    def count_params(self):
        return sum(int(np.prod(w.shape)) for w in self.weights)

    def build_from_config(self, config):
        """A subclassed model is built by one call on zeros of the saved input shape."""
        shape = config["input_shape"]
        if shape is None or self.built and self.weights:
            return
        shape = tuple(1 if d is None else d for d in shape)
        check_creation(shape, self._dtype, f"input of model {self.name}")
        with STATE_paused():
            self(convert_to_tensor(np.zeros(shape, self._dtype.np)))

    @classmethod
    def from_config(cls, config):
        """A functional config (with ``layers`` and ``input_layers``) makes a functional model."""
        if isinstance(config, dict) and "layers" in config and "input_layers" in config:
            return functional_from_config(cls, config)
        return super().from_config(config)

    def save(self, filepath, overwrite=True, zipped=None, include_optimizer=True, **kwargs):
        """The model as one ``.keras`` file: config, metadata and weights (saving.py)."""
        SAVING["save_model"](self, filepath, overwrite=overwrite, include_optimizer=include_optimizer)

    def save_weights(self, filepath, overwrite=True):
        SAVING["save_weights"](self, filepath, overwrite=overwrite)

    def load_weights(self, filepath, skip_mismatch=False):
        SAVING["load_weights"](self, filepath, skip_mismatch=skip_mismatch)

    def summary(self, print_fn=None, **kwargs):
        text = "\n".join(summary_lines(self))
        if print_fn is None:
            print(text)
        else:  # Keras hands print_fn rich's captured text, which ends with a newline
            print_fn(text + "\n")


class Functional(Model):
    """``Model(inputs, outputs)``: the layer calls between Keras tensors, replayed on data."""

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        self._inputs_struct, self._outputs_struct = inputs, outputs
        self.inputs = _nest.flatten(inputs)
        self.outputs = _nest.flatten(outputs)
        for t in self.inputs + self.outputs:
            if not isinstance(t, KerasTensor):
                raise ValueError(f"All `inputs` and `outputs` values must be KerasTensors. Received: {t!r}")
        self._nodes = self._nodes_between(self.inputs, self.outputs)
        self._functional_layers, self._node_depths = _keras_order(self.inputs, self.outputs)
        self.built = True

    @staticmethod
    def _nodes_between(inputs, outputs):
        wanted = {id(t) for t in inputs}
        nodes, seen, stack = [], set(), list(outputs)
        while stack:
            t = stack.pop()
            if id(t) in wanted:
                continue
            if isinstance(t.node.layer, InputLayer):
                raise ValueError(f"Graph disconnected: cannot find parent for KerasTensor {t!r}: the "
                                 f"model's `inputs` do not reach it.")
            if t.node.id not in seen:
                seen.add(t.node.id)
                nodes.append(t.node)
                stack.extend(t.node.input_tensors)
        return sorted(nodes, key=lambda n: n.id)

    @property
    def layers(self):
        return list(self._functional_layers)

    @property
    def input_shape(self):
        return tuple(self.inputs[0].shape)

    @property
    def output_shape(self):
        return tuple(self.outputs[0].shape)

    def call(self, inputs, training=None):
        values = {}
        flat = _nest.flatten(inputs)
        if len(flat) != len(self.inputs):
            raise ValueError(f"Model {self.name} expects {len(self.inputs)} input(s), but it received "
                             f"{len(flat)} input tensors.")
        for t, value in zip(self.inputs, flat, strict=True):
            values[id(t)] = value
        for node in self._nodes:
            args, kwargs = _nest.map_structure(
                lambda t: values[id(t)] if isinstance(t, KerasTensor) else t, (node.args, node.kwargs))
            out = node.layer(*args, **kwargs)
            for t, value in zip(_nest.flatten(node.outputs), _nest.flatten(out), strict=True):
                values[id(t)] = value
        return _nest.map_structure(lambda t: values[id(t)], self._outputs_struct)

    def compute_output_shape(self, input_shape):
        return _nest.map_structure(lambda t: t.shape, self._outputs_struct)

    def get_build_config(self):
        return None  # the config's layers and nodes rebuild it

    def get_config(self):
        """Keras 3's functional config: each layer once, with the calls (``inbound_nodes``)
        that feed it, tensors named ``[layer name, node index, tensor index]``."""
        calls = {id(layer): [] for layer in self._functional_layers}
        where = {}
        for t in self.inputs:
            where[t.node.id] = (t.node.layer.name, 0)
        for node in self._nodes:
            where[node.id] = (node.layer.name, len(calls[id(node.layer)]))
            calls[id(node.layer)].append(node)

        def history(t):
            name, k = where[t.node.id]
            return [name, k, t.index]

        def argument(x):
            if isinstance(x, KerasTensor):
                return {"class_name": "__keras_tensor__", "config": {"keras_history": history(x)}}
            if not plain(x):
                raise NotImplementedError(f"cannot save a call argument of type {type(x).__name__} in "
                                          f"functional model {self.name}: only tensors and plain data")
            return x

        layers = []
        for layer in self._functional_layers:
            entry = serialization.serialize(layer)
            entry["name"] = layer.name
            entry["inbound_nodes"] = [{"args": [_nest.map_structure(argument, a) for a in node.args],
                                       "kwargs": {k: _nest.map_structure(argument, v)
                                                  for k, v in node.kwargs.items()}}
                                      for node in calls[id(layer)]]
            layers.append(entry)
        return {"name": self.name, "trainable": self.trainable, "layers": layers,
                "input_layers": _nest.map_structure(history, self._inputs_struct),
                "output_layers": _nest.map_structure(history, self._outputs_struct)}

    @classmethod
    def from_config(cls, config):
        return functional_from_config(cls, config)


def _keras_order(inputs, outputs):
    """The layers in Keras' order, and each node's depth (Keras' ``map_graph``).

    A node's depth is its distance from the outputs (the longest path); layers are listed
    deepest first, ties in the order a depth-first walk from the outputs first meets them.
    """
    input_ids = {id(t) for t in inputs}
    first_met, finished, post = {}, set(), []
    for out in outputs:
        stack = [(out, False)]
        while stack:
            t, done = stack.pop()
            node = t.node
            if done:
                if node.id not in finished:
                    finished.add(node.id)
                    post.append(node)
                continue
            if node.id in finished:
                continue
            first_met.setdefault(id(node.layer), (len(first_met), node.layer))
            stack.append((t, True))
            if id(t) not in input_ids:
                stack.extend((u, False) for u in reversed(node.input_tensors))
    in_graph = {node.id for node in post}
    node_depth, layer_depth = {}, {}
    for node in reversed(post):
        depth = max(node_depth.setdefault(node.id, 0), layer_depth.get(id(node.layer), 0))
        layer_depth[id(node.layer)] = node_depth[node.id] = depth
        for u in node.input_tensors:
            if u.node.id in in_graph:
                node_depth[u.node.id] = max(depth + 1, node_depth.get(u.node.id, 0))
    for t in inputs:  # inputs no output depends on: depth 0, listed first among them
        if id(t.node.layer) not in layer_depth:
            layer_depth[id(t.node.layer)], node_depth[t.node.id] = 0, 0
            first_met[id(t.node.layer)] = (-1, t.node.layer)
    order = sorted(first_met.values(), key=lambda e: (-layer_depth[id(e[1])], e[0]))
    return [layer for _, layer in order], node_depth


MAX_LAYERS = 10_000  # layers (and calls) one functional config may describe


def _is_history(x):
    return (isinstance(x, list) and len(x) == 3 and isinstance(x[0], str)
            and all(type(i) is int and 0 <= i < MAX_LAYERS for i in x[1:]))


def functional_from_config(cls, config):
    """Rebuild a functional model: make each layer, then replay the calls whose inputs exist."""
    config = dict(config)
    entries = config.pop("layers", None)
    input_spec, output_spec = config.pop("input_layers", None), config.pop("output_layers", None)
    if not isinstance(entries, list) or len(entries) > MAX_LAYERS:
        raise ValueError(f"functional config: 'layers' is not a list of at most {MAX_LAYERS} layers")
    made, pending, tensors = {}, [], {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ValueError(f"functional config: layers[{i}] is not a named layer config")
        name = entry["name"]
        if name in made:
            raise ValueError(f"functional config: two layers are named {name[:60]!r}")
        nodes = entry.get("inbound_nodes", [])
        if not isinstance(nodes, list) or len(nodes) > MAX_LAYERS:
            raise ValueError(f"functional config: layer {name[:60]!r} has a bad 'inbound_nodes'")
        layer = serialization.deserialize(entry)
        made[name] = layer
        if isinstance(layer, InputLayer):
            tensors[(name, 0)] = [layer.output]
        for k, node in enumerate(nodes):
            if (not isinstance(node, dict) or set(node) != {"args", "kwargs"}
                    or not isinstance(node["args"], list) or not isinstance(node["kwargs"], dict)):
                raise ValueError(f"functional config: call {k} of layer {name[:60]!r} is not "
                                 f"{{'args': [...], 'kwargs': {{...}}}}")
            pending.append((name, k, node))
    if len(pending) > MAX_LAYERS:
        raise ValueError(f"functional config: more than {MAX_LAYERS} layer calls")

    def is_ref(x):
        return isinstance(x, dict) and x.get("class_name") == "__keras_tensor__"

    def resolve(x):
        ref = x["config"].get("keras_history") if isinstance(x.get("config"), dict) else None
        if not _is_history(ref):
            raise ValueError(f"functional config: bad tensor reference {str(x)[:80]}")
        outs = tensors.get((ref[0], ref[1]))
        if outs is None:
            raise LookupError
        if ref[2] >= len(outs):
            raise ValueError(f"functional config: layer {ref[0][:60]!r} call {ref[1]} has no output "
                             f"{ref[2]}")
        return outs[ref[2]]

    def restore(x):
        return _walk_refs(x, is_ref, resolve)

    while pending:
        waiting = []
        for name, k, node in pending:
            try:
                args = restore(node["args"])
                kwargs = restore(node["kwargs"])
            except LookupError:
                waiting.append((name, k, node))
                continue
            out = made[name](*args, **kwargs)
            tensors[(name, k)] = _nest.flatten(out)
        if len(waiting) == len(pending):
            raise ValueError(f"functional config: the calls of {[n for n, _, _ in waiting][:5]} "
                             f"use tensors no call makes")
        pending = waiting

    def endpoint(ref):
        if not _is_history(ref) or (ref[0], ref[1]) not in tensors or ref[2] >= len(tensors[(ref[0], ref[1])]):
            raise ValueError(f"functional config: model input/output {str(ref)[:80]} names no tensor")
        return tensors[(ref[0], ref[1])][ref[2]]

    inputs = _map_endpoints(input_spec, endpoint)
    outputs = _map_endpoints(output_spec, endpoint)
    model = Model(inputs, outputs, name=config.get("name"), trainable=config.get("trainable", True))
    if cls not in (Model, Functional):
        model.__class__ = _with_functional(cls) if not issubclass(cls, Functional) else cls
    return model


def _walk_refs(x, is_ref, resolve):
    """``x`` (JSON data) with every tensor reference replaced by its tensor."""
    if is_ref(x):
        return resolve(x)
    if isinstance(x, list):
        return [_walk_refs(v, is_ref, resolve) for v in x]
    if isinstance(x, dict):
        return {k: _walk_refs(v, is_ref, resolve) for k, v in x.items()}
    return x


def _map_endpoints(spec, endpoint):
    """Model inputs/outputs: one ``[name, node, index]``, or a list or dict of them."""
    if _is_history(spec):
        return endpoint(spec)
    if isinstance(spec, list) and spec:
        return [_map_endpoints(s, endpoint) for s in spec]
    if isinstance(spec, dict) and spec:
        return {k: _map_endpoints(v, endpoint) for k, v in spec.items()}
    raise ValueError(f"functional config: model inputs/outputs {str(spec)[:80]} are not tensor names")


_FUNCTIONAL_SUBCLASSES = {}


def _with_functional(cls):
    if cls not in _FUNCTIONAL_SUBCLASSES:
        _FUNCTIONAL_SUBCLASSES[cls] = type(cls.__name__, (cls, Functional),
                                           {"__module__": cls.__module__, "__qualname__": cls.__qualname__})
    return _FUNCTIONAL_SUBCLASSES[cls]


class Sequential(Model):
    """Layers called one after the other."""

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(trainable=trainable, name=name)
        self._input_layer = None
        self._layers = []
        self.output_shape = None
        for layer in layers or []:
            self.add(layer, rebuild=False)
        self._maybe_rebuild()

    def add(self, layer, rebuild=True):
        if isinstance(layer, KerasTensor) and isinstance(layer.node.layer, InputLayer):
            layer = layer.node.layer
        if isinstance(layer, InputLayer):
            if self._input_layer is not None or self._layers:
                raise ValueError("An InputLayer can only be the first layer of a Sequential model.")
            self._input_layer = layer
        elif isinstance(layer, Layer):
            self._layers = self._layers + [layer]  # reassigned, so the layer is tracked
        else:
            raise ValueError(f"Only instances of `keras.Layer` can be added to a Sequential model. "
                             f"Received: {layer} (of type {type(layer)})")
        if rebuild:
            self._maybe_rebuild()

    def pop(self):
        layer = self._layers[-1]
        self._layers = self._layers[:-1]
        return layer

    def _maybe_rebuild(self):
        if self._input_layer is not None:
            self.build(self._input_layer.batch_shape)
        elif self._layers and self._layers[0]._input_shape_arg is not None:
            self.build((None,) + tuple(self._layers[0]._input_shape_arg))

    def _maybe_build(self, inputs):
        if not self.built:  # built by a call: the batch size stays unknown, as in Keras
            shape = TensorShape(_nest.flatten(inputs)[0].shape)
            self._build_input_shape = shape
            self.build((None,) + tuple(shape)[1:])

    def build(self, input_shape=None):
        """Build every layer by calling it on Keras tensors of the given shape."""
        self._sequential_build_shape = tuple(TensorShape(input_shape))
        x = KerasTensor(TensorShape(input_shape), D.float32)
        for layer in self._layers:
            x = layer(x)
        self.output_shape = tuple(x.shape) if isinstance(x, KerasTensor) else None
        self.built = True

    @property
    def layers(self):
        return list(self._layers)

    def get_config(self):
        layers = [serialization.serialize(layer) for layer in
                  ([self._input_layer] if self._input_layer is not None else []) + self._layers]
        shape = getattr(self, "_sequential_build_shape", None)
        return {"name": self.name, "trainable": self.trainable, "layers": layers,
                "build_input_shape": None if shape is None else list(shape)}

    def get_build_config(self):
        return None

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        entries = config.pop("layers", None)
        shape = config.pop("build_input_shape", None)
        if not isinstance(entries, list) or len(entries) > MAX_LAYERS:
            raise ValueError(f"Sequential config: 'layers' is not a list of at most {MAX_LAYERS} layers")
        serialization.check_shape(shape, "Sequential build_input_shape")
        model = cls(name=config.get("name"), trainable=config.get("trainable", True))
        for entry in entries:
            model.add(serialization.deserialize(entry), rebuild=False)
        model._maybe_rebuild()
        if not model.built and shape is not None:
            model.build(tuple(shape))
        return model

    def call(self, inputs, training=None):
        for layer in self._layers:
            inputs = layer(inputs)
        return inputs


serialization.register_builtin(InputLayer, Model, Functional, Sequential)

__all__ = ["Model", "Functional", "Sequential", "Input", "InputLayer"]
