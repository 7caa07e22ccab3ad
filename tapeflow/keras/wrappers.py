"""Keras 3's layer wrappers: ``Wrapper`` (their base), ``Bidirectional`` (an RNN both ways, merged) and
``TimeDistributed`` (a layer applied to every time step).

``Bidirectional`` copies its layer from its config twice, ``forward_<name>`` and
``backward_<name>`` (``go_backwards`` flipped), runs both, reverses the backward outputs
back into time order and merges them (``concat``, ``sum``, ``ave``, ``mul`` or a list);
its weights are the forward layer's, then the backward layer's, as in Keras.
"""
import inspect

from .. import _nest
from ..ops import array as A
from ..ops import math as M
from ..runtime import stack
from ..runtime.tensor import STATE_paused, TensorShape
from . import serialization
from .layers import Layer

_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


def _copy(layer, name, **changes):
    config = serialization.serialize(layer)
    config.pop("build_config", None)
    config["config"] = {**config["config"], "name": name, **changes}
    return serialization.deserialize(config)


class Bidirectional(Layer):
    """An RNN run forwards and backwards over the sequence, the two outputs merged.

    >>> layer = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(3))
    >>> layer(tf.ones((2, 5, 4))).shape
    TensorShape([2, 6])
    >>> len(layer.weights), layer.forward_layer.go_backwards, layer.backward_layer.go_backwards
    (6, False, True)
    """

    supports_masking = True

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `Bidirectional` layer with a `keras.layers.Layer` "
                             f"instance. Received: {layer}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError(f"`backward_layer` need to be a `keras.layers.Layer` instance. "
                             f"Received: {backward_layer}")
        if merge_mode not in _MERGE_MODES:
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should be "
                             f"one of {{'sum', 'mul', 'ave', 'concat', None}}")
        super().__init__(**kwargs)
        base = layer.name[len("forward_"):] if layer.name.startswith("forward_") else layer.name
        self.forward_layer = _copy(layer, "forward_" + base)
        if backward_layer is None:
            back = layer.name[len("backward_"):] if layer.name.startswith("backward_") else \
                layer.name
            self.backward_layer = _copy(layer, "backward_" + back, go_backwards=True)
        else:
            self.backward_layer = backward_layer
        self._backward_given = backward_layer is not None
        if self.forward_layer.go_backwards == self.backward_layer.go_backwards:
            raise ValueError(f"Forward layer and backward layer should have different "
                             f"`go_backwards` value. Received: forward_layer.go_backwards "
                             f"{self.forward_layer.go_backwards}, backward_layer.go_backwards="
                             f"{self.backward_layer.go_backwards}")
        for a in ("stateful", "return_sequences", "return_state"):
            if getattr(self.forward_layer, a) != getattr(self.backward_layer, a):
                raise ValueError(f"Forward layer and backward layer are expected to have the same "
                                 f'value for attribute "{a}", got '
                                 f'"{getattr(self.forward_layer, a)}" for forward layer and '
                                 f'"{getattr(self.backward_layer, a)}" for backward layer')
        for sub in (self.forward_layer, self.backward_layer):
            if getattr(sub, "zero_output_for_mask", None) is not None:   # as Keras 3 forces it
                sub.zero_output_for_mask = sub.return_sequences
        object.__setattr__(self, "_wrapped", layer)   # kept for get_config, not tracked
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        if weights is not None:
            raise NotImplementedError("Bidirectional(weights=...): use set_weights after build")

    def build(self, sequences_shape, initial_state_shape=None):
        for layer in (self.forward_layer, self.backward_layer):
            if not layer.built:
                with stack.name_scope(layer.name), STATE_paused():
                    layer._build_input_shape = TensorShape(sequences_shape)
                    layer.build(sequences_shape)
                layer.built = True
        self.built = True

    def compute_mask(self, inputs, mask=None):
        mask = _nest.flatten(mask)[0] if mask is not None else None
        out = mask if self.return_sequences else None
        out = [out, out] if self.merge_mode is None else out
        if self.return_state:
            n = len(_nest.flatten(self.forward_layer.state_size))
            return (out if isinstance(out, list) else [out]) + [None] * (2 * n)
        return out

    def call(self, sequences, initial_state=None, mask=None, training=None):
        kwargs = {"training": training}
        if mask is not None:
            kwargs["mask"] = mask[0] if isinstance(mask, (list, tuple)) else mask
        forward_state = backward_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            forward_state, backward_state = initial_state[:half], initial_state[half:]
        y = self.forward_layer(sequences, initial_state=forward_state, **kwargs)
        y_rev = self.backward_layer(sequences, initial_state=backward_state, **kwargs)
        states = ()
        if self.return_state:
            states = tuple(y[1:]) + tuple(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = y_rev[:, ::-1]
        if self.merge_mode == "concat":
            output = A.concat([y, y_rev], axis=-1)
        elif self.merge_mode == "sum":
            output = M.add(y, y_rev)
        elif self.merge_mode == "ave":
            output = M.divide(M.add(y, y_rev), M.cast(2, y.dtype))
        elif self.merge_mode == "mul":
            output = M.multiply(y, y_rev)
        else:
            output = (y, y_rev)
        if self.return_state:
            return (*output, *states) if self.merge_mode is None else (output, *states)
        return output

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        out = self.forward_layer.compute_output_shape(sequences_shape)
        states = []
        if self.return_state:
            out, states = out[0], list(out[1:])
        if self.merge_mode == "concat":
            out = TensorShape(list(out)[:-1] + [out[-1] * 2])
        elif self.merge_mode is None:
            out = [out, out]
        if self.return_state:
            return (out if isinstance(out, list) else [out]) + states * 2
        return out

    def get_config(self):
        config = {**super().get_config(), "merge_mode": self.merge_mode,
                  "layer": serialization.serialize(self._wrapped)}
        config["layer"].pop("build_config", None)
        if self._backward_given:
            config["backward_layer"] = serialization.serialize(self.backward_layer)
            config["backward_layer"].pop("build_config", None)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        layer = serialization.deserialize(config.pop("layer"))
        backward = config.pop("backward_layer", None)
        if backward is not None:
            backward = serialization.deserialize(backward)
        return cls(layer, backward_layer=backward, **config)


def _build_child(layer, shape):
    with stack.name_scope(layer.name), STATE_paused():
        layer._build_input_shape = shape
        layer.build(shape)
    layer.built = True


class Wrapper(Layer):
    """The base of layers that wrap another layer (Keras 3's ``Wrapper``): it holds ``layer``,
    builds it with its own input shape and saves it in its config.

    >>> class Twice(tf.keras.layers.Wrapper):
    ...     def call(self, x):
    ...         return self.layer(self.layer(x))
    >>> Twice(tf.keras.layers.Dense(2, kernel_initializer="ones"))(tf.ones((1, 2))).numpy()
    array([[4., 4.]], dtype=float32)
    """

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Layer {layer} supplied to Wrapper isn't a supported layer type. "
                             f"Please ensure wrapped layer is a valid Keras layer.")
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape=None):
        if not self.layer.built:
            _build_child(self.layer, TensorShape(input_shape))
        self.built = True

    def get_config(self):
        config = {**super().get_config(), "layer": serialization.serialize(self.layer)}
        config["layer"].pop("build_config", None)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(serialization.deserialize(config.pop("layer")), **config)


