"""Keras 3's recurrent cells: ``SimpleRNNCell``, ``LSTMCell``, ``GRUCell``, ``StackedRNNCells``.

A cell computes one step, ``call(inputs, states, training) -> (output, new_states)``, with
Keras 3's weight layout (``kernel`` (input dim, gates x units), ``recurrent_kernel``, ``bias``;
gates in Keras' order: LSTM i, f, c, o; GRU z, r, h; a ``reset_after`` GRU has a (2, 3 units)
bias, input then recurrent), so ``set_weights`` with a TensorFlow model's weights gives its
outputs. Dropout masks are drawn once per sequence (``DropoutRNNCell``): the RNN layer asks
for them before its loop and forgets them after, so every step of one call shares them.
"""
import numpy as np

from ..ir import dtypes as D
from ..ops import array as A
from ..ops import creation
from ..ops import linalg as L
from ..ops import math as M
from .. import random as _random
from ..runtime.tensor import STATE_paused, constant
from . import constraints as constraints_module
from . import initializers, serialization
from . import regularizers as regularizers_module
from .layers import Layer, get_activation, serialize_activation
from .random_bits import SeedGenerator
from .config_dicts import class_config


# -- initializers Keras' recurrent layers name ----------------------------------------------

class Orthogonal(initializers.Initializer):
    """Keras' ``Orthogonal`` initializer (the recurrent kernels' default): Q of the QR of a
    normal matrix, signs fixed by R's diagonal, times ``gain``."""

    def __init__(self, gain=1.0, seed=None):
        self.gain, self.seed = gain, seed

    def __call__(self, shape, dtype=None, **kwargs):
        shape = tuple(int(d) for d in shape)
        rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
        cols = shape[-1]
        a = _random.normal((max(rows, cols), min(rows, cols)), dtype=D.float64,
                           seed=self.seed).numpy()
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return constant(self.gain * q.reshape(shape), dtype=D.as_dtype(dtype or "float32"))

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


def get_initializer(identifier):
    if isinstance(identifier, str) and identifier in ("orthogonal", "Orthogonal"):
        try:
            return initializers.get(identifier)
        except ValueError:
            return Orthogonal()
    if isinstance(identifier, dict) and identifier.get("class_name") == "Orthogonal":
        try:
            return initializers.get(identifier)
        except ValueError:
            return Orthogonal(**identifier.get("config", {}))
    return initializers.get(identifier)


def serialize_initializer(init):
    if type(init) is Orthogonal:
        return class_config(init, "keras.initializers")
    return initializers.serialize(init)


# -- dropout masks shared by the steps of one sequence --------------------------------------

class DropoutRNNCell:
    """Keras 3's mixin: one dropout mask per sequence (``dropout_mask_count`` of them: one per
    gate, with implementation 1), drawn by the RNN layer before its loop."""

    def _mask(self, step_input, rate):
        count = getattr(self, "dropout_mask_count", None)
        keep = 1.0 - rate

        def one():
            noise = self.seed_generator.uniform(tuple(step_input.shape), step_input.dtype)
            kept = M.cast(M.greater_equal(noise, M.cast(rate, step_input.dtype)), step_input.dtype)
            return M.multiply(kept, M.cast(1.0 / keep, step_input.dtype))
        return one() if count is None else [one() for _ in range(count)]

    def get_dropout_mask(self, step_input):
        if getattr(self, "_dropout_mask", None) is None and self.dropout > 0:
            self._dropout_mask = self._mask(step_input, self.dropout)
        return getattr(self, "_dropout_mask", None)

    def get_recurrent_dropout_mask(self, step_input):
        if getattr(self, "_recurrent_dropout_mask", None) is None and self.recurrent_dropout > 0:
            self._recurrent_dropout_mask = self._mask(step_input, self.recurrent_dropout)
        return getattr(self, "_recurrent_dropout_mask", None)

    def reset_dropout_mask(self):
        object.__setattr__(self, "_dropout_mask", None)

    def reset_recurrent_dropout_mask(self):
        object.__setattr__(self, "_recurrent_dropout_mask", None)


def _untracked(layer, name, value):
    object.__setattr__(layer, name, value)


