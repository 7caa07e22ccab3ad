"""Keras 3's convolutional LSTM: ``ConvLSTM1D/2D/3D`` and their cell.

An LSTM whose input and recurrent transforms are convolutions: each step's gates are
``conv(x_t, kernel) + bias + conv(h_{t-1}, recurrent_kernel)`` (the input convolution with
the layer's strides, padding and dilation, the recurrent one stride 1 and "same"), split
into i, f, c, o along the channels as Keras splits them; the weights have Keras' layout
(kernel [*kernel_size, in, 4 * filters], recurrent kernel [*kernel_size, filters,
4 * filters], bias [4 * filters], ``unit_forget_bias`` ones for f), so ``set_weights`` from
Keras gives Keras' outputs. The time loop is the RNN layer's (keras/recurrent.py).
"""
from ..ops import array as A
from ..ops import conv as C
from ..ops import creation
from ..ops import math as M
from ..runtime.tensor import TensorShape
from . import constraints as constraints_module
from . import regularizers as regularizers_module
from .conv_layers import normalize_data_format, normalize_padding, normalize_tuple
from .layers import InputSpec, Layer, get_activation, serialize_activation
from .random_bits import SeedGenerator
from .recurrent import RNN, _CellLayer
from .rnn_cells import DropoutRNNCell, get_initializer, recurrent_settings_config

_FORMATS = {(1, "channels_last"): "NWC", (1, "channels_first"): "NCW",
            (2, "channels_last"): "NHWC", (2, "channels_first"): "NCHW",
            (3, "channels_last"): "NDHWC", (3, "channels_first"): "NCDHW"}


def _conv_length(size, k, padding, stride, dilation):
    if size is None:
        return None
    k = (k - 1) * dilation + 1
    return (size + stride - 1) // stride if padding == "same" else (size - k) // stride + 1


