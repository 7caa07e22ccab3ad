"""W4b: batch_jacobian of ``tanh(x @ W)`` w.r.t. x, x[32,64], W[64,128] -> [32,128,64].

Without the extra batch dimension: one reverse seed per output column (128), each a
[32,128] one-hot column; the analytic answer is ``(1 - y^2)[b, i] * W[j, i]``.
"""
import sys

from . import tanh_layers as layer
from .w4a import inputs, params, tf_args  # noqa: F401  (same inputs as W4a)

ID = "W4b"
TITLE = "batch_jacobian of tanh(x @ W), x[32,64], W[64,128] -> [32,128,64]"
STRESSES = "batch jacobian without the extra dimension"


def tf_code(tf):
    def w4b_batch_jacobian(x, w):
        tape, y = layer.taped_layer(tf, x, w)
        return tape.batch_jacobian(y, x)
    return w4b_batch_jacobian


def numpy_grads(inp):
    x, w = inp["x"], inp["w"]
    return [layer.slope(x, w)[:, :, None] * w.T[None]]


def jax_code(jax, jnp, inp):
    f = jax.jit(jax.vmap(jax.jacrev(lambda xr, w: jnp.tanh(xr @ w)), in_axes=(0, None)))
    return layer.jax_step(jax, jnp, f, inp["x"], inp["w"])


def torch_code(torch, inp, compile):
    from torch.func import jacrev, vmap
    f = vmap(jacrev(lambda xr, w: torch.tanh(xr @ w)), in_dims=(0, None))
    return layer.torch_step(torch, compile, f, inp["x"], inp["w"])


def run(opts):
    return layer.run_with_target(sys.modules[__name__], opts, "compiled <= 4 x hand NumPy", 4.0)