class _Cell(Layer, DropoutRNNCell):
    """What the three cells share: arguments, weights, config."""

    GATES = 1
    OUTPUT_IS_STATE = True     # the step's output is its first new state (rnn_loop uses it)

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, seed=None, **kwargs):
        implementation = kwargs.pop("implementation", 2)
        super().__init__(**kwargs)
        if units <= 0:
            raise ValueError(f"Received an invalid value for argument `units`, expected a "
                             f"positive integer, got {units}.")
        R, C = regularizers_module.get, constraints_module.get
        self.kernel_regularizer, self.recurrent_regularizer = (R(kernel_regularizer),
                                                               R(recurrent_regularizer))
        self.bias_regularizer = R(bias_regularizer)
        self.kernel_constraint, self.recurrent_constraint = (C(kernel_constraint),
                                                             C(recurrent_constraint))
        self.bias_constraint = C(bias_constraint)
        self.units = int(units)
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = get_initializer(kernel_initializer)
        self.recurrent_initializer = get_initializer(recurrent_initializer)
        self.bias_initializer = get_initializer(bias_initializer)
        self.dropout = min(1.0, max(0.0, dropout))
        self.recurrent_dropout = min(1.0, max(0.0, recurrent_dropout))
        self.seed = seed
        self.implementation = implementation
        _untracked(self, "seed_generator", SeedGenerator(seed))
        _untracked(self, "_dropout_mask", None)
        _untracked(self, "_recurrent_dropout_mask", None)

    def _gated(self, recurrent_activation):
        """The gates' activation (LSTM, GRU); recurrent dropout needs implementation 1, which
        draws one dropout mask per gate."""
        self.recurrent_activation = get_activation(recurrent_activation)
        if self.recurrent_dropout != 0.0:
            self.implementation = 1
        if self.implementation == 1:
            self.dropout_mask_count = self.GATES

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def _bias_shape(self):
        return (self.GATES * self.units,)

    def _bias_init(self):
        return self.bias_initializer

    def build(self, input_shape):
        input_dim = input_shape[-1]
        self.kernel = self.add_weight(name="kernel", shape=(input_dim, self.GATES * self.units),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel", shape=(self.units, self.GATES * self.units),
            initializer=self.recurrent_initializer, regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint)
        self.bias = (self.add_weight(name="bias", shape=self._bias_shape(),
                                     initializer=self._bias_init(),
                                     regularizer=self.bias_regularizer,
                                     constraint=self.bias_constraint)
                     if self.use_bias else None)
        self.built = True

    def get_initial_state(self, batch_size=None):
        return [creation.zeros((batch_size, d), self._dtype) for d in _sizes(self.state_size)]

    def get_config(self):
        return {**super().get_config(), "units": self.units,
                "activation": serialize_activation(self.activation), "use_bias": self.use_bias,
                **recurrent_settings_config(self),
                "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout,
                "seed": self.seed}


def recurrent_settings_config(cell, **after_initializers):
    """The get_config entries of a recurrent cell's kernel, recurrent kernel and bias settings
    (initializers, then ``after_initializers``, regularizers, constraints: Keras' order)."""
    kinds = ("kernel", "recurrent", "bias")
    out = {f"{k}_initializer": serialize_initializer(getattr(cell, f"{k}_initializer")) for k in kinds}
    out.update(after_initializers)
    out.update({f"{k}_regularizer": regularizers_module.serialize(getattr(cell, f"{k}_regularizer"))
                for k in kinds})
    out.update({f"{k}_constraint": constraints_module.serialize(getattr(cell, f"{k}_constraint"))
                for k in kinds})
    return out


def _project(sequences, kernel):
    """``sequences @ kernel`` for every step: (T, B, F) x (F, G) -> (T, B, G), one product."""
    t, b, f = (d if d is not None else A.shape(sequences)[i]
               for i, d in enumerate(sequences.shape))
    flat = A.reshape(sequences, [-1, sequences.shape[-1]])
    return A.reshape(L.matmul(flat, kernel), [t, b, kernel.shape[-1]])


def _sizes(state_size):
    return [state_size] if isinstance(state_size, int) else list(state_size)


def _first(states):
    return states[0] if isinstance(states, (list, tuple)) else states


