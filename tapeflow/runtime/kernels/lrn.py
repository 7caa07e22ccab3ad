"""NumPy kernels of LRN and LRNGrad (TensorFlow's lrn_op.cc).

``sqr_sum[..., d]`` sums ``x[..., k]**2`` over ``|k - d| <= depth_radius``;
``LRN = x / (bias + alpha * sqr_sum) ** beta``; LRNGrad adds, for each output depth ``d`` and
each ``k`` in its window, ``g[d] * ([k == d] * norm[d] ** -beta - 2 alpha beta x[k] y[d] /
norm[d])`` to the input's gradient at ``k``. Sums run in the data's dtype.
"""
import numpy as np

from ..registry import kernel


def _norm(x, depth_radius, bias, alpha):
    x = np.asarray(x)
    sq = window_sum_exact(x * x, depth_radius)
    return (x.dtype.type(bias) + x.dtype.type(alpha) * sq).astype(x.dtype)


def window_sum_exact(v, depth_radius):
    """The window sum added term by term in index order (no cumulative-sum cancellation)."""
    depth = v.shape[-1]
    out = np.zeros_like(v)
    for d in range(depth):
        lo, hi = max(0, d - depth_radius), min(depth, d + depth_radius + 1)
        acc = np.zeros(v.shape[:-1], v.dtype)
        for k in range(lo, hi):
            acc = acc + v[..., k]
        out[..., d] = acc
    return out


@kernel("LRN")
def _lrn(x, depth_radius, bias, alpha, beta):
    x = np.asarray(x)
    norm = _norm(x, depth_radius, bias, alpha)
    return (x / norm ** x.dtype.type(beta)).astype(x.dtype)


@kernel("LRNGrad")
def _lrn_grad(grads, image, out, depth_radius, bias, alpha, beta):
    g, x, y = (np.asarray(a) for a in (grads, image, out))
    dt = x.dtype.type
    norm = _norm(x, depth_radius, bias, alpha)
    # the diagonal term, then each depth d's share spread over its window
    result = g * norm ** dt(-beta)
    share = dt(-2 * alpha * beta) * g * y / norm
    return (result + x * window_sum_exact(share, depth_radius)).astype(x.dtype)
