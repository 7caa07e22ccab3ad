"""Keras 3's attention layers: ``EinsumDense``, ``MultiHeadAttention``, ``GroupedQueryAttention``
(``GroupQueryAttention``), ``Attention`` and ``AdditiveAttention``.

Each follows Keras 3's computation step for step, since masked rows differ between its
paths: ``MultiHeadAttention`` on rank-3 inputs without dropout or returned scores is Keras'
``dot_product_attention`` (logits scaled after the product, masked logits set to
-0.7 x float32 max, a fully masked row softmaxes to uniform), otherwise the einsum path with
Keras' masked ``Softmax`` (masked logits set to -1e9 and the masked weights zeroed after).
Weights: ``query``, ``key``, ``value``, ``attention_output`` ``EinsumDense`` sublayers, kernel
then bias each, Keras' shapes (query kernel (dim, heads, key_dim), ...).
"""
import math
import re
import string

import numpy as np

from ..ir import dtypes as D
from ..ops import array as A
from ..ops import creation
from ..ops import linalg as L
from ..ops import math as M
from ..ops import nn as N
from ..ops import reduce as R
from ..runtime import stack
from ..runtime.tensor import STATE_paused, TensorShape
from . import constraints as constraints_module
from . import initializers, masking
from . import regularizers as regularizers_module
from .core_layers import Dropout
from .layers import Layer, get_activation, serialize_activation, weight_settings_config
from .random_bits import SeedGenerator

_DPA_NEGATIVE = -0.7 * 3.38953e38      # Keras' dot_product_attention fill (float32)
_SOFTMAX_NEGATIVE = -1e9               # Keras' Softmax layer fill


def _no_extras(what, **kwargs):
    given = [k for k, v in kwargs.items() if v is not None]
    if given:
        raise NotImplementedError(f"tapeflow's {what} has no {', '.join(given)} yet")


def masked_softmax(x, mask=None, axis=-1):
    """Keras 3's ``Softmax`` layer: masked entries get -1e9 before and 0 after (so a fully
    masked row is zeros); ``axis`` may be a tuple (``exp(x - logsumexp)``)."""
    if mask is not None:
        if not mask.dtype.is_bool:
            mask = M.greater(mask, M.cast(0.5, mask.dtype))
        x = M.where(mask, x, M.cast(_SOFTMAX_NEGATIVE, x.dtype))
    if isinstance(axis, (tuple, list)) and len(axis) > 1:
        out = M.exp(M.subtract(x, R.reduce_logsumexp(x, axis=list(axis), keepdims=True)))
    else:
        out = N.softmax(x, axis=axis[0] if isinstance(axis, (tuple, list)) else axis)
    if mask is not None:
        out = M.where(mask, out, M.cast(0.0, out.dtype))
    return out


# -- EinsumDense ---------------------------------------------------------------------------