class SimpleRNNCell(_Cell):
    """One step of a fully connected RNN: ``h = activation(x @ kernel + h @ recurrent + b)``.

    >>> cell = tf.keras.layers.SimpleRNNCell(2, kernel_initializer="ones",
    ...                                      recurrent_initializer="zeros")
    >>> out, state = cell(tf.ones((1, 3)), [tf.zeros((1, 2))])
    >>> out.shape
    TensorShape([1, 2])
    """

    def call(self, sequence, states, training=False):
        dp_mask = self.get_dropout_mask(sequence)
        if training and dp_mask is not None:
            sequence = M.multiply(sequence, dp_mask)
        h = L.matmul(sequence, self.kernel)
        if self.bias is not None:
            h = M.add(h, self.bias)
        return self._projected_call(h, states, training)

    def _input_projection(self, sequences, training=False):
        dp_mask = self.get_dropout_mask(sequences[0])
        if training and dp_mask is not None:
            sequences = M.multiply(sequences, dp_mask)
        h = _project(sequences, self.kernel)
        return M.add(h, self.bias) if self.bias is not None else h

    def _projected_call(self, h, states, training=False):
        """The step given ``h = x @ kernel + bias`` (computed for every step at once)."""
        prev_output = _first(states)
        rec_dp_mask = self.get_recurrent_dropout_mask(prev_output)
        if training and rec_dp_mask is not None:
            prev_output = M.multiply(prev_output, rec_dp_mask)
        output = M.add(h, L.matmul(prev_output, self.recurrent_kernel))
        if self.activation is not None:
            output = self.activation(output)
        return output, ([output] if isinstance(states, (list, tuple)) else output)


