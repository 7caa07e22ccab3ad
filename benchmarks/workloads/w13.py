"""W13: a Gaussian process's negative log marginal likelihood, gradient w.r.t. its kernel
hyperparameters (ARD RBF: 3 log lengthscales, log signal variance, log noise), N=400 in 3-D.

Decompositions and solvers with gradients, float64: ``cholesky``, ``cholesky_solve`` and
``log(diag_part(L))``. Hand NumPy/SciPy is the analytic formula
``dnll/dθ = -½ tr((ααᵀ − K⁻¹) ∂K/∂θ)`` with one Cholesky factor (LAPACK potrf/potrs).
"""
import sys

import numpy as np

from .. import harness

ID = "W13"
TITLE = "GP negative log marginal likelihood, ARD RBF, N=400 in 3-D, grad wrt 5 log-hyperparameters"
STRESSES = "decompositions and solvers with gradients, float64"
HALF_LOG_2PI = 0.5 * np.log(2 * np.pi)


def params(quick):
    return {"n": 60 if quick else 400, "d": 3}


def inputs(p):
    rng = np.random.default_rng(0)
    x = rng.uniform(-2.0, 2.0, (p["n"], p["d"]))
    y = np.sin(x @ np.array([1.0, -0.5, 0.25])) + 0.1 * rng.standard_normal(p["n"])
    theta = np.log(np.array([0.8, 1.2, 1.5, 1.3, 0.05]))   # lengthscales, signal var, noise var
    return {"x": x, "y": y, "theta": theta}


def tf_code(tf):
    """The workload as TensorFlow code, for any module with TensorFlow's API."""
    def w13_grad(x, y, theta):
        n = x.shape[0]
        with tf.GradientTape() as tape:
            tape.watch(theta)
            xs = x / tf.exp(theta[:3])
            sq = tf.reduce_sum(xs * xs, axis=1)
            d2 = tf.expand_dims(sq, 1) + tf.expand_dims(sq, 0) - 2.0 * tf.matmul(xs, xs, transpose_b=True)
            k = tf.exp(theta[3]) * tf.exp(-0.5 * d2) + tf.exp(theta[4]) * tf.eye(n, dtype=x.dtype)
            chol = tf.linalg.cholesky(k)
            yc = tf.expand_dims(y, 1)
            alpha = tf.linalg.cholesky_solve(chol, yc)
            nll = (0.5 * tf.reduce_sum(yc * alpha) + tf.reduce_sum(tf.math.log(tf.linalg.diag_part(chol)))
                   + n * HALF_LOG_2PI)
        return tape.gradient(nll, theta)
    return w13_grad


def tf_args(tf, inp):
    return tuple(tf.constant(inp[k]) for k in ("x", "y", "theta"))


def numpy_grads(inp):
    """-½ tr(W ∂K/∂θ), W = ααᵀ − K⁻¹, from one Cholesky factor (SciPy's cho_factor/cho_solve;
    NumPy's cholesky and inv where SciPy is not installed, as in a peer's own venv)."""
    x, y, theta = inp["x"], inp["y"], inp["theta"]
    n = x.shape[0]
    ell, sf2, sn2 = np.exp(theta[:3]), np.exp(theta[3]), np.exp(theta[4])
    xs = x / ell
    sq = np.sum(xs * xs, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (xs @ xs.T)
    kf = sf2 * np.exp(-0.5 * d2)
    k = kf + sn2 * np.eye(n)
    try:
        from scipy.linalg import cho_factor, cho_solve
    except ImportError:
        l_inv = np.linalg.inv(np.linalg.cholesky(k))
        k_inv = l_inv.T @ l_inv
        alpha = k_inv @ y
    else:
        factor = cho_factor(k, lower=True, check_finite=False)
        alpha = cho_solve(factor, y, check_finite=False)
        k_inv = cho_solve(factor, np.eye(n), check_finite=False)
    w = np.outer(alpha, alpha) - k_inv
    wk = w * kf
    grad = np.empty(5)
    for j in range(3):
        diff = xs[:, j, None] - xs[None, :, j]
        grad[j] = -0.5 * np.sum(wk * diff * diff)
    grad[3] = -0.5 * np.sum(wk)
    grad[4] = -0.5 * sn2 * np.trace(w)
    return [grad]


def jax_code(jax, jnp, inp):
    jax.config.update("jax_enable_x64", True)

    def nll(theta, x, y):
        xs = x / jnp.exp(theta[:3])
        sq = jnp.sum(xs * xs, axis=1)
        d2 = sq[:, None] + sq[None, :] - 2.0 * xs @ xs.T
        k = jnp.exp(theta[3]) * jnp.exp(-0.5 * d2) + jnp.exp(theta[4]) * jnp.eye(x.shape[0])
        chol = jnp.linalg.cholesky(k)
        alpha = jax.scipy.linalg.cho_solve((chol, True), y)
        return 0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diag(chol))) + x.shape[0] * HALF_LOG_2PI
    g = jax.jit(jax.grad(nll))
    args = [jnp.asarray(inp[k]) for k in ("theta", "x", "y")]
    return lambda: jax.block_until_ready(g(*args))


def torch_code(torch, inp, compile):
    def nll(theta, x, y):
        xs = x / torch.exp(theta[:3])
        sq = torch.sum(xs * xs, dim=1)
        d2 = sq[:, None] + sq[None, :] - 2.0 * xs @ xs.T
        k = torch.exp(theta[3]) * torch.exp(-0.5 * d2) + torch.exp(theta[4]) * torch.eye(
            x.shape[0], dtype=x.dtype)
        chol = torch.linalg.cholesky(k)
        alpha = torch.cholesky_solve(y[:, None], chol)
        return 0.5 * torch.sum(y[:, None] * alpha) + torch.sum(torch.log(torch.diagonal(chol))) \
            + x.shape[0] * HALF_LOG_2PI
    f = torch.compile(nll) if compile else nll
    theta = torch.tensor(inp["theta"], requires_grad=True)
    x, y = torch.tensor(inp["x"]), torch.tensor(inp["y"])
    return lambda: torch.autograd.grad(f(theta, x, y), (theta,))


def run(opts):
    result = harness.run_standard(sys.modules[__name__], opts, tol=1e-8)
    result["targets"] = [harness.ratio_target(result, "compiled <= 1.5 x hand NumPy/SciPy", 1.5)]
    return result