def _analyze_einsum(equation, bias_axes, input_shape, output_shape):
    """(kernel shape, bias shape or None, full output shape), as Keras 3 derives them."""
    dot = re.sub(r"\.\.\.", "0", equation)
    for pattern, left in (("([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)", False),
                          ("0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)", True),
                          ("([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0", False)):
        match = re.match(pattern, dot)
        if match:
            break
    else:
        raise ValueError(f"Invalid einsum equation '{equation}'. Equations must be in the form "
                         f"[X],[Y]->[Z], ...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")
    input_spec, weight_spec, output_spec = match.group(1), match.group(2), match.group(3)
    input_shape = list(input_shape)
    elided = len(input_shape) - len(input_spec)
    output_shape = [output_shape] if isinstance(output_shape, int) else list(output_shape)
    output_shape.insert(0, input_shape[0])
    if elided > 0 and left:
        for i in range(1, elided):
            output_shape.insert(1, input_shape[i])
    elif elided > 0:
        for i in range(len(input_shape) - elided, len(input_shape)):
            output_shape.append(input_shape[i])
    if left:
        input_map = {d: (i + elided) - len(input_shape) for i, d in enumerate(input_spec)}
        output_map = {d: i + elided for i, d in enumerate(output_spec)}
    else:
        input_map = {d: i for i, d in enumerate(input_spec)}
        output_map = {d: i for i, d in enumerate(output_spec)}
    for d in input_spec:
        if d in output_map:
            want = output_shape[output_map[d]]
            if want is not None and want != input_shape[input_map[d]]:
                raise ValueError(f"Input shape and output shape do not match at shared "
                                 f"dimension '{d}'. Input shape is {input_shape[input_map[d]]}, "
                                 f"and output shape is {want}.")
    for d in output_spec:
        if d not in input_spec and d not in weight_spec:
            raise ValueError(f"Dimension '{d}' was specified in the output '{output_spec}' but "
                             f"has no corresponding dim in the input spec '{input_spec}' or "
                             f"weight spec '{output_spec}'")
    kernel = []
    for d in weight_spec:
        if d in output_map:
            kernel.append(output_shape[output_map[d]])
        elif d in input_map:
            kernel.append(input_shape[input_map[d]])
        else:
            raise ValueError(f"Weight dimension '{d}' did not have a match in either the input "
                             f"spec '{input_spec}' or the output spec '{output_spec}'. For this "
                             f"layer, the weight must be fully specified.")
    bias = None
    if bias_axes is not None:
        offset = elided if left else 0
        sizes = {c: output_shape[i + offset] for i, c in enumerate(output_spec)}
        for c in bias_axes:
            if c not in output_spec:
                raise ValueError(f"Bias dimension '{c}' was requested, but is not part of the "
                                 f"output spec '{output_spec}'")
        first = min(output_spec.find(c) for c in bias_axes)
        bias = [sizes[c] if c in bias_axes else 1 for c in output_spec[first:]]
        if not left:
            bias += [1] * max(elided, 0)
    return kernel, bias, output_shape