class LSTMCell(_Cell):
    """One LSTM step (Hochreiter 1997), Keras 3's: gates i, f, c, o; states ``[h, c]``.

    >>> cell = tf.keras.layers.LSTMCell(2)
    >>> h, (h2, c) = cell(tf.ones((1, 3)), [tf.zeros((1, 2)), tf.zeros((1, 2))])
    >>> h.shape, c.shape
    (TensorShape([1, 2]), TensorShape([1, 2]))
    """

    GATES = 4

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         recurrent_initializer=recurrent_initializer,
                         bias_initializer=bias_initializer, **kwargs)
        self.unit_forget_bias = unit_forget_bias
        self._gated(recurrent_activation)

    @property
    def state_size(self):
        return [self.units, self.units]

    def _bias_init(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        units, init = self.units, self.bias_initializer

        def forget_ones(shape, dtype=None, **kwargs):
            return A.concat([init((units,), dtype=dtype), creation.ones((units,), dtype),
                             init((2 * units,), dtype=dtype)], 0)
        return forget_ones

    def call(self, inputs, states, training=False):
        h_tm1, c_tm1 = states[0], states[1]
        u = self.units
        if self.implementation == 1:
            dp = self.get_dropout_mask(inputs) if training and 0 < self.dropout < 1 else None
            rdp = (self.get_recurrent_dropout_mask(h_tm1)
                   if training and 0 < self.recurrent_dropout < 1 else None)
            zs = []
            for k in range(4):
                x_k = inputs if dp is None else M.multiply(inputs, dp[k])
                h_k = h_tm1 if rdp is None else M.multiply(h_tm1, rdp[k])
                z = M.add(L.matmul(x_k, self.kernel[:, k * u:(k + 1) * u]),
                          L.matmul(h_k, self.recurrent_kernel[:, k * u:(k + 1) * u]))
                if self.bias is not None:
                    z = M.add(z, self.bias[k * u:(k + 1) * u])
                zs.append(z)
        else:
            if training and 0 < self.dropout < 1:
                inputs = M.multiply(inputs, self.get_dropout_mask(inputs))
            z = M.add(L.matmul(inputs, self.kernel), L.matmul(h_tm1, self.recurrent_kernel))
            if self.bias is not None:
                z = M.add(z, self.bias)
            zs = A.split(z, 4, axis=1)
        return self._gates(zs, c_tm1)

    def _input_projection(self, sequences, training=False):
        if self.implementation == 1:
            return None
        if training and 0 < self.dropout < 1:
            sequences = M.multiply(sequences, self.get_dropout_mask(sequences[0]))
        z = _project(sequences, self.kernel)
        return M.add(z, self.bias) if self.bias is not None else z

    def _projected_call(self, zx, states, training=False):
        """The step given ``zx = x @ kernel + bias`` (computed for every step at once)."""
        z = M.add(zx, L.matmul(states[0], self.recurrent_kernel))
        return self._gates(A.split(z, 4, axis=1), states[1])

    def _gates(self, zs, c_tm1):
        i = self.recurrent_activation(zs[0])
        f = self.recurrent_activation(zs[1])
        c = M.add(M.multiply(f, c_tm1), M.multiply(i, self.activation(zs[2])))
        o = self.recurrent_activation(zs[3])
        h = M.multiply(o, self.activation(c))
        return h, [h, c]

    def get_config(self):
        return {**super().get_config(),
                "recurrent_activation": serialize_activation(self.recurrent_activation),
                "unit_forget_bias": self.unit_forget_bias}


class GRUCell(_Cell):
    """One GRU step (Cho 2014), Keras 3's: gates z, r, h; ``reset_after`` applies the reset
    gate after the recurrent product (the default, cuDNN's form, a (2, 3 units) bias).

    >>> cell = tf.keras.layers.GRUCell(2)
    >>> h, _ = cell(tf.ones((1, 3)), [tf.zeros((1, 2))])
    >>> h.shape
    TensorShape([1, 2])
    """

    GATES = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", reset_after=True, **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         recurrent_initializer=recurrent_initializer,
                         bias_initializer=bias_initializer, **kwargs)
        self.reset_after = reset_after
        self._gated(recurrent_activation)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def call(self, inputs, states, training=False):
        h_tm1 = _first(states)
        u = self.units
        input_bias = recurrent_bias = None
        if self.bias is not None:
            if self.reset_after:
                input_bias, recurrent_bias = self.bias[0], self.bias[1]
            else:
                input_bias = self.bias
        if self.implementation == 1:
            dp = self.get_dropout_mask(inputs) if training and 0 < self.dropout < 1 else None
            rdp = (self.get_recurrent_dropout_mask(h_tm1)
                   if training and 0 < self.recurrent_dropout < 1 else None)
            xs, hs = [], []
            for k in range(3):
                x_k = inputs if dp is None else M.multiply(inputs, dp[k])
                x = L.matmul(x_k, self.kernel[:, k * u:(k + 1) * u])
                if input_bias is not None:
                    x = M.add(x, input_bias[k * u:(k + 1) * u])
                xs.append(x)
                hs.append(h_tm1 if rdp is None else M.multiply(h_tm1, rdp[k]))
            rz = L.matmul(hs[0], self.recurrent_kernel[:, :u])
            rr = L.matmul(hs[1], self.recurrent_kernel[:, u:2 * u])
            if self.reset_after and recurrent_bias is not None:
                rz = M.add(rz, recurrent_bias[:u])
                rr = M.add(rr, recurrent_bias[u:2 * u])
            z = self.recurrent_activation(M.add(xs[0], rz))
            r = self.recurrent_activation(M.add(xs[1], rr))
            if self.reset_after:
                rh = L.matmul(hs[2], self.recurrent_kernel[:, 2 * u:])
                if recurrent_bias is not None:
                    rh = M.add(rh, recurrent_bias[2 * u:])
                rh = M.multiply(r, rh)
            else:
                rh = L.matmul(M.multiply(r, hs[2]), self.recurrent_kernel[:, 2 * u:])
            x_h = xs[2]
        else:
            if training and 0 < self.dropout < 1:
                inputs = M.multiply(inputs, self.get_dropout_mask(inputs))
            matrix_x = L.matmul(inputs, self.kernel)
            if input_bias is not None:
                matrix_x = M.add(matrix_x, input_bias)
            return self._projected_call(matrix_x, states, training)
        hh = self.activation(M.add(x_h, rh))
        h = M.add(M.multiply(z, h_tm1), M.multiply(M.subtract(1.0, z), hh))
        return h, ([h] if isinstance(states, (list, tuple)) else h)

    def _input_projection(self, sequences, training=False):
        if self.implementation == 1:
            return None
        if training and 0 < self.dropout < 1:
            sequences = M.multiply(sequences, self.get_dropout_mask(sequences[0]))
        matrix_x = _project(sequences, self.kernel)
        if self.bias is not None:
            matrix_x = M.add(matrix_x, self.bias[0] if self.reset_after else self.bias)
        return matrix_x

    def _projected_call(self, matrix_x, states, training=False):
        """The step given ``x @ kernel + input bias`` (computed for every step at once)."""
        h_tm1 = _first(states)
        u = self.units
        recurrent_bias = self.bias[1] if self.bias is not None and self.reset_after else None
        x_z, x_r, x_h = A.split(matrix_x, 3, axis=-1)
        if self.reset_after:
            inner = L.matmul(h_tm1, self.recurrent_kernel)
            if recurrent_bias is not None:
                inner = M.add(inner, recurrent_bias)
        else:
            inner = L.matmul(h_tm1, self.recurrent_kernel[:, :2 * u])
        z = self.recurrent_activation(M.add(x_z, inner[:, :u]))
        r = self.recurrent_activation(M.add(x_r, inner[:, u:2 * u]))
        if self.reset_after:
            rh = M.multiply(r, inner[:, 2 * u:])
        else:
            rh = L.matmul(M.multiply(r, h_tm1), self.recurrent_kernel[:, 2 * u:])
        hh = self.activation(M.add(x_h, rh))
        h = M.add(M.multiply(z, h_tm1), M.multiply(M.subtract(1.0, z), hh))
        return h, ([h] if isinstance(states, (list, tuple)) else h)

    def get_config(self):
        return {**super().get_config(),
                "recurrent_activation": serialize_activation(self.recurrent_activation),
                "reset_after": self.reset_after}


