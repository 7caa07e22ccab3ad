"""Keras 3's ``SpectralNormalization`` wrapper (``keras/src/layers/normalization/
spectral_normalization.py``): in training, one power-iteration estimate of the wrapped
layer's kernel's largest singular value, and the kernel divided by it (Miyato et al. 2018)."""
from ..ops import array as A
from ..ops import linalg as L
from ..ops import math as M
from ..ops import reduce as R
from ..tracer import control
from . import initializers
from .layers import InputSpec
from .wrappers import Wrapper


def _l2_normalize_all(x, epsilon=1e-7):
    """Keras' ``ops.normalize(x, axis=None)``: ``x * min(rsqrt(sum(x^2)), 1/epsilon)``."""
    inv_norm = M.rsqrt(R.reduce_sum(M.square(x), keepdims=True))
    return M.multiply(x, M.minimum(inv_norm, M.cast(1.0 / epsilon, x.dtype)))


class SpectralNormalization(Wrapper):
    """Normalizes the ``kernel`` (or ``embeddings``) of ``layer`` by its spectral norm in each
    training call (the variable itself is assigned, as Keras does), which bounds the layer's
    Lipschitz constant (used to stabilize GAN discriminators).

    >>> layer = tf.keras.layers.SpectralNormalization(tf.keras.layers.Dense(2, kernel_initializer="ones"))
    >>> _ = layer(tf.ones((1, 2)), training=True)
    >>> np.round(layer.layer.kernel.numpy(), 4).tolist()      # ones(2, 2) has spectral norm 2
    [[0.5, 0.5], [0.5, 0.5]]
    """

    def __init__(self, layer, power_iterations=1, **kwargs):
        super().__init__(layer, **kwargs)
        if power_iterations <= 0:
            raise ValueError(f"`power_iterations` should be greater than zero. Received: "
                             f"`power_iterations={power_iterations}`")
        self.power_iterations = power_iterations

    def build(self, input_shape):
        super().build(input_shape)
        self.input_spec = InputSpec(min_ndim=1, axes={-1: input_shape[-1]})
        if hasattr(self.layer, "kernel"):
            self.kernel = self.layer.kernel
        elif hasattr(self.layer, "embeddings"):
            self.kernel = self.layer.embeddings
        else:
            raise ValueError(f"{type(self.layer).__name__} object has no attribute 'kernel' nor 'embeddings'")
        self.kernel_shape = tuple(self.kernel.shape)
        self.vector_u = self.add_weight("vector_u", shape=[1, self.kernel_shape[-1]],
                                        initializer=initializers.TruncatedNormal(stddev=0.02),
                                        dtype=self.kernel.dtype, trainable=False)
        self.built = True

    def call(self, inputs, training=False):
        if training:
            new_u, new_kernel = control.cond(
                R.reduce_all(M.equal(self.kernel.value(), 0)),
                lambda: (self.vector_u.value(), self.kernel.value()), self.normalized_weights)
            self.vector_u.assign(new_u)
            self.kernel.assign(new_kernel)
        output = self.layer(inputs)
        return M.cast(output, inputs.dtype)

    def compute_output_shape(self, input_shape):
        return self.layer.compute_output_shape(input_shape)

    def normalized_weights(self):
        """(new ``vector_u``, the kernel divided by its estimated largest singular value)."""
        weights = A.reshape(self.kernel.value(), [-1, self.kernel_shape[-1]])
        vector_u = self.vector_u.value()
        for _ in range(self.power_iterations):
            vector_v = _l2_normalize_all(L.matmul(vector_u, A.transpose(weights)))
            vector_u = _l2_normalize_all(L.matmul(vector_v, weights))
        vector_u, vector_v = M.stop_gradient(vector_u), M.stop_gradient(vector_v)
        sigma = L.matmul(L.matmul(vector_v, weights), A.transpose(vector_u))
        kernel = A.reshape(M.divide(self.kernel.value(), sigma), self.kernel_shape)
        return M.cast(vector_u, self.vector_u.dtype), M.cast(kernel, self.kernel.dtype)

    def get_config(self):
        return {**super().get_config(), "power_iterations": self.power_iterations}


CLASSES = (SpectralNormalization,)

__all__ = ["SpectralNormalization", "CLASSES"]
