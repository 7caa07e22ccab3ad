"""Keras 3's recurrent layers: ``RNN`` (any cell), ``SimpleRNN``, ``LSTM``, ``GRU``, ``Masking``.

``RNN`` runs its cell over the time axis as one ``tf.while_loop`` (``rnn_loop``): the step
reads its input row by ``gather`` at the loop counter (from the end with ``go_backwards``),
carries the states and the last output, and writes each output into a TensorArray. Eagerly
that is a Python loop whose ops the tapes record; inside a ``tf.function`` it is one While
node whose gradient the loop machinery fuses with it (WhileWithGrad): no per-step Python in
a compiled step. ``unroll=True`` writes the steps out instead, as Keras does. A mask (from
``Masking`` or ``mask=``) keeps a masked step's states and repeats its previous output, as
Keras' ``backend.rnn`` does (zeros instead with ``zero_output_for_mask``).
"""
from .. import _nest
from ..ir import dtypes as D
from ..ops import array as A
from ..ops import creation
from ..ops import math as M
from ..ops import reduce as R
from ..ops.tensor_array import TensorArray
from ..runtime import stack
from ..runtime.tensor import STATE_paused, TensorShape, Variable, constant
from ..tracer.control import while_loop
from . import serialization
from .layers import Layer
from .rnn_cells import (GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells, DropoutRNNCell,
                        _sizes)


def _batch(x):
    b = x.shape[0]
    return b if b is not None else A.shape(x)[0]


def rnn_loop(step, inputs, initial_states, go_backwards=False, mask=None, unroll=False,
             zero_output_for_mask=False, return_all_outputs=True, output_size=None,
             time_major=False, output_is_state=False):
    """(last output, outputs (batch, time, ...) or None, final states) of ``step`` run over
    axis 1 of ``inputs`` (axis 0 if ``time_major``); ``step(x_t, states) -> (output,
    new_states)`` (Keras' ``backend.rnn``; outputs are in the order the steps ran; ``mask``
    is (batch, time))."""
    rank = inputs.shape.rank
    x = inputs if time_major else A.transpose(inputs, [1, 0] + list(range(2, rank)))
    if mask is not None:
        mask = A.transpose(M.cast(mask, D.bool_), [1, 0])
    steps = x.shape[0]
    batch = _batch(x[0]) if x.shape[1] is None else x.shape[1]
    flat_init = _nest.flatten(initial_states)
    n_states = len(flat_init)
    # a cell's output of one size (units), or of a shape (a convolutional cell's)
    out_shape = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,)
    zeros = creation.zeros((batch,) + out_shape, inputs.dtype)   # (folded away if unused)

    def one(t, prev, flat):
        xt = A.gather(x, t)
        out, new = step(xt, _nest.pack_sequence_as(initial_states, list(flat)))
        new = _nest.flatten(new)
        if mask is not None:
            keep = A.reshape(A.gather(mask, t), [-1] + [1] * len(out_shape))
            out = M.where(keep, out, zeros if zero_output_for_mask else prev)
            new = [M.where(keep, a, b) for a, b in zip(new, flat)]
        return out, new

    if unroll:
        if steps is None:
            raise ValueError("Cannot unroll a RNN if the time dimension is undefined.")
        prev, flat, outs = zeros, flat_init, []
        for i in range(steps):
            prev, flat = one(steps - 1 - i if go_backwards else i, prev, flat)
            outs.append(prev)
        outputs = A.stack(outs, axis=1) if return_all_outputs and outs else None
        return prev, outputs, _nest.pack_sequence_as(initial_states, list(flat))

    n = steps if steps is not None else A.shape(x)[0]
    ta = TensorArray(inputs.dtype, size=n, element_shape=TensorShape([x.shape[1], *out_shape]))

    # A cell whose output is its first state (Keras' own cells), without a mask: the last
    # output is the final first state, and the loop need not carry it a second time
    carry = not (output_is_state and mask is None)

    def body(i, *rest):
        prev, rest = (rest[0], rest[1:]) if carry else (None, rest)
        t = M.subtract(M.subtract(n, 1), i) if go_backwards else i
        out, new = one(t, prev, rest[:n_states])
        tail = [rest[n_states].write(i, out)] if return_all_outputs else []
        return [M.add(i, 1)] + ([out] if carry else []) + list(new) + tail

    loop_vars = [constant(0, D.int32)] + ([zeros] if carry else []) + list(flat_init) + (
        [ta] if return_all_outputs else [])
    out = while_loop(lambda i, *rest: M.less(i, n), body, loop_vars)
    first = 2 if carry else 1
    flat = list(out[first:first + n_states])
    states = _nest.pack_sequence_as(initial_states, flat)
    outputs = None
    if return_all_outputs:
        outputs = A.transpose(out[-1].stack(), [1, 0] + list(range(2, 2 + len(out_shape))))
    return (out[1] if carry else flat[0]), outputs, states