class EinsumDense(Layer):
    """A dense layer of any einsum contraction: ``activation(einsum(equation, x, kernel) + b)``.

    >>> layer = tf.keras.layers.EinsumDense("ab,bc->ac", output_shape=4, bias_axes="c")
    >>> layer(tf.ones((2, 3))).shape
    TensorShape([2, 4])
    >>> layer.kernel.shape, layer.bias.shape
    (TensorShape([3, 4]), TensorShape([4]))
    """

    def __init__(self, equation, output_shape, activation=None, bias_axes=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, lora_rank=None, lora_alpha=None, **kwargs):
        super().__init__(**kwargs)
        _no_extras("EinsumDense", lora_rank=lora_rank)
        self.kernel_regularizer = regularizers_module.get(kernel_regularizer)
        self.bias_regularizer = regularizers_module.get(bias_regularizer)
        self.kernel_constraint = constraints_module.get(kernel_constraint)
        self.bias_constraint = constraints_module.get(bias_constraint)
        self.equation = equation
        self.partial_output_shape = ((output_shape,) if isinstance(output_shape, int)
                                     else tuple(output_shape))
        self.bias_axes = bias_axes
        self.activation = get_activation(activation)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)

    def build(self, input_shape):
        kernel, bias, self.full_output_shape = _analyze_einsum(
            self.equation, self.bias_axes, TensorShape(input_shape), self.partial_output_shape)
        self.kernel = self.add_weight(name="kernel", shape=tuple(kernel),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = (self.add_weight(name="bias", shape=tuple(bias),
                                     initializer=self.bias_initializer,
                                     regularizer=self.bias_regularizer,
                                     constraint=self.bias_constraint)
                     if bias is not None else None)
        self.built = True

    def call(self, inputs, training=None):
        x = L.einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            x = M.add(x, self.bias)
        if self.activation is not None:
            x = self.activation(x)
        return x

    def compute_output_shape(self, input_shape):
        return TensorShape(_analyze_einsum(self.equation, self.bias_axes,
                                           TensorShape(input_shape),
                                           self.partial_output_shape)[2])

    def get_config(self):
        return {**super().get_config(), "output_shape": list(self.partial_output_shape),
                "equation": self.equation, "activation": serialize_activation(self.activation),
                "bias_axes": self.bias_axes, **weight_settings_config(self)}


# -- MultiHeadAttention --------------------------------------------------------------------

def _fresh(init):
    """A copy of an initializer from its config (Keras gives each sublayer its own)."""
    try:
        return initializers.get(initializers.serialize(init))
    except (NotImplementedError, TypeError, ValueError):
        return init


def _letter(i):
    return string.ascii_lowercase[i]


def _proj_equation(free_dims, bound_dims, output_dims):
    inp = kern = out = bias = ""
    offset = 0
    for i in range(free_dims):
        inp += _letter(i + offset)
        out += _letter(i + offset)
    offset += free_dims
    for i in range(bound_dims):
        inp += _letter(i + offset)
        kern += _letter(i + offset)
    offset += bound_dims
    for i in range(output_dims):
        kern += _letter(i + offset)
        out += _letter(i + offset)
        bias += _letter(i + offset)
    return f"{inp},{kern}->{out}", bias, len(out)


def _output_shape(rank, known):
    return [None] * (rank - len(known)) + list(known)


def _attention_equations(rank, attn_axes):
    target = "".join(_letter(i) for i in range(rank))
    batch_dims = tuple(np.delete(range(rank), attn_axes + (rank - 1,)))
    offset, source = rank, ""
    for i in range(rank):
        if i in batch_dims or i == rank - 1:
            source += target[i]
        else:
            source += _letter(offset)
            offset += 1
    product = "".join([target[i] for i in batch_dims] + [target[i] for i in attn_axes]
                      + [source[i] for i in attn_axes])
    return f"{source},{target}->{product}", f"{product},{source}->{target}", len(product)


def _causal_mask(q_len, v_len):
    """(1, q_len, v_len): row >= column (Keras' cumsum-of-ones comparison)."""
    rows = A.reshape(creation.range(q_len, dtype=D.int32), (1, q_len, 1))
    cols = A.reshape(creation.range(v_len, dtype=D.int32), (1, 1, v_len))
    return M.greater_equal(rows, cols)


def _seq_len(x):
    n = x.shape[1]
    return n if n is not None else A.shape(x)[1]


class MultiHeadAttention(Layer):
    """Multi-head attention (Vaswani et al. 2017), Keras 3's layer.

    ``layer(query, value, key=None, attention_mask=None, return_attention_scores=False,
    training=None, use_causal_mask=False)``. Projections are ``EinsumDense`` sublayers
    (``query``/``key`` to ``(num_heads, key_dim)``, ``value`` to ``(num_heads, value_dim)``,
    ``attention_output`` back to the query's last dim or ``output_shape``); ``attention_axes``
    chooses the axes attended over (by default all but batch, heads and features).

    >>> mha = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)
    >>> out, scores = mha(tf.ones((1, 4, 5)), tf.ones((1, 6, 5)), return_attention_scores=True)
    >>> out.shape, scores.shape
    (TensorShape([1, 4, 5]), TensorShape([1, 2, 4, 6]))
    """

    supports_masking = True

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, attention_axes=None, sliding_window=None,
                 flash_attention=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 use_gate=False, seed=None, **kwargs):
        if not isinstance(num_heads, int) or num_heads <= 0:
            raise ValueError(f"Received an invalid value for argument `num_heads`, expected a "
                             f"positive integer. Received: num_heads={num_heads}")
        if not isinstance(key_dim, int) or key_dim <= 0:
            raise ValueError(f"Received an invalid value for argument `key_dim`, expected a "
                             f"positive integer. Received: key_dim={key_dim}")
        if value_dim is not None and (not isinstance(value_dim, int) or value_dim <= 0):
            raise ValueError(f"Received an invalid value for argument `value_dim`, expected a "
                             f"positive integer or `None`. Received: value_dim={value_dim}")
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self._kernel_regularizer = regularizers_module.get(kernel_regularizer)
        self._bias_regularizer = regularizers_module.get(bias_regularizer)
        self._kernel_constraint = constraints_module.get(kernel_constraint)
        self._bias_constraint = constraints_module.get(bias_constraint)
        if flash_attention:
            raise ValueError("Flash attention is not supported in tensorflow backend.")
        self._num_heads, self._key_dim = num_heads, key_dim
        self._value_dim = value_dim if value_dim else key_dim
        self._dropout, self._use_bias, self._use_gate = dropout, use_bias, use_gate
        if output_shape:
            output_shape = (output_shape,) if isinstance(output_shape, int) else tuple(output_shape)
        self._output_shape = output_shape
        self._kernel_initializer = initializers.get(kernel_initializer)
        self._bias_initializer = initializers.get(bias_initializer)
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        elif attention_axes and not isinstance(attention_axes, (list, tuple)):
            raise ValueError(f"`attention_axes` must be an int, list, or tuple.Received: "
                             f"attention_axes={attention_axes}")
        self._attention_axes = attention_axes
        if sliding_window is not None and (not isinstance(sliding_window, int)
                                           or sliding_window <= 0):
            raise ValueError(f"`sliding_window` must be `None` or a positive integer. "
                             f"Received: sliding_window={sliding_window}")
        self._sliding_window = sliding_window
        self.seed = seed
        self._inverse_sqrt_key_dim = 1.0 / math.sqrt(float(self._key_dim))

    num_heads = property(lambda self: self._num_heads)
    key_dim = property(lambda self: self._key_dim)
    value_dim = property(lambda self: self._value_dim)
    dropout = property(lambda self: self._dropout)
    use_bias = property(lambda self: self._use_bias)
    attention_axes = property(lambda self: self._attention_axes)

    def _dense(self, equation, shape, bias_axes, name, activation=None):
        return EinsumDense(equation, output_shape=shape, activation=activation,
                           bias_axes=bias_axes if self._use_bias else None, name=name,
                           kernel_initializer=_fresh(self._kernel_initializer),
                           bias_initializer=_fresh(self._bias_initializer),
                           kernel_regularizer=self._kernel_regularizer,
                           bias_regularizer=self._bias_regularizer,
                           kernel_constraint=self._kernel_constraint,
                           bias_constraint=self._bias_constraint,
                           dtype=self.dtype)

    def _build_sub(self, layer, shape):
        with stack.name_scope(layer.name), STATE_paused():
            layer._build_input_shape = TensorShape(shape)
            layer.build(TensorShape(shape))
        layer.built = True

    def _head_projection(self, shape, dim, name, activation=None):
        """A built EinsumDense from inputs of ``shape`` to ``num_heads`` heads of ``dim``,
        and the rank of its output plus one (``_proj_equation``'s)."""
        eq, bias, rank = _proj_equation(len(shape) - 1, 1, 2)
        layer = self._dense(eq, _output_shape(rank - 1, [self._num_heads, dim]), bias, name,
                            activation=activation)
        self._build_sub(layer, shape)
        return layer, rank

    def build(self, query_shape, value_shape, key_shape=None):
        query_shape, value_shape = tuple(query_shape), tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        if value_shape[1:-1] != key_shape[1:-1]:
            raise ValueError(f"All dimensions of `value` and `key`, except the last one, must "
                             f"be equal. Received: value_shape={value_shape} and "
                             f"key_shape={key_shape}")
        self._query_dense, _ = self._head_projection(query_shape, self._key_dim, "query")
        self._key_dense, _ = self._head_projection(key_shape, self._key_dim, "key")
        if self._use_gate:
            self._gate_dense, _ = self._head_projection(query_shape, self._value_dim, "gate",
                                                        activation="sigmoid")
        self._value_dense, rank = self._head_projection(value_shape, self._value_dim, "value")
        self._build_attention(rank)
        out_shape = self._output_shape or [query_shape[-1]]
        eq, bias, orank = _proj_equation(len(query_shape) - 1, 2, len(out_shape))
        self._output_dense = self._dense(eq, _output_shape(orank - 1, out_shape), bias,
                                         "attention_output")
        dense_in = list(self._query_dense.compute_output_shape(query_shape))
        dense_in[-1] = self._value_dim
        self._build_sub(self._output_dense, dense_in)
        self.built = True

    def _build_attention(self, rank):
        if self._attention_axes is None:
            self._attention_axes = tuple(range(1, rank - 2))
        else:
            self._attention_axes = tuple(a if a >= 0 else (rank - 1) + a
                                         for a in self._attention_axes)
        self._dot_product_equation, self._combine_equation, scores_rank = \
            _attention_equations(rank, self._attention_axes)
        self._norm_axes = tuple(range(scores_rank - len(self._attention_axes), scores_rank))
        self._dropout_layer = Dropout(rate=self._dropout, seed=self.seed)

    query_dense = property(lambda self: self._query_dense)
    key_dense = property(lambda self: self._key_dense)
    value_dense = property(lambda self: self._value_dense)
    output_dense = property(lambda self: self._output_dense)

    def _maybe_build(self, inputs):
        pass       # built in call: it needs the value's shape too

    def _masked_softmax(self, scores, attention_mask=None):
        if attention_mask is not None:
            axis = -len(self._attention_axes) * 2 - 1
            for _ in range(len(scores.shape) - len(attention_mask.shape)):
                attention_mask = A.expand_dims(attention_mask, axis)
        return masked_softmax(scores, attention_mask, axis=self._norm_axes)

    def _compute_attention(self, query, key, value, attention_mask=None, training=None,
                           return_attention_scores=False, use_causal_mask=False):
        dot_product = not (self._dropout > 0.0 or return_attention_scores
                           or len(query.shape) != 4)
        if dot_product:
            logits = L.einsum("btnh,bsnh->bnts", query, key)
            logits = M.multiply(logits, M.cast(self._inverse_sqrt_key_dim, logits.dtype))
            mask = None
            if use_causal_mask and attention_mask is None:
                mask = A.expand_dims(_causal_mask(_seq_len(query), _seq_len(key)), 0)
            elif attention_mask is not None:
                mask = M.cast(attention_mask, D.bool_)
                for _ in range(4 - len(mask.shape)):
                    mask = A.expand_dims(mask, -len(self._attention_axes) * 2 - 1)
                if use_causal_mask:
                    causal = A.expand_dims(_causal_mask(_seq_len(query), _seq_len(key)), 0)
                    mask = M.logical_and(mask, causal)
            if mask is not None:
                logits = M.where(mask, logits, M.cast(_DPA_NEGATIVE, logits.dtype))
            probs = N.softmax(logits, axis=-1)
            return L.einsum("bnts,bsnh->btnh", probs, value), None
        if use_causal_mask:
            causal = _causal_mask(_seq_len(query), _seq_len(value))
            attention_mask = causal if attention_mask is None else M.logical_and(
                M.cast(attention_mask, D.bool_), causal)
        query = M.multiply(query, M.cast(self._inverse_sqrt_key_dim, query.dtype))
        scores = L.einsum(self._dot_product_equation, key, query)
        scores = self._masked_softmax(scores, attention_mask)
        final = self._dropout_layer(scores, training=training) if self._dropout > 0.0 else scores
        return L.einsum(self._combine_equation, final, value), scores

    def _attention_mask(self, query, value, query_mask=None, value_mask=None, key_mask=None,
                        attention_mask=None, use_causal_mask=False):
        auto = None
        if query_mask is not None:
            auto = A.expand_dims(M.cast(query_mask, D.bool_), -1)
        for m in (value_mask, key_mask):
            if m is not None:
                m = A.expand_dims(M.cast(m, D.bool_), -2)
                auto = m if auto is None else M.logical_and(auto, m)
        if use_causal_mask:
            m = _causal_mask(_seq_len(query), _seq_len(value))
            auto = m if auto is None else M.logical_and(auto, m)
        if self._sliding_window is not None:
            rows = A.reshape(creation.range(_seq_len(query), dtype=D.int32), (1, -1, 1))
            cols = A.reshape(creation.range(_seq_len(value), dtype=D.int32), (1, 1, -1))
            m = M.less(M.abs(M.subtract(rows, cols)), self._sliding_window)
            auto = m if auto is None else M.logical_and(auto, m)
        if attention_mask is not None:
            attention_mask = M.cast(attention_mask, D.bool_)
        if auto is not None:
            attention_mask = auto if attention_mask is None else M.logical_and(attention_mask,
                                                                               auto)
        return attention_mask

    def _attend(self, query, value, key, query_mask, value_mask, key_mask, attention_mask,
                training, return_attention_scores, use_causal_mask):
        """(output, scores) once the inputs' masks are known: the projections, the attention
        and the output projection (``call`` here and in GroupedQueryAttention)."""
        if not self.built:
            with STATE_paused():
                self.build(query.shape, value.shape, key.shape)
        causal_only = (use_causal_mask and query_mask is None and value_mask is None
                       and key_mask is None and attention_mask is None
                       and self._sliding_window is None)
        if causal_only:
            attention_mask = None
        else:
            attention_mask = self._attention_mask(query, value, query_mask, value_mask,
                                                  key_mask, attention_mask, use_causal_mask)
        gate = self._gate_dense(query) if self._use_gate else None
        q = self._query_dense(query)
        k = self._key_dense(key)
        v = self._value_dense(value)
        output, scores = self._compute_attention(q, k, v, attention_mask, training,
                                                 return_attention_scores, causal_only)
        if gate is not None:
            output = M.multiply(output, gate)
        return self._output_dense(output), scores

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, return_attention_scores=False, training=None,
             use_causal_mask=False):
        if key is None:
            key = value
        query_mask = masking.get_mask(query)       # Keras 3 reads the query's own mask
        value_mask = value_mask if value_mask is not None else masking.get_mask(value)
        key_mask = key_mask if key_mask is not None else (
            masking.get_mask(key) if key is not value else None)
        output, scores = self._attend(query, value, key, query_mask, value_mask, key_mask,
                                      attention_mask, training, return_attention_scores,
                                      use_causal_mask)
        if query_mask is not None:
            masking.set_mask(output, query_mask)
        if return_attention_scores:
            return output, scores
        return output

    def compute_output_shape(self, query_shape, value_shape, key_shape=None):
        query_shape = tuple(query_shape)
        if self._output_shape:
            query_shape = query_shape[:-1] + tuple(self._output_shape)
        return TensorShape(query_shape)

    def get_config(self):
        axes = self._attention_axes
        return {**super().get_config(), "num_heads": self._num_heads, "key_dim": self._key_dim,
                "value_dim": self._value_dim, "dropout": self._dropout,
                "use_bias": self._use_bias, "use_gate": self._use_gate,
                "output_shape": self._output_shape,
                "attention_axes": list(axes) if isinstance(axes, tuple) else axes,
                "sliding_window": self._sliding_window,
                **weight_settings_config(self, "_", activity=True), "seed": self.seed}


