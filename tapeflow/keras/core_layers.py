"""Keras 3's weightless layers: ``Dropout``, ``Flatten``, ``Reshape``, ``Activation``, ``ReLU``,
``Softmax``, ``Concatenate``, ``Add``, ``Lambda``; and ``Embedding``.

Each is a few tapeflow ops and a ``get_config`` with Keras 3's keys, so models made of
them save and load (saving.py). ``Dropout`` draws its mask from ``random_bits`` so that a
compiled ``fit`` step draws a new mask on every batch.
"""
import math

from ..ir import dtypes as D
from ..ops import array as A
from ..ops import creation
from ..ops import math as M
from ..ops import nn as N
from . import initializers
from .layers import Layer, get_activation, serialize_activation
from .random_bits import SeedGenerator


class Dropout(Layer):
    """A layer that zeroes a random fraction ``rate`` of its inputs while training.

    With ``training=True``: zero each input with probability ``rate``, scale the rest by
    ``1 / (1 - rate)``; otherwise (inference, the default) the identity. ``noise_shape``
    dims of 1 (or None: the input's) share one draw along that axis.

    >>> layer = tf.keras.layers.Dropout(0.5, seed=1)
    >>> layer(tf.ones((2, 3)))
    <tf.Tensor: shape=(2, 3), dtype=float32, numpy=
    array([[1., 1., 1.],
           [1., 1., 1.]], dtype=float32)>
    >>> sorted(set(layer(tf.ones((4, 8)), training=True).numpy().ravel().tolist()))
    [0.0, 2.0]
    """

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value "
                             f"between 0 and 1. Received: rate={rate}")
        self.rate, self.seed = rate, seed
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        # not a tracked attribute: Keras 3's Dropout has no weights
        object.__setattr__(self, "seed_generator", SeedGenerator(seed))
        self.built = True

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return M.multiply(inputs, M.cast(0, inputs.dtype))
        shape = tuple(inputs.shape)
        if self.noise_shape is not None:
            if len(self.noise_shape) != len(shape):
                raise ValueError(f"`noise_shape` {self.noise_shape} must have the rank of the "
                                 f"inputs, {len(shape)}")
            shape = tuple(s if n is None else int(n) for n, s in zip(self.noise_shape, shape, strict=True))
        noise = self.seed_generator.uniform(shape, inputs.dtype)
        keep = M.cast(M.greater_equal(noise, M.cast(self.rate, inputs.dtype)), inputs.dtype)
        scale = M.cast(1.0 / (1.0 - self.rate), inputs.dtype)
        return M.multiply(M.multiply(inputs, scale), keep)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed,
                "noise_shape": None if self.noise_shape is None else list(self.noise_shape)}


class Flatten(Layer):
    """A layer that flattens each sample: ``(batch, d1, d2, ...) -> (batch, d1 * d2 * ...)``.

    A 1-D input becomes ``(batch, 1)``.

    >>> tf.keras.layers.Flatten()(tf.ones((2, 3, 4))).shape
    TensorShape([2, 12])
    """

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last", "channels_first"):
            raise ValueError(f"The `data_format` argument must be one of {{'channels_first', "
                             f"'channels_last'}}. Received: data_format={data_format}")
        self.data_format = data_format or "channels_last"

    def call(self, inputs):
        shape = tuple(inputs.shape)
        if self.data_format == "channels_first" and len(shape) > 2:
            inputs = A.transpose(inputs, [0] + list(range(2, len(shape))) + [1])
        return A.reshape(inputs, (shape[0], math.prod(shape[1:])))

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


