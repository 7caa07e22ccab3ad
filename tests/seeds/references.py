"""Hand-computed references shared by the eager seed tests and their in-function versions."""
import numpy as np


def grad_norm_bias_fd(layer, x, eps=1e-4):
    """d|d(sum relu(x K + b)^2)/dx| / db by central differences in float64 (seed 003's input
    gradient regularization, for a Dense relu ``layer`` with its kernel held fixed)."""
    k, b = layer.kernel.numpy().astype(np.float64), layer.bias.numpy().astype(np.float64)
    xv = x.numpy().astype(np.float64)

    def mag(bias):
        pre = xv @ k + bias
        return np.linalg.norm(((2 * np.maximum(pre, 0)) * (pre > 0)) @ k.T)

    return [(mag(b + eps * e) - mag(b - eps * e)) / (2 * eps) for e in np.eye(len(b))]