class GroupedQueryAttention(MultiHeadAttention):
    """Grouped-query attention (Ainslie et al. 2023), Keras 3's: ``num_query_heads`` query
    heads share ``num_key_value_heads`` key/value heads (each repeated to its group).

    >>> gqa = tf.keras.layers.GroupQueryAttention(head_dim=2, num_query_heads=4,
    ...                                           num_key_value_heads=2)
    >>> gqa(tf.ones((1, 3, 5)), tf.ones((1, 6, 5))).shape
    TensorShape([1, 3, 5])
    """

    def __init__(self, head_dim, num_query_heads, num_key_value_heads, dropout=0.0,
                 use_bias=True, sliding_window=None, flash_attention=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, use_gate=False, seed=None,
                 **kwargs):
        if num_query_heads % num_key_value_heads != 0:
            raise ValueError("`num_query_heads` must be divisible by `num_key_value_heads`.")
        super().__init__(num_heads=num_query_heads, key_dim=head_dim, dropout=dropout,
                         use_bias=use_bias, sliding_window=sliding_window,
                         flash_attention=flash_attention, kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         use_gate=use_gate, seed=seed, **kwargs)
        self.head_dim, self.num_query_heads = head_dim, num_query_heads
        self.num_key_value_heads = num_key_value_heads
        self.num_repeats = num_query_heads // num_key_value_heads
        self.sliding_window = sliding_window

    def build(self, query_shape, value_shape, key_shape=None):
        key_shape = tuple(value_shape if key_shape is None else key_shape)
        self.feature_dim = query_shape[-1]
        h, u, kv = self.head_dim, self.num_query_heads, self.num_key_value_heads
        self._query_dense = self._dense("bqm,muh->bquh", (None, u, h), "uh", "query")
        self._build_sub(self._query_dense, query_shape)
        self._key_dense = self._dense("bkm,mvh->bkvh", (None, kv, h), "vh", "key")
        self._build_sub(self._key_dense, key_shape)
        if self._use_gate:
            self._gate_dense = self._dense("bqm,muh->bquh", (None, u, h), "uh", "gate",
                                           activation="sigmoid")
            self._build_sub(self._gate_dense, query_shape)
        self._value_dense = self._dense("bkm,mvh->bkvh", (None, kv, h), "vh", "value")
        self._build_sub(self._value_dense, tuple(value_shape))
        self._dropout_layer = Dropout(rate=self._dropout, seed=self.seed)
        self._attention_axes = (1,)
        self._norm_axes = -1
        self._dot_product_equation = "bquh,bkuh->buqk"
        self._combine_equation = "buqk,bkuh->bquh"
        self._output_dense = self._dense("bquh,uhm->bqm", (None, self.feature_dim), "m",
                                         "attention_output")
        self._build_sub(self._output_dense, (None, None, u, h))
        self.built = True

    def _repeat(self, x):
        if self.num_repeats == 1:
            return x
        shape = [d if d is not None else A.shape(x)[i] for i, d in enumerate(x.shape)]
        x = A.tile(A.expand_dims(x, 3), [1, 1, 1, self.num_repeats, 1])
        return A.reshape(x, [shape[0], shape[1], shape[2] * self.num_repeats, shape[3]])

    def _compute_attention(self, query, key, value, attention_mask=None, training=None,
                           return_attention_scores=False, use_causal_mask=False):
        key, value = self._repeat(key), self._repeat(value)
        if not (self._dropout > 0.0 or return_attention_scores):
            return super()._compute_attention(query, key, value, attention_mask, training,
                                              False, use_causal_mask)
        if use_causal_mask:
            causal = _causal_mask(_seq_len(query), _seq_len(value))
            attention_mask = causal if attention_mask is None else M.logical_and(
                M.cast(attention_mask, D.bool_), causal)
        query = M.multiply(query, M.cast(self._inverse_sqrt_key_dim, query.dtype))
        scores = L.einsum(self._dot_product_equation, query, key)
        if attention_mask is not None:
            for _ in range(len(scores.shape) - len(attention_mask.shape)):
                attention_mask = A.expand_dims(attention_mask, -3)
        scores = masked_softmax(scores, attention_mask, axis=-1)
        final = self._dropout_layer(scores, training=training) if self._dropout > 0.0 else scores
        return L.einsum(self._combine_equation, final, value), scores

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, return_attention_scores=False, training=None,
             use_causal_mask=False):
        if key is None:
            key, key_given = value, False
        else:
            key_given = True
        # Keras 3's Layer.__call__ fills each `<input>_mask` argument from that input's mask
        query_mask = query_mask if query_mask is not None else masking.get_mask(query)
        value_mask = value_mask if value_mask is not None else masking.get_mask(value)
        if key_mask is None and key_given:
            key_mask = masking.get_mask(key)
        output, scores = self._attend(query, value, key, query_mask, value_mask, key_mask,
                                      attention_mask, training, return_attention_scores,
                                      use_causal_mask)
        if return_attention_scores:
            return output, scores
        return output

    def get_config(self):
        base = Layer.get_config(self)
        return {**base, "head_dim": self.head_dim, "num_query_heads": self.num_query_heads,
                "num_key_value_heads": self.num_key_value_heads, "use_bias": self._use_bias,
                "use_gate": self._use_gate, "sliding_window": self._sliding_window,
                "dropout": self._dropout,
                **weight_settings_config(self, "_", activity=True), "seed": self.seed}


