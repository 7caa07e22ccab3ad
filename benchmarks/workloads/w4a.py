"""W4a: full jacobian of ``tanh(x @ W)`` w.r.t. x, x[32,64], W[64,128] -> [32,128,32,64].

Each output row depends only on the same input row, so the Jacobian is block diagonal:
the analytic answer writes ``(1 - y^2)[b, i] * W[j, i]`` on the diagonal blocks and zeros
elsewhere. A compiler that proves the row independence computes only the blocks (one
reverse seed per output column, 128, instead of one per output element, 4096).
"""
import sys

import numpy as np

from . import tanh_layers as layer

ID = "W4a"
TITLE = "full jacobian of tanh(x @ W), x[32,64], W[64,128] -> [32,128,32,64]"
STRESSES = "vectorized jacobian, structure (block-diagonal rows)"


def params(quick):
    return {"batch": 32, "n_in": 64, "n_out": 128}


def inputs(p):
    rng = np.random.default_rng(0)
    return {"x": layer.normal(rng, (p["batch"], p["n_in"])),
            "w": layer.normal(rng, (p["n_in"], p["n_out"]), fan_in=p["n_in"])}


def tf_code(tf):
    def w4a_jacobian(x, w):
        tape, y = layer.taped_layer(tf, x, w)
        return tape.jacobian(y, x)
    return w4a_jacobian


def tf_args(tf, inp):
    return layer.constants(tf, inp, "x", "w")


def numpy_grads(inp):
    """By hand: zeros, then the diagonal blocks d[b, i] * W[j, i]."""
    x, w = inp["x"], inp["w"]
    d = layer.slope(x, w)                             # [B, n_out]
    b = x.shape[0]
    j = np.zeros((b, w.shape[1], b, w.shape[0]), x.dtype)
    r = np.arange(b)
    j[r, :, r, :] = d[:, :, None] * w.T[None]
    return [j]


def jax_code(jax, jnp, inp):
    f = jax.jit(jax.jacrev(lambda x, w: jnp.tanh(x @ w)))
    return layer.jax_step(jax, jnp, f, inp["x"], inp["w"])


def torch_code(torch, inp, compile):
    return layer.torch_step(torch, compile, lambda x, w: torch.tanh(x @ w), inp["x"], inp["w"],
                            call=lambda f, x, w: torch.autograd.functional.jacobian(
                                lambda x: f(x, w), x, vectorize=True))


def run(opts):
    return layer.run_with_target(sys.modules[__name__], opts, "compiled <= 3 x hand NumPy", 3.0)
