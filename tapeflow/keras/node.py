"""Keras tensors: the symbolic values a functional model is written with.

``Input(shape=(3,))`` is a ``KerasTensor`` of shape ``(None, 3)``. Calling a
layer on Keras tensors runs nothing on data: the layer is built from the
input shapes (batch dimension ``None``, as Keras builds it) and the call is
recorded as a ``Node`` (layer, arguments with their Keras tensors, outputs).
``Model(inputs, outputs)`` later replays the nodes between them on real
tensors (models.py).

The output shapes come from one call of the built layer on zeros with the
unknown dimensions set to 1 (tapes paused, the layer's weights restored
afterwards, so a BatchNormalization in training mode keeps its statistics);
an output's first axis is ``None`` again when the inputs' batch axis was.
Keras 3 traces ``compute_output_spec`` symbolically instead; the shapes agree
for layers whose output dims do not depend on the batch size.
"""
import itertools
import threading

import numpy as np

from .. import _nest
from ..ir import dtypes as D
from ..runtime import stack
from ..runtime.tensor import STATE_paused, TensorShape, convert_to_tensor

# -- creation limit: what loading a file may allocate --------------------------------------

_creation = threading.local()


class creation_limit:
    """Within it, ``check(shape, dtype, what)`` runs before any weight or placeholder is made.

    The loader of saved models (saving.py) uses it to refuse, before allocating, the
    huge weights a hostile config would make a layer build."""

    def __init__(self, check):
        self.check = check

    def __enter__(self):
        if not hasattr(_creation, "checks"):
            _creation.checks = []
        _creation.checks.append(self.check)

    def __exit__(self, *exc):
        _creation.checks.pop()


def check_creation(shape, dtype, what):
    for check in getattr(_creation, "checks", ()):
        check(tuple(shape), D.as_dtype(dtype), what)


_tensor_ids = itertools.count()
_node_ids = itertools.count()


class KerasTensor:
    """A symbolic value of known dtype and (partly known) shape, made by ``Input`` or a layer call."""

    def __init__(self, shape, dtype="float32", name=None, node=None, index=0):
        self.shape = TensorShape(shape)
        self.dtype = D.as_dtype(dtype)
        number = next(_tensor_ids)
        self.name = name or (f"keras_tensor_{number}" if number else "keras_tensor")
        self.node, self.index = node, index

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return (f"<KerasTensor shape={tuple(self.shape)}, dtype={self.dtype.name}, sparse=False, "
                f"ragged=False, name={self.name}>")

    def __bool__(self):
        raise TypeError("A KerasTensor is symbolic: it's a placeholder for a shape and a dtype. It "
                        "doesn't have any actual numerical value. You cannot convert it to a bool.")

    def __array__(self, *args, **kwargs):
        raise TypeError(f"A KerasTensor cannot be used as input to a tapeflow op: {self!r}. Use it "
                        f"only as the input of a Keras layer or a Model.")

    def numpy(self):
        self.__array__()


class Node:
    """One recorded layer call: ``outputs = layer(*args, **kwargs)`` on Keras tensors.

    ``index`` counts the layer's calls (Keras' node index, as in ``dense[1][0]``)."""

    def __init__(self, layer, args, kwargs, outputs):
        self.id = next(_node_ids)
        self.layer, self.args, self.kwargs = layer, args, kwargs
        self.outputs = outputs
        self.index = layer.__dict__.get("_keras_node_count", 0)
        object.__setattr__(layer, "_keras_node_count", self.index + 1)

    @property
    def input_tensors(self):
        return [t for t in _nest.flatten((self.args, self.kwargs)) if isinstance(t, KerasTensor)]

    @property
    def output_tensors(self):
        return [t for t in _nest.flatten(self.outputs) if isinstance(t, KerasTensor)]


def any_keras_tensor(structure):
    return any(isinstance(t, KerasTensor) for t in _nest.flatten(structure))


# The size a placeholder takes for an unknown dim other than the batch (a sequence's length,
# an image's side): large enough for a layer's kernel to fit; a second probe one larger tells
# which output dims follow it (they are None, as Keras' symbolic shapes).
_PROBE = 64


def _placeholder(t, probe=_PROBE):
    shape = tuple((1 if k == 0 else probe) if d is None else int(d) for k, d in enumerate(t.shape))
    check_creation(shape, t.dtype, f"placeholder {t.name}")
    return convert_to_tensor(np.zeros(shape, dtype=t.dtype.np))


def _run_on_placeholders(layer, args, kwargs, probe):
    concrete_args, concrete_kwargs = _nest.map_structure(
        lambda t: _placeholder(t, probe) if isinstance(t, KerasTensor) else t, (args, kwargs))
    with STATE_paused():
        return layer(*concrete_args, **concrete_kwargs)


def symbolic_call(layer, args, kwargs):
    """``layer(*args, **kwargs)`` on Keras tensors: build, infer the outputs, record a Node."""
    keras_inputs = [t for t in _nest.flatten((args, kwargs)) if isinstance(t, KerasTensor)]
    inputs = args[0] if args else kwargs.get("inputs")
    if not layer.built:
        if layer.input_spec is not None:
            layer.input_spec.check(layer.name, inputs)
        with stack.name_scope(layer.name):
            layer._maybe_build(inputs)
    saved = [(w, w.numpy()) for w in layer.weights]
    values = _run_on_placeholders(layer, args, kwargs, _PROBE)
    open_dims = any(None in tuple(t.shape)[1:] for t in keras_inputs)
    again = _nest.flatten(_run_on_placeholders(layer, args, kwargs, _PROBE + 1)) if open_dims else None
    for w, value in saved:
        w.assign(value)
    batch_unknown = any(t.shape and t.shape[0] is None for t in keras_inputs)
    counter = itertools.count()
    node = Node(layer, args, kwargs, None)

    def symbolic(value):
        k = next(counter)
        shape = list(value.shape)
        if batch_unknown and shape:
            shape[0] = None
        if again is not None:       # dims that follow an unknown input size are unknown
            shape = [None if d != e else d for d, e in zip(shape, again[k].shape)]
        return KerasTensor(shape, value.dtype, node=node, index=k)

    node.outputs = _nest.map_structure(symbolic, values)
    layer._keras_output_shape = node.outputs.shape if isinstance(node.outputs, KerasTensor) else None
    return node.outputs


__all__ = ["KerasTensor", "Node", "any_keras_tensor", "symbolic_call"]
