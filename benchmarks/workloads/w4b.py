"""W4b: batch_jacobian of ``tanh(x @ W)`` w.r.t. x, x[32,64], W[64,128] -> [32,128,64].

Without the extra batch dimension: one reverse seed per output column (128), each a
[32,128] one-hot column; the analytic answer is ``(1 - y^2)[b, i] * W[j, i]``.
"""
import sys

import numpy as np

from .. import harness
from .w4a import inputs, params, tf_args  # noqa: F401  (same inputs as W4a)

ID = "W4b"
TITLE = "batch_jacobian of tanh(x @ W), x[32,64], W[64,128] -> [32,128,64]"
STRESSES = "batch jacobian without the extra dimension"


def tf_code(tf):
    def w4b_batch_jacobian(x, w):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.tanh(tf.matmul(x, w))
        return tape.batch_jacobian(y, x)
    return w4b_batch_jacobian


def numpy_grads(inp):
    x, w = inp["x"], inp["w"]
    d = 1 - np.tanh(x @ w) ** 2
    return [d[:, :, None] * w.T[None]]


def jax_code(jax, jnp, inp):
    f = jax.jit(jax.vmap(jax.jacrev(lambda xr, w: jnp.tanh(xr @ w)), in_axes=(0, None)))
    x, w = jnp.asarray(inp["x"]), jnp.asarray(inp["w"])
    return lambda: jax.block_until_ready(f(x, w))


def torch_code(torch, inp, compile):
    from torch.func import jacrev, vmap
    f = vmap(jacrev(lambda xr, w: torch.tanh(xr @ w)), in_dims=(0, None))
    f = torch.compile(f) if compile else f
    x, w = torch.tensor(inp["x"]), torch.tensor(inp["w"])
    return lambda: f(x, w)


def run(opts):
    result = harness.run_standard(sys.modules[__name__], opts, tol=1e-4)
    result["targets"] = [harness.ratio_target(result, "compiled <= 4 x hand NumPy", 4.0)]
    return result