class TimeDistributed(Wrapper):
    """Applies ``layer`` to every time step (axis 1) of its input, as Keras 3: one call per
    step of a static time axis, the results stacked back on axis 1.

    >>> layer = tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(2))
    >>> layer(tf.ones((4, 3, 5))).shape
    TensorShape([4, 3, 2])
    """

    supports_masking = True

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `TimeDistributed` layer with a "
                             f"`keras.layers.Layer` instance. Received: {layer}")
        super().__init__(layer, **kwargs)

    def build(self, input_shape):
        shape = TensorShape(input_shape)
        if len(shape) < 3:
            raise ValueError(f"`TimeDistributed` Layer should be passed an `input_shape` with "
                             f"at least 3 dimensions, received: {tuple(shape)}")
        if not self.layer.built:
            _build_child(self.layer, TensorShape([shape[0]] + list(shape[2:])))
        self.built = True

    def call(self, inputs, training=None, mask=None):
        steps = inputs.shape[1]
        if steps is None:
            raise ValueError("TimeDistributed needs a static time axis in tapeflow")
        params = inspect.signature(self.layer.call).parameters
        outs = []
        for i in range(steps):
            kwargs = {}
            if "mask" in params and mask is not None:
                kwargs["mask"] = mask[:, i]
            if "training" in params:
                kwargs["training"] = training
            outs.append(self.layer.call(inputs[:, i], **kwargs))
        return A.stack(outs, axis=1)

    def compute_output_shape(self, input_shape):
        shape = TensorShape(input_shape)
        child = TensorShape(self.layer.compute_output_shape(
            TensorShape([shape[0]] + list(shape[2:]))))
        return TensorShape([child[0], shape[1]] + list(child[1:]))

CLASSES = (Wrapper, Bidirectional, TimeDistributed)

__all__ = [c.__name__ for c in CLASSES]
