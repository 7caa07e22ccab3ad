"""Synthetic stand-ins for the data the keras-io guides download (MNIST), and fixed initial
weights, so tapeflow and TensorFlow 2.21 can run the guides' programs on the same numbers.

Every function takes NumPy only: the guide tests import it, and so does the script that asked
TensorFlow for the facts they quote.
"""
import numpy as np


def digits(n, seed, as_uint8=False):
    """``n`` flattened 28x28 "digits" and labels 0-9 that a linear teacher of the pixels
    decides (noisy), so a model can learn them: (x [n, 784], y [n])."""
    rng = np.random.RandomState(seed)
    teacher = np.random.RandomState(1234).randn(784, 10).astype("float32")
    pixels = rng.randint(0, 256, size=(n, 784))
    scores = (pixels / 255.0) @ teacher + 0.5 * rng.randn(n, 10)
    y = np.argmax(scores, axis=1)
    if as_uint8:        # keras.datasets.mnist.load_data()'s dtypes
        return pixels.astype("uint8"), y.astype("uint8")
    return (pixels / 255).astype("float32"), y.astype("float32")


def initial_weights(model, seed=0, scale=0.05):
    """Seeded weights for every weight of ``model``, in order (kernels uniform in +-scale,
    biases zero), for ``model.set_weights``."""
    rng = np.random.RandomState(seed)
    out = []
    for w in model.get_weights():
        w = np.asarray(w)
        out.append(np.zeros_like(w) if w.ndim == 1 else
                   rng.uniform(-scale, scale, size=w.shape).astype(w.dtype))
    return out