class StackedRNNCells(Layer):
    """Cells run one after another in each step, as one cell (Keras 3's).

    >>> cells = tf.keras.layers.StackedRNNCells([tf.keras.layers.SimpleRNNCell(3),
    ...                                          tf.keras.layers.SimpleRNNCell(2)])
    >>> cells.state_size, cells.output_size
    ([3, 2], 2)
    """

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        for cell in cells:
            if "call" not in dir(cell):
                raise ValueError(f"All cells must have a `call` method. Received cell without a "
                                 f"`call` method: {cell}")
            if "state_size" not in dir(cell):
                raise ValueError(f"All cells must have a `state_size` attribute. Received cell "
                                 f"without a `state_size`: {cell}")
        self.cells = list(cells)

    @property
    def state_size(self):
        return [c.state_size for c in self.cells]

    @property
    def output_size(self):
        last = self.cells[-1]
        if getattr(last, "output_size", None) is not None:
            return last.output_size
        return _sizes(last.state_size)[0]

    def get_initial_state(self, batch_size=None):
        out = []
        for cell in self.cells:
            fn = getattr(cell, "get_initial_state", None)
            if fn is not None:
                out.append(fn(batch_size=batch_size))
            else:
                sizes = _sizes(cell.state_size)
                zeros = [creation.zeros((batch_size, d), self._dtype) for d in sizes]
                out.append(zeros if len(sizes) > 1 or not isinstance(cell.state_size, int)
                           else zeros[0])
        return out

    def build(self, input_shape):
        shape = tuple(input_shape)
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                with STATE_paused():
                    cell._build_input_shape = shape
                    cell.build(shape)
                cell.built = True
            size = getattr(cell, "output_size", None) or _sizes(cell.state_size)[0]
            shape = shape[:-1] + (size,)
        self.built = True

    def call(self, inputs, states, training=False, **kwargs):
        return self._run(self.cells, inputs, states, training)

    def _input_projection(self, sequences, training=False):
        """The first cell's input projection (see RNN.call), if it has one."""
        first = self.cells[0]
        if not hasattr(first, "_input_projection"):
            return None
        return first._input_projection(sequences, training=training)

    def _projected_call(self, projected, states, training=False):
        state = states[0]
        nested = isinstance(state, (list, tuple))
        out, new = self.cells[0]._projected_call(projected, list(state) if nested else [state],
                                                 training=training)
        if isinstance(new, (list, tuple)) and not nested and len(new) == 1:
            new = new[0]
        out, rest = self._run(self.cells[1:], out, states[1:], training)
        return out, [new] + rest

    @staticmethod
    def _run(cells, inputs, states, training):
        new_states = []
        for cell, state in zip(cells, states):
            nested = isinstance(state, (list, tuple))
            state = list(state) if nested else [state]
            kw = {"training": training} if isinstance(cell, Layer) else {}
            inputs, state = cell(inputs, state, **kw)
            if isinstance(state, (list, tuple)) and not nested and len(state) == 1:
                state = state[0]
            new_states.append(state)
        return inputs, new_states

    def get_config(self):
        return {**super().get_config(), "cells": [serialization.serialize(c) for c in self.cells]}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        cells = [serialization.deserialize(c) for c in config.pop("cells")]
        return cls(cells, **config)


CELLS = (SimpleRNNCell, LSTMCell, GRUCell, StackedRNNCells)

__all__ = [c.__name__ for c in CELLS] + ["DropoutRNNCell", "Orthogonal"]
