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
from ..runtime.tensor import TensorShape
from .layers import Layer, unique_object_name
from .node import KerasTensor, Node
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


def Input(shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, name=None,
          tensor=None, optional=False):
    """A symbolic input of shape ``(batch_size, *shape)`` for functional models."""
    if sparse or tensor is not None or optional:
        raise NotImplementedError("tapeflow's Input has no sparse, tensor or optional inputs")
    return InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, batch_shape=batch_shape,
                      name=name).output


# -- Model -----------------------------------------------------------------------------------

class Model(Trainer, Layer):
    """A layer that trains. ``Model(inputs, outputs)`` makes a functional model."""

    def __new__(cls, *args, **kwargs):
        if cls is Model and (len(args) >= 2 or "inputs" in kwargs or "outputs" in kwargs):
            return object.__new__(Functional)
        return object.__new__(cls)

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
        layers = [t.node.layer for t in self.inputs]
        for node in self._nodes:
            if not any(layer is node.layer for layer in layers):
                layers.append(node.layer)
        self._functional_layers = layers
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
        x = KerasTensor(TensorShape(input_shape), D.float32)
        for layer in self._layers:
            x = layer(x)
        self.output_shape = tuple(x.shape) if isinstance(x, KerasTensor) else None
        self.built = True

    @property
    def layers(self):
        return list(self._layers)

    def call(self, inputs, training=None):
        for layer in self._layers:
            inputs = layer(inputs)
        return inputs


__all__ = ["Model", "Functional", "Sequential", "Input", "InputLayer"]
