"""W5: Hessian of ``sum(tanh(A @ w)**2)``, A[200,100], w[100] -> [100,100], by nested tapes.

``outer.jacobian(inner.gradient(f, w), w)``: reverse over reverse, seeded with the
identity. By hand: t = tanh(A w), d = 2 (1 - t^2)(1 - 3 t^2), H = A^T diag(d) A.
"""
import sys

import numpy as np

from . import tanh_layers as layer

ID = "W5"
TITLE = "Hessian of sum(tanh(A @ w)**2), A[200,100], w[100] -> [100,100]"
STRESSES = "nested tapes + jacobian, second order"


def params(quick):
    return {"m": 200, "n": 100}


def inputs(p):
    rng = np.random.default_rng(0)
    return {"a": layer.normal(rng, (p["m"], p["n"]), fan_in=p["n"]),
            "w": layer.normal(rng, p["n"])}


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
    return layer.constants(tf, inp, "a", "w")


def numpy_grads(inp):
    a, w = inp["a"], inp["w"]
    t = np.tanh(a @ w)
    d = 2 * (1 - t * t) * (1 - 3 * t * t)
    return [a.T @ (d[:, None] * a)]


def jax_code(jax, jnp, inp):
    f = jax.jit(jax.hessian(lambda w, a: jnp.sum(jnp.tanh(a @ w) ** 2)))
    return layer.jax_step(jax, jnp, f, inp["w"], inp["a"])


def torch_code(torch, inp, compile):
    from torch.func import hessian
    f = hessian(lambda w, a: torch.sum(torch.tanh(a @ w) ** 2))
    return layer.torch_step(torch, compile, f, inp["w"], inp["a"])


def run(opts):
    return layer.run_with_target(sys.modules[__name__], opts, "compiled <= 1.0 x hand NumPy", 1.0)