class Reshape(Layer):
    """A layer that reshapes each sample: ``(batch, ...) -> (batch, *target_shape)``.

    One -1 in ``target_shape`` is inferred.

    >>> tf.keras.layers.Reshape((3, -1))(tf.ones((1, 6))).shape
    TensorShape([1, 3, 2])
    """

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)

    def call(self, inputs):
        shape = tuple(inputs.shape)
        size, target = math.prod(shape[1:]), list(self.target_shape)
        known = math.prod(d for d in target if d != -1)
        if target.count(-1) == 1 and known and size % known == 0:
            target[target.index(-1)] = size // known
        if target.count(-1) or math.prod(target) != size:
            raise ValueError(f"The total size of the tensor must be unchanged. Received: "
                             f"input_shape={shape[1:]}, target_shape={self.target_shape}")
        return A.reshape(inputs, (shape[0],) + tuple(target))

    def get_config(self):
        return {**super().get_config(), "target_shape": list(self.target_shape)}


class Activation(Layer):
    """A layer applying an activation function, by name (Keras' activations) or a callable.

    >>> tf.keras.layers.Activation("relu")(tf.constant([[-1.0, 2.0]]))
    <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[0., 2.]], dtype=float32)>
    """

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self._activation_id = activation
        self.activation = get_activation(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def get_config(self):
        return {**super().get_config(), "activation": serialize_activation(self._activation_id)}


class ReLU(Layer):
    """The rectified linear unit as a layer, with an optional cap, slope and threshold.

    ``x`` from ``threshold`` up (capped at ``max_value``), ``negative_slope * (x - threshold)``
    below.

    >>> tf.keras.layers.ReLU(max_value=1.0)(tf.constant([[-1.0, 0.5, 3.0]]))
    <tf.Tensor: shape=(1, 3), dtype=float32, numpy=array([[0. , 0.5, 1. ]], dtype=float32)>
    """

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0.0:
            raise ValueError(f"max_value of a ReLU layer cannot be a negative value. Received: "
                             f"max_value={max_value}")
        if negative_slope is None or negative_slope < 0.0:
            raise ValueError(f"negative_slope of a ReLU layer cannot be a negative value. Received: "
                             f"negative_slope={negative_slope}")
        if threshold is None or threshold < 0.0:
            raise ValueError(f"threshold of a ReLU layer cannot be a negative value. Received: "
                             f"threshold={threshold}")
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, threshold

    def call(self, inputs):
        if self.max_value is None and not self.negative_slope and not self.threshold:
            return N.relu(inputs)
        dt = inputs.dtype
        threshold = M.cast(self.threshold, dt)
        above = M.greater_equal(inputs, threshold)
        below = (M.multiply(M.cast(self.negative_slope, dt), M.subtract(inputs, threshold))
                 if self.negative_slope else creation.zeros_like(inputs))
        out = M.where(above, inputs, below)
        if self.max_value is not None:
            out = M.minimum(out, M.cast(self.max_value, dt))
        return out

    def get_config(self):
        return {**super().get_config(), "max_value": self.max_value,
                "negative_slope": self.negative_slope, "threshold": self.threshold}


class Softmax(Layer):
    """The softmax of the inputs along ``axis``, as a layer.

    >>> tf.keras.layers.Softmax()(tf.constant([[0.0, 0.0]]))
    <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[0.5, 0.5]], dtype=float32)>
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs, mask=None):
        if mask is not None:
            raise NotImplementedError("tapeflow's Softmax layer has no mask yet")
        return N.softmax(inputs, axis=self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


def _merge_inputs(layer, inputs):
    if not isinstance(inputs, (list, tuple)):
        raise ValueError(f"A merge layer should be called on a list of inputs. Received: "
                         f"inputs={inputs} (not a list of tensors)")
    return list(inputs)


class Concatenate(Layer):
    """A layer joining a list of inputs along ``axis``; every other dimension must match.

    >>> tf.keras.layers.Concatenate()([tf.ones((1, 2)), tf.zeros((1, 1))])
    <tf.Tensor: shape=(1, 3), dtype=float32, numpy=array([[1., 1., 0.]], dtype=float32)>
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        inputs = _merge_inputs(self, inputs)
        shapes = [tuple(x.shape) for x in inputs]
        rank = len(shapes[0])
        axis = self.axis % rank if rank else 0
        rest = {tuple(d for i, d in enumerate(s) if i != axis) for s in shapes}
        if len(rest) != 1 or any(len(s) != rank for s in shapes):
            raise ValueError(f"A `Concatenate` layer requires inputs with matching shapes except for "
                             f"the concatenation axis. Received: input_shape={shapes}")
        return A.concat(inputs, axis=self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class Add(Layer):
    """A layer adding a list of inputs elementwise.

    >>> tf.keras.layers.Add()([tf.ones((1, 2)), tf.ones((1, 2))])
    <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[2., 2.]], dtype=float32)>
    """

    def call(self, inputs):
        inputs = _merge_inputs(self, inputs)
        out = inputs[0]
        for x in inputs[1:]:
            out = M.add(out, x)
        return out


class Embedding(Layer):
    """A layer looking up rows of an ``(input_dim, output_dim)`` table by integer ids.

    >>> layer = tf.keras.layers.Embedding(4, 2, embeddings_initializer="ones")
    >>> layer(tf.constant([[0, 3]])).shape
    TensorShape([1, 2, 2])
    """

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False, **kwargs):
        super().__init__(**kwargs)
        if embeddings_regularizer is not None or embeddings_constraint is not None:
            raise NotImplementedError("tapeflow's Embedding has no regularizer or constraint")
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.makes_masks = self.mask_zero     # keras/masking.py
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        if self.input_dim <= 0 or self.output_dim <= 0:
            raise ValueError(f"Both `input_dim` and `output_dim` should be positive, Received "
                             f"input_dim = {input_dim} and output_dim = {output_dim}")
        if embeddings_initializer == "uniform":
            embeddings_initializer = "random_uniform"
        self.embeddings_initializer = initializers.get(embeddings_initializer)

    def build(self, input_shape=None):
        self.embeddings = self.add_weight("embeddings", shape=[self.input_dim, self.output_dim],
                                          initializer=self.embeddings_initializer, dtype=self._dtype,
                                          trainable=True)
        self.built = True

    def _autocast_inputs(self, inputs):
        return inputs  # ids stay integers

    def call(self, inputs):
        if inputs.dtype not in (D.int32, D.int64):
            inputs = M.cast(inputs, D.int32)
        return A.gather(self.embeddings, inputs)

    def compute_mask(self, inputs, mask=None):
        """``mask_zero``: id 0 is padding (Keras 3's ``inputs != 0``)."""
        return M.not_equal(inputs, 0) if self.mask_zero else None

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim, "output_dim": self.output_dim,
                "embeddings_initializer": initializers.serialize(self.embeddings_initializer),
                "embeddings_regularizer": None, "embeddings_constraint": None,
                "mask_zero": self.mask_zero}


