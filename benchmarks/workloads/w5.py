"""W5: Hessian of ``sum(tanh(A @ w)**2)``, A[200,100], w[100] -> [100,100], by nested tapes.

``outer.jacobian(inner.gradient(f, w), w)``: reverse over reverse, seeded with the
identity. By hand: t = tanh(A w), d = 2 (1 - t^2)(1 - 3 t^2), H = A^T diag(d) A.
"""
import sys

import numpy as np

from .. import harness

ID = "W5"
TITLE = "Hessian of sum(tanh(A @ w)**2), A[200,100], w[100] -> [100,100]"
STRESSES = "nested tapes + jacobian, second order"


def params(quick):
    return {"m": 200, "n": 100}


def inputs(p):
    rng = np.random.default_rng(0)
    return {"a": (rng.standard_normal((p["m"], p["n"])) / np.sqrt(p["n"])).astype(np.float32),
            "w": rng.standard_normal(p["n"], dtype=np.float32)}


def tf_code(tf):
    def w5_hessian(a, w):
        with tf.GradientTape() as outer:
            outer.watch(w)
            with tf.GradientTape() as inner:
                inner.watch(w)
                loss = tf.reduce_sum(tf.tanh(tf.linalg.matvec(a, w)) ** 2)
            g = inner.gradient(loss, w)
        return outer.jacobian(g, w)
    return w5_hessian


def tf_args(tf, inp):
    return tf.constant(inp["a"]), tf.constant(inp["w"])


def numpy_grads(inp):
    a, w = inp["a"], inp["w"]
    t = np.tanh(a @ w)
    d = 2 * (1 - t * t) * (1 - 3 * t * t)
    return [a.T @ (d[:, None] * a)]


def jax_code(jax, jnp, inp):
    f = jax.jit(jax.hessian(lambda w, a: jnp.sum(jnp.tanh(a @ w) ** 2)))
    a, w = jnp.asarray(inp["a"]), jnp.asarray(inp["w"])
    return lambda: jax.block_until_ready(f(w, a))


def torch_code(torch, inp, compile):
    from torch.func import hessian
    f = hessian(lambda w, a: torch.sum(torch.tanh(a @ w) ** 2))
    f = torch.compile(f) if compile else f
    a, w = torch.tensor(inp["a"]), torch.tensor(inp["w"])
    return lambda: f(w, a)


def run(opts):
    result = harness.run_standard(sys.modules[__name__], opts, tol=1e-4)
    result["targets"] = [harness.ratio_target(result, "compiled <= 1.0 x hand NumPy", 1.0)]
    return result