class ConvLSTMCell(Layer, DropoutRNNCell):
    """One step of a convolutional LSTM (Keras 3's ``ConvLSTMCell``)."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        object.__setattr__(self, "seed_generator", SeedGenerator(seed))
        object.__setattr__(self, "_dropout_mask", None)
        object.__setattr__(self, "_recurrent_dropout_mask", None)
        self.seed, self.rank, self.filters = seed, rank, filters
        if rank > 3:
            raise ValueError(f"Rank {rank} convolutions are not currently implemented. "
                             f"Received: rank={rank}")
        self.kernel_size = normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = normalize_tuple(strides, rank, "strides", allow_zero=True)
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.dilation_rate = normalize_tuple(dilation_rate, rank, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"Specifying `strides > 1` is not compatible with `dilation_rate > "
                             f"1`. Please provide `strides=1` or `dilation_rate=1`. Received: "
                             f"strides={self.strides} and dilation_rate={self.dilation_rate}")
        self.activation = get_activation(activation)
        self.recurrent_activation = get_activation(recurrent_activation)
        self.use_bias = use_bias
        self.kernel_initializer = get_initializer(kernel_initializer)
        self.recurrent_initializer = get_initializer(recurrent_initializer)
        self.bias_initializer = get_initializer(bias_initializer)
        self.unit_forget_bias = unit_forget_bias
        R, Cn = regularizers_module.get, constraints_module.get
        self.kernel_regularizer = R(kernel_regularizer)
        self.recurrent_regularizer = R(recurrent_regularizer)
        self.bias_regularizer = R(bias_regularizer)
        self.kernel_constraint = Cn(kernel_constraint)
        self.recurrent_constraint = Cn(recurrent_constraint)
        self.bias_constraint = Cn(bias_constraint)
        self.dropout = min(1.0, max(0.0, dropout))
        self.recurrent_dropout = min(1.0, max(0.0, recurrent_dropout))
        self.dropout_mask_count = 4
        self.input_spec = InputSpec(ndim=rank + 2)
        self.state_size = -1           # Keras' placeholder: the states come from get_initial_state

    @property
    def output_size(self):
        return self._state_shape

    def build(self, inputs_shape, states_shape=None):
        shape = tuple(TensorShape(inputs_shape))
        first = self.data_format == "channels_first"
        self.spatial_dims = shape[2:] if first else shape[1:-1]
        if None in self.spatial_dims:
            raise ValueError(f"ConvLSTM layers only support static input shapes for the spatial "
                             f"dimension. Received invalid input shape: input_shape={shape}")
        input_dim = shape[1] if first else shape[-1]
        if input_dim is None:
            raise ValueError(f"The channel dimension of the inputs (last axis) should be "
                             f"defined. Found None. Full input shape received: "
                             f"input_shape={shape}")
        self.input_dim = input_dim
        spatial = [_conv_length(s, k, self.padding, st, d) for s, k, st, d in zip(
            self.spatial_dims, self.kernel_size, self.strides, self.dilation_rate)]
        object.__setattr__(self, "_state_shape", tuple(
            [self.filters] + spatial if first else spatial + [self.filters]))
        f = self.filters
        self.kernel = self.add_weight(name="kernel", shape=self.kernel_size + (input_dim, 4 * f),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel", shape=self.kernel_size + (f, 4 * f),
            initializer=self.recurrent_initializer, regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint)
        self.bias = None
        if self.use_bias:
            init = self.bias_initializer
            if self.unit_forget_bias:
                def init(shape, dtype=None, **kwargs):
                    return A.concat([self.bias_initializer((f,), dtype=dtype),
                                     creation.ones((f,), dtype),
                                     self.bias_initializer((2 * f,), dtype=dtype)], 0)
            self.bias = self.add_weight(name="bias", shape=(4 * f,), initializer=init,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.built = True

    def _conv(self, x, w, strides, padding, dilations):
        return C.convolution(x, w, list(strides), padding.upper(),
                             data_format=_FORMATS[self.rank, self.data_format],
                             dilations=list(dilations))

    def call(self, inputs, states, training=False):
        h_tm1, c_tm1 = states[0], states[1]
        dp = self.get_dropout_mask(inputs) if training and 0.0 < self.dropout < 1.0 else None
        rdp = (self.get_recurrent_dropout_mask(h_tm1)
               if training and 0.0 < self.recurrent_dropout < 1.0 else None)
        kernels = A.split(self.kernel, 4, axis=self.rank + 1)
        recurrent = A.split(self.recurrent_kernel, 4, axis=self.rank + 1)
        biases = A.split(self.bias, 4) if self.use_bias else [None] * 4
        bias_shape = ((1,) * (self.rank + 1) + (self.filters,)
                      if self.data_format == "channels_last" else
                      (1, self.filters) + (1,) * self.rank)
        z = []
        for k in range(4):
            x_k = inputs if dp is None else M.multiply(inputs, dp[k])
            h_k = h_tm1 if rdp is None else M.multiply(h_tm1, rdp[k])
            xc = self._conv(x_k, kernels[k], self.strides, self.padding, self.dilation_rate)
            if biases[k] is not None:
                xc = M.add(xc, A.reshape(biases[k], bias_shape))
            hc = self._conv(h_k, recurrent[k], (1,) * self.rank, "same", (1,) * self.rank)
            z.append(M.add(xc, hc))
        i = self.recurrent_activation(z[0])
        f = self.recurrent_activation(z[1])
        c = M.add(M.multiply(f, c_tm1), M.multiply(i, self.activation(z[2])))
        o = self.recurrent_activation(z[3])
        h = M.multiply(o, self.activation(c))
        return h, [h, c]

    def get_initial_state(self, batch_size=None):
        shape = (batch_size,) + self._state_shape
        return [creation.zeros(shape, self._dtype), creation.zeros(shape, self._dtype)]

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate,
                "activation": serialize_activation(self.activation),
                "recurrent_activation": serialize_activation(self.recurrent_activation),
                "use_bias": self.use_bias,
                **recurrent_settings_config(self, unit_forget_bias=self.unit_forget_bias),
                "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout,
                "seed": self.seed}


class _ConvLSTM(_CellLayer):
    rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, **kwargs):
        layer_kwargs = {k: kwargs.pop(k) for k in list(kwargs)
                        if k in ("name", "trainable", "dtype", "activity_regularizer",
                                 "input_shape", "batch_input_shape", "batch_size")}
        rnn_kwargs = {k: kwargs.pop(k) for k in ("unroll", "zero_output_for_mask") if k in kwargs}
        cell = ConvLSTMCell(self.rank, filters, kernel_size, strides=strides, padding=padding,
                            data_format=data_format, dilation_rate=dilation_rate,
                            name="conv_lstm_cell", dtype=layer_kwargs.get("dtype"), **kwargs)
        RNN.__init__(self, cell, return_sequences=return_sequences, return_state=return_state,
                     go_backwards=go_backwards, stateful=stateful, **rnn_kwargs, **layer_kwargs)
        self.input_spec = InputSpec(ndim=self.rank + 3)

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        shape = tuple(TensorShape(sequences_shape))
        cell = self.cell
        first = cell.data_format == "channels_first"
        spatial = shape[3:] if first else shape[2:-1]
        out = [_conv_length(s, k, cell.padding, st, d) for s, k, st, d in zip(
            spatial, cell.kernel_size, cell.strides, cell.dilation_rate)]
        state = tuple([cell.filters] + out if first else out + [cell.filters])
        output = (shape[0], shape[1]) + state if self.return_sequences else (shape[0],) + state
        if self.return_state:
            return [TensorShape(output), TensorShape((shape[0],) + state),
                    TensorShape((shape[0],) + state)]
        return TensorShape(output)

    def compute_mask(self, inputs, mask=None):
        """Keras': the sequences' mask with ``return_sequences``, None for the two states."""
        mask = mask[0] if isinstance(mask, (list, tuple)) else mask
        out = mask if self.return_sequences else None
        return [out, None, None] if self.return_state else out

    def get_config(self):
        config = {**super().get_config(), "activity_regularizer":
                  regularizers_module.serialize(getattr(self, "activity_regularizer", None))}
        config.pop("rank", None)          # the class says it
        return config


def _layer(name, rank, doc):
    return type(name, (_ConvLSTM,), {"rank": rank, "__doc__": doc})


ConvLSTM1D = _layer("ConvLSTM1D", 1, """A convolutional LSTM over sequences of 1-D inputs
    [batch, time, steps, channels].

    >>> tf.keras.layers.ConvLSTM1D(2, 3)(tf.ones([1, 4, 6, 3])).shape
    TensorShape([1, 4, 2])
    """)
ConvLSTM2D = _layer("ConvLSTM2D", 2, """A convolutional LSTM over sequences of images
    [batch, time, rows, cols, channels].

    >>> tf.keras.layers.ConvLSTM2D(2, 3, padding="same", return_sequences=True)(
    ...     tf.ones([1, 3, 5, 5, 1])).shape
    TensorShape([1, 3, 5, 5, 2])
    """)
ConvLSTM3D = _layer("ConvLSTM3D", 3, """A convolutional LSTM over sequences of volumes
    [batch, time, depth, rows, cols, channels].

    >>> tf.keras.layers.ConvLSTM3D(2, 2)(tf.ones([1, 2, 3, 3, 3, 1])).shape
    TensorShape([1, 2, 2, 2, 2])
    """)

CLASSES = (ConvLSTM1D, ConvLSTM2D, ConvLSTM3D)
__all__ = [c.__name__ for c in CLASSES]
