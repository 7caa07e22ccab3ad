"""W4a: full jacobian of ``tanh(x @ W)`` w.r.t. x, x[32,64], W[64,128] -> [32,128,32,64].

Each output row depends only on the same input row, so the Jacobian is block diagonal:
the analytic answer writes ``(1 - y^2)[b, i] * W[j, i]`` on the diagonal blocks and zeros
elsewhere. A compiler that proves the row independence computes only the blocks (one
reverse seed per output column, 128, instead of one per output element, 4096).
"""
import sys

import numpy as np

from .. import harness

ID = "W4a"
TITLE = "full jacobian of tanh(x @ W), x[32,64], W[64,128] -> [32,128,32,64]"
STRESSES = "vectorized jacobian, structure (block-diagonal rows)"


def params(quick):
    return {"batch": 32, "n_in": 64, "n_out": 128}


def inputs(p):
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((p["batch"], p["n_in"]), dtype=np.float32),
            "w": (rng.standard_normal((p["n_in"], p["n_out"])) / np.sqrt(p["n_in"])).astype(np.float32)}


def tf_code(tf):
    def w4a_jacobian(x, w):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.tanh(tf.matmul(x, w))
        return tape.jacobian(y, x)
    return w4a_jacobian


def tf_args(tf, inp):
    return tf.constant(inp["x"]), tf.constant(inp["w"])


def numpy_grads(inp):
    """By hand: zeros, then the diagonal blocks d[b, i] * W[j, i]."""
    x, w = inp["x"], inp["w"]
    d = 1 - np.tanh(x @ w) ** 2                       # [B, n_out]
    b = x.shape[0]
    j = np.zeros((b, w.shape[1], b, w.shape[0]), x.dtype)
    r = np.arange(b)
    j[r, :, r, :] = d[:, :, None] * w.T[None]
    return [j]


def jax_code(jax, jnp, inp):
    f = jax.jit(jax.jacrev(lambda x, w: jnp.tanh(x @ w)))
    x, w = jnp.asarray(inp["x"]), jnp.asarray(inp["w"])
    return lambda: jax.block_until_ready(f(x, w))


def torch_code(torch, inp, compile):
    f = (lambda x, w: torch.tanh(x @ w))
    f = torch.compile(f) if compile else f
    x, w = torch.tensor(inp["x"]), torch.tensor(inp["w"])
    return lambda: torch.autograd.functional.jacobian(lambda x: f(x, w), x, vectorize=True)


def run(opts):
    result = harness.run_standard(sys.modules[__name__], opts, tol=1e-4)
    result["targets"] = [harness.ratio_target(result, "compiled <= 3 x hand NumPy", 3.0)]
    return result