# -- Attention, AdditiveAttention ----------------------------------------------------------

class Attention(Layer):
    """Dot-product attention (Luong), Keras 3's: ``layer([query, value(, key)], mask=None,
    return_attention_scores=False, use_causal_mask=False)``; ``score_mode="concat"`` scores
    ``sum(tanh(q + k))``.

    >>> tf.keras.layers.Attention()([tf.ones((1, 2, 3)), tf.ones((1, 4, 3))]).shape
    TensorShape([1, 2, 3])
    """

    supports_masking = True

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.use_scale, self.score_mode = use_scale, score_mode
        self.dropout, self.seed = dropout, seed
        if dropout > 0:
            object.__setattr__(self, "seed_generator", SeedGenerator(seed))
        if score_mode not in ("dot", "concat"):
            raise ValueError(f"Invalid value for argument score_mode. Expected one of "
                             f"{{'dot', 'concat'}}. Received: score_mode={score_mode}")

    def _validate(self, inputs, mask=None):
        name = type(self).__name__
        if not isinstance(inputs, list):
            raise ValueError(f"{name} layer must be called on a list of inputs, namely "
                             f"[query, value] or [query, value, key]. Received: inputs={inputs}.")
        if len(inputs) < 2 or len(inputs) > 3:
            raise ValueError(f"{name} layer accepts inputs list of length 2 or 3, namely "
                             f"[query, value] or [query, value, key]. Received length: "
                             f"{len(inputs)}.")
        if mask is not None:
            if not isinstance(mask, list):
                raise ValueError(f"{name} layer mask must be a list, namely [query_mask, "
                                 f"value_mask]. Received: mask={mask}.")
            if len(mask) < 2 or len(mask) > 3:
                raise ValueError(f"{name} layer accepts mask list of length 2 or 3. "
                                 f"Received: inputs={inputs}, mask={mask}.")

    def build(self, input_shape):
        self._validate(list(input_shape))
        self.scale = self.concat_score_weight = None
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(name="concat_score_weight", shape=(),
                                                       initializer="ones")
        self.built = True

    def _scores(self, query, key):
        if self.score_mode == "dot":
            scores = L.matmul(query, key, transpose_b=True)
            if self.scale is not None:
                scores = M.multiply(scores, self.scale)
            return scores
        q = A.expand_dims(query, -2)
        k = A.expand_dims(key, -3)
        s = M.add(q, k)
        if self.scale is not None:
            s = M.multiply(self.scale, s)
        return M.multiply(self.concat_score_weight, R.reduce_sum(M.tanh(s), axis=-1))

    def _apply_scores(self, scores, value, scores_mask=None, training=False):
        if scores_mask is not None:
            padding = M.logical_not(scores_mask)
            if len(padding.shape) == 2:
                padding = A.expand_dims(padding, -2)
            scores = M.where(padding, M.subtract(scores, M.cast(1.0e9, scores.dtype)), scores)
        weights = N.softmax(scores, axis=-1)
        if training and self.dropout > 0:
            noise = self.seed_generator.uniform(tuple(weights.shape), weights.dtype)
            keep = M.cast(M.greater_equal(noise, M.cast(self.dropout, weights.dtype)),
                          weights.dtype)
            weights = M.multiply(M.divide(weights, M.cast(1 - self.dropout, weights.dtype)),
                                 keep)
        return L.matmul(weights, value), weights

    def call(self, inputs, mask=None, training=False, return_attention_scores=False,
             use_causal_mask=False):
        self._validate(inputs, mask)
        q, v = inputs[0], inputs[1]
        k = inputs[2] if len(inputs) > 2 else v
        q_mask = mask[0] if mask else None
        v_mask = mask[1] if mask else None
        scores = self._scores(q, k)
        scores_mask = v_mask
        if use_causal_mask:
            shape = scores.shape
            causal = _causal_mask(shape[-2], shape[-1])
            scores_mask = causal if v_mask is None else M.logical_and(
                A.expand_dims(v_mask, -2), causal)
        output, weights = self._apply_scores(scores, v, scores_mask, training)
        if q_mask is not None:
            output = M.where(A.expand_dims(q_mask, -1), output, M.cast(0, output.dtype))
        if return_attention_scores:
            return output, weights
        return output

    def compute_mask(self, inputs, mask=None):
        if mask is None or mask[0] is None:
            return None
        return mask[0]

    def compute_output_shape(self, input_shape):
        q, v = list(input_shape[0]), list(input_shape[1])
        return TensorShape(q[:-1] + [v[-1]])

    def get_config(self):
        return {**super().get_config(), "use_scale": self.use_scale,
                "score_mode": self.score_mode, "dropout": self.dropout, "seed": self.seed}


class AdditiveAttention(Attention):
    """Additive (Bahdanau) attention, Keras 3's: scores ``sum(scale * tanh(q + k))`` with a
    learned ``scale`` vector (``use_scale=True``).

    >>> tf.keras.layers.AdditiveAttention()([tf.ones((1, 2, 3)), tf.ones((1, 4, 3))]).shape
    TensorShape([1, 2, 3])
    """

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape):
        self._validate(list(input_shape))
        dim = input_shape[0][-1]
        self.scale = None
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=[dim],
                                         initializer="glorot_uniform")
        self.built = True

    def _scores(self, query, key):
        s = M.tanh(M.add(A.expand_dims(query, -2), A.expand_dims(key, -3)))
        if self.use_scale:
            s = M.multiply(self.scale, s)
        return R.reduce_sum(s, axis=-1)

    def get_config(self):
        config = super().get_config()
        del config["score_mode"]
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)


GroupQueryAttention = GroupedQueryAttention    # TensorFlow's name for Keras' class

CLASSES = (EinsumDense, MultiHeadAttention, GroupedQueryAttention, Attention, AdditiveAttention)

__all__ = [c.__name__ for c in CLASSES] + ["GroupQueryAttention", "masked_softmax"]
