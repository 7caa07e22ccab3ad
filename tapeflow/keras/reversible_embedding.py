"""Keras 3's ``ReversibleEmbedding``: an ``Embedding`` that can also project hidden states back
to vocabulary logits (``reverse=True``), through the transposed table (tied weights) or a
separate ``reverse_embeddings`` matrix (``keras/src/layers/core/reversible_embedding.py``;
its int8/int4 quantized modes are not provided)."""
from ..ops import array as A
from ..ops import linalg as L
from ..ops import math as M
from ..runtime.tensor import TensorShape
from .core_layers import Embedding
from .layers import Layer


class ReversibleEmbedding(Embedding):
    """An embedding whose call with ``reverse=True`` gives ``inputs @ embeddings.T`` (or
    ``inputs @ reverse_embeddings`` when ``tie_weights=False``), optionally soft-capped as
    ``tanh(logits / logit_soft_cap) * logit_soft_cap``.

    >>> layer = tf.keras.layers.ReversibleEmbedding(4, 2, embeddings_initializer="ones")
    >>> hidden = layer(tf.constant([[0, 3]]))
    >>> hidden.shape, layer(hidden, reverse=True).shape
    (TensorShape([1, 2, 2]), TensorShape([1, 2, 4]))
    """

    def __init__(self, input_dim, output_dim, tie_weights=True, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False,
                 reverse_dtype=None, logit_soft_cap=None, **kwargs):
        super().__init__(input_dim, output_dim, embeddings_initializer=embeddings_initializer,
                         embeddings_regularizer=embeddings_regularizer,
                         embeddings_constraint=embeddings_constraint, mask_zero=mask_zero, **kwargs)
        self.tie_weights, self.reverse_dtype, self.logit_soft_cap = tie_weights, reverse_dtype, logit_soft_cap

    def build(self, input_shape=None):
        super().build(input_shape)
        if not self.tie_weights:
            self.reverse_embeddings = self.add_weight("reverse_embeddings",
                                                      shape=[self.output_dim, self.input_dim],
                                                      initializer=self.embeddings_initializer,
                                                      dtype=self._dtype, trainable=True)

    def _autocast_inputs(self, inputs):
        # ids stay integers; hidden states (the reverse call) take the layer's dtype
        return inputs if not inputs.dtype.is_floating else Layer._autocast_inputs(self, inputs)

    def call(self, inputs, reverse=False):
        if not reverse:
            return super().call(inputs)
        kernel = A.transpose(self.embeddings) if self.tie_weights else self.reverse_embeddings.value()
        if self.reverse_dtype is not None:
            inputs, kernel = M.cast(inputs, self.reverse_dtype), M.cast(kernel, self.reverse_dtype)
        logits = L.matmul(inputs, kernel)
        if self.logit_soft_cap is not None:
            cap = self.logit_soft_cap
            logits = M.multiply(M.tanh(M.divide(logits, M.cast(cap, logits.dtype))), M.cast(cap, logits.dtype))
        return logits

    def compute_mask(self, inputs, mask=None):
        # Keras: the forward call keeps Embedding's mask_zero mask; the reverse call has none
        return None if inputs.dtype.is_floating else super().compute_mask(inputs, mask)

    def compute_output_shape(self, input_shape, reverse=False):
        shape = list(TensorShape(input_shape))
        if reverse:
            shape[-1] = self.input_dim
        else:
            shape.append(self.output_dim)
        return TensorShape(shape)

    def get_config(self):
        return {**super().get_config(), "tie_weights": self.tie_weights,
                "reverse_dtype": self.reverse_dtype, "logit_soft_cap": self.logit_soft_cap}


CLASSES = (ReversibleEmbedding,)

__all__ = ["ReversibleEmbedding", "CLASSES"]