class RNN(Layer):
    """A recurrent layer running any cell over the time axis (Keras 3's ``RNN``).

    Args:
      cell: a cell (``call(inputs, states) -> (output, new_states)`` and ``state_size``),
        or a list of cells (stacked).
      return_sequences: return every step's output (batch, time, units), not the last one.
      return_state: also return the final states.
      go_backwards: run from the last step (outputs in that order).
      unroll: write the steps out (static time axis) instead of a loop.
      zero_output_for_mask: a masked step outputs zeros instead of the previous output.

    >>> layer = tf.keras.layers.RNN(tf.keras.layers.SimpleRNNCell(4), return_sequences=True)
    >>> layer(tf.ones((2, 5, 3))).shape
    TensorShape([2, 5, 4])
    """

    supports_masking = True

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, zero_output_for_mask=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if "call" not in dir(cell):
            raise ValueError(f"Argument `cell` should have a `call` method. Received: cell={cell}")
        if "state_size" not in dir(cell):
            raise ValueError("The RNN cell should have a `state_size` attribute (single integer "
                             "or list of integers, one integer per RNN state). "
                             f"Received: cell={cell}")
        super().__init__(**kwargs)
        object.__setattr__(self, "states", None)     # stateful: variables, not weights (Keras)
        self.cell = cell
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards, self.stateful, self.unroll = go_backwards, stateful, unroll
        self.zero_output_for_mask = zero_output_for_mask
        state_size = getattr(cell, "state_size", None)
        if not isinstance(state_size, (list, tuple, int)):
            raise ValueError("state_size must be an integer, or a list/tuple of integers "
                             "(one for each state tensor).")
        self.single_state = isinstance(state_size, int)

    @property
    def state_size(self):
        s = self.cell.state_size
        return [s] if isinstance(s, int) else list(s)

    def _output_size(self):
        size = getattr(self.cell, "output_size", None)
        return size if size is not None else _nest.flatten(self.state_size)[0]

    def build(self, sequences_shape, initial_state_shape=None):
        shape = TensorShape(sequences_shape)
        if self.unroll and shape[1] is None:
            raise ValueError("Cannot unroll a RNN if the time dimension is undefined. \n- If "
                             "using a Sequential model, specify the time dimension by passing "
                             "an `Input()` as your first layer.\n- If using the functional "
                             "API, specify the time dimension by passing a `shape` or "
                             "`batch_shape` argument to your `Input()`.")
        step_shape = (shape[0],) + tuple(shape[2:])
        if isinstance(self.cell, Layer) and not self.cell.built:
            with stack.name_scope(self.cell.name), STATE_paused():
                self.cell._build_input_shape = step_shape
                self.cell.build(step_shape)
            self.cell.built = True
        if self.stateful:
            if shape[0] is None:
                raise ValueError(f"When using `stateful=True` in a RNN, the batch size must be "
                                 f"static. Found dynamic batch size: sequence.shape="
                                 f"{tuple(shape)}")
            with STATE_paused():
                states = _nest.map_structure(
                    lambda v: Variable(v, trainable=False, name="rnn_state"),
                    self.get_initial_state(shape[0]))
            object.__setattr__(self, "states", states)
        self.built = True

    def reset_state(self):
        """Zero the states of a stateful layer."""
        if self.states is not None:
            for v in _nest.flatten(self.states):
                v.assign(M.multiply(v.read(), 0))

    reset_states = reset_state

    def get_initial_state(self, batch_size):
        fn = getattr(self.cell, "get_initial_state", None)
        if fn is not None:
            state = fn(batch_size=batch_size)
            return list(state) if isinstance(state, (list, tuple)) else [state]
        return [creation.zeros((batch_size, d), self._dtype) for d in self.state_size]

    def compute_mask(self, inputs, mask=None):
        mask = _nest.flatten(mask)[0] if mask is not None else None
        out = mask if self.return_sequences else None
        if self.return_state:
            return [out] + [None for _ in self.state_size]
        return out

    def _config_dropout(self, cell, step_input, state):
        if isinstance(cell, DropoutRNNCell):
            first = _nest.flatten(state)[0]
            cell.get_dropout_mask(step_input)
            cell.get_recurrent_dropout_mask(first)
        if isinstance(cell, StackedRNNCells):
            for c, s in zip(cell.cells, state):
                self._config_dropout(c, step_input, s)
                size = getattr(c, "output_size", None) or _sizes(c.state_size)[0]
                step_input = creation.zeros((_batch(step_input), size), step_input.dtype)

    def _reset_dropout(self, cell):
        if isinstance(cell, DropoutRNNCell):
            cell.reset_dropout_mask()
            cell.reset_recurrent_dropout_mask()
        if isinstance(cell, StackedRNNCells):
            for c in cell.cells:
                self._reset_dropout(c)

    def call(self, sequences, initial_state=None, mask=None, training=False):
        if self.unroll and sequences.shape[1] is None:
            raise ValueError("Cannot unroll a RNN if the time dimension is undefined.")
        if initial_state is None:
            if self.stateful:
                initial_state = _nest.map_structure(lambda v: v.read(), self.states)
            else:
                initial_state = self.get_initial_state(_batch(sequences))
        if self.stateful and sequences.shape[0] is not None and sequences.shape[0] != \
                _nest.flatten(self.states)[0].shape[0]:
            raise ValueError(f"If an RNN is stateful, the batch size of the input sequences "
                             f"must be the same as the batch size of the initial state. \n- "
                             f"Expected batch size: {_nest.flatten(self.states)[0].shape[0]}\n"
                             f"- Received batch size: {sequences.shape[0]}")
        if not isinstance(initial_state, (list, tuple)):
            initial_state = [initial_state]
        initial_state = _nest.map_structure(
            lambda s: M.cast(s, self._dtype) if s.dtype != self._dtype else s,
            list(initial_state))
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        self._config_dropout(self.cell, sequences[:, 0], initial_state)
        kwargs = {"training": training} if isinstance(self.cell, Layer) else {}
        # Keras' own cells take x @ kernel (+ bias) for every step in one product before the
        # loop (as cuDNN and hand-written BPTT do): the loop keeps only the recurrent part
        projected = None
        if hasattr(self.cell, "_input_projection") and sequences.shape.rank == 3:
            time_major = A.transpose(sequences, [1, 0, 2])
            projected = self.cell._input_projection(time_major, training=training)

        def step(x, states):
            if projected is not None:
                output, new_states = self.cell._projected_call(x, states, training=training)
            else:
                output, new_states = self.cell(x, states, **kwargs)
            if not isinstance(new_states, (list, tuple)):
                new_states = [new_states]
            return output, new_states

        try:
            last, outputs, states = rnn_loop(
                step, sequences if projected is None else projected, initial_state,
                go_backwards=self.go_backwards, mask=mask, unroll=self.unroll,
                zero_output_for_mask=self.zero_output_for_mask,
                return_all_outputs=self.return_sequences, output_size=self._output_size(),
                time_major=projected is not None,
                output_is_state=getattr(self.cell, "OUTPUT_IS_STATE", False))
        finally:
            self._reset_dropout(self.cell)
        if self.stateful:
            for var, value in zip(_nest.flatten(self.states), _nest.flatten(states)):
                var.assign(value)
        output = outputs if self.return_sequences else last
        if self.return_state:
            return (output, *states)
        return output

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        shape = TensorShape(sequences_shape)
        size = self._output_size()
        out = TensorShape([shape[0], shape[1], size] if self.return_sequences else [shape[0], size])
        if self.return_state:
            return [out] + [TensorShape([shape[0], s]) for s in _nest.flatten(self.state_size)]
        return out

    def _rnn_config(self):
        return {"return_sequences": self.return_sequences, "return_state": self.return_state,
                "go_backwards": self.go_backwards, "stateful": self.stateful,
                "unroll": self.unroll, "zero_output_for_mask": self.zero_output_for_mask}

    def get_config(self):
        return {**super().get_config(), **self._rnn_config(),
                "cell": serialization.serialize(self.cell)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        cell = serialization.deserialize(config.pop("cell"))
        return cls(cell, **config)


_CELL_ARGS = ("activation", "use_bias", "kernel_initializer", "recurrent_initializer",
              "bias_initializer", "kernel_regularizer", "recurrent_regularizer",
              "bias_regularizer", "kernel_constraint", "recurrent_constraint", "bias_constraint",
              "dropout", "recurrent_dropout", "seed")
_RNN_ARGS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll",
             "zero_output_for_mask")