_LAMBDA_REFUSED = (
    "Requested the deserialization of a `Lambda` layer whose `function` is a Python lambda. "
    "This carries a potential risk of arbitrary code execution and thus it is disallowed by "
    "default. tapeflow never loads code from a file: build the model in Python and use "
    "`load_weights` instead.")


class Lambda(Layer):
    """A layer that calls a Python function on its inputs (no weights of its own).

    Saving stores a marker where Keras 3 stores the function's bytecode, and loading refuses
    it with Keras' ``ValueError`` (Keras allows it with ``safe_mode=False``; tapeflow never
    runs code from a file).

    >>> tf.keras.layers.Lambda(lambda x: x * 2.0)(tf.constant([[1.0, 2.0]]))
    <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[2., 4.]], dtype=float32)>
    """

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda: `function` must be callable, got {function!r}")
        self.function = function
        self.arguments = dict(arguments or {})
        self._output_shape = output_shape

    def call(self, inputs):
        return self.function(inputs, **self.arguments)

    def get_config(self):
        return {**super().get_config(),
                "function": {"class_name": "__lambda__", "config": {"code": None}},
                "arguments": {}}

    @classmethod
    def from_config(cls, config):
        raise ValueError(_LAMBDA_REFUSED)


CLASSES = (Dropout, Flatten, Reshape, Activation, ReLU, Softmax, Concatenate, Add, Embedding,
           Lambda)

__all__ = [c.__name__ for c in CLASSES]