_LAYER_ARGS = ("name", "trainable", "dtype", "input_shape", "batch_input_shape", "input_dim",
               "batch_size", "activity_regularizer")


class _CellLayer(RNN):
    """An RNN layer that makes its own cell from its arguments (SimpleRNN, LSTM, GRU)."""

    CELL = None

    def __init__(self, units, **kwargs):
        cell_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k not in _RNN_ARGS + _LAYER_ARGS}
        if "implementation" in cell_kwargs:
            cell_kwargs["implementation"] = cell_kwargs.pop("implementation")
        cell_kwargs.pop("use_cudnn", None)
        cell = self.CELL(units, name=f"{self._cell_name()}", dtype=kwargs.get("dtype"),
                         trainable=kwargs.get("trainable", True), **cell_kwargs)
        super().__init__(cell, **kwargs)

    @classmethod
    def _cell_name(cls):
        return {"SimpleRNN": "simple_rnn_cell", "LSTM": "lstm_cell", "GRU": "gru_cell"}.get(
            cls.__name__, "cell")

    def __getattr__(self, name):
        # units, activation, dropout, ...: the cell's (Keras exposes them as properties)
        if name.startswith("_") or name in ("cell",):
            raise AttributeError(name)
        cell = self.__dict__.get("cell")
        if cell is None:
            raise AttributeError(name)
        return getattr(cell, name)

    def get_config(self):
        cell = self.cell.get_config()
        for key in ("name", "trainable", "dtype"):
            cell.pop(key, None)
        return {**Layer.get_config(self), **cell, **self._rnn_config()}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("implementation", None)
        return cls(**config)


class SimpleRNN(_CellLayer):
    """A fully connected RNN whose output is fed back (Keras 3's ``SimpleRNN``).

    >>> tf.keras.layers.SimpleRNN(4)(tf.ones((2, 5, 3))).shape
    TensorShape([2, 4])
    """

    CELL = SimpleRNNCell


class LSTM(_CellLayer):
    """Long Short-Term Memory (Keras 3's ``LSTM``): weights ``kernel`` (input, 4 units),
    ``recurrent_kernel`` (units, 4 units), ``bias`` (4 units), gates i, f, c, o.

    >>> out, h, c = tf.keras.layers.LSTM(4, return_state=True)(tf.ones((2, 5, 3)))
    >>> out.shape, h.shape, c.shape
    (TensorShape([2, 4]), TensorShape([2, 4]), TensorShape([2, 4]))
    """

    CELL = LSTMCell


class GRU(_CellLayer):
    """Gated Recurrent Unit (Keras 3's ``GRU``; ``reset_after=True`` by default).

    >>> tf.keras.layers.GRU(4, return_sequences=True)(tf.ones((2, 5, 3))).shape
    TensorShape([2, 5, 4])
    """

    CELL = GRUCell


class Masking(Layer):
    """Marks the time steps whose features all equal ``mask_value`` as padding (Keras 3's).

    Outputs the inputs with masked steps zeroed, and attaches the mask (batch, time) that
    the layers after it (recurrent layers, ...) receive.

    >>> x = tf.constant([[[1.0], [0.0], [2.0]]])
    >>> tf.keras.layers.Masking()(x).numpy().ravel().tolist()
    [1.0, 0.0, 2.0]
    """

    supports_masking = True
    makes_masks = True

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self.built = True

    def compute_mask(self, inputs, mask=None):
        return R.reduce_any(M.not_equal(inputs, M.cast(self.mask_value, inputs.dtype)), axis=-1)

    def call(self, inputs):
        keep = R.reduce_any(M.not_equal(inputs, M.cast(self.mask_value, inputs.dtype)),
                            axis=-1, keepdims=True)
        return M.multiply(inputs, M.cast(keep, inputs.dtype))

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}


CLASSES = (RNN, SimpleRNN, LSTM, GRU, Masking)

__all__ = [c.__name__ for c in CLASSES] + ["rnn_loop"]
