"""What the jacobian workloads W4a, W4b and W5 share: one tanh layer ``tanh(x @ W)``.

Their inputs (float32 normals, the weight-like operand scaled by 1/sqrt(fan-in)), the layer
recorded on a tape, the slope ``1 - tanh(x @ W)^2`` the hand-written references start from,
the JAX and PyTorch steps, and the run with its one ratio target against hand NumPy.
Not a workload itself (not in ``MODULES``).
"""
import numpy as np

from .. import harness


def normal(rng, shape, fan_in=None):
    """float32 N(0, 1) values; with ``fan_in``, N(0, 1) / sqrt(fan_in) drawn in float64."""
    if fan_in is None:
        return rng.standard_normal(shape, dtype=np.float32)
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def constants(tf, inp, *names):
    """The named inputs as tensors (the arguments of every contender's ``tf_code``)."""
    return tuple(tf.constant(inp[k]) for k in names)


def taped_layer(tf, x, w):
    """``(tape, tanh(x @ w))`` with ``x`` watched: what ``jacobian``/``batch_jacobian`` ask."""
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.tanh(tf.matmul(x, w))
    return tape, y


def slope(x, w):
    """``1 - tanh(x @ w)^2``, the layer's derivative at each pre-activation (by hand)."""
    return 1 - np.tanh(x @ w) ** 2


def jax_step(jax, jnp, f, *arrays):
    """A step calling the jitted ``f`` on ``arrays`` as JAX arrays, waiting for its result."""
    args = [jnp.asarray(a) for a in arrays]
    return lambda: jax.block_until_ready(f(*args))


def torch_step(torch, compile, f, *arrays, call=None):
    """A step calling ``f`` (torch.compile'd if asked) on ``arrays`` as tensors, through
    ``call(f, *tensors)`` if given."""
    f = torch.compile(f) if compile else f
    args = [torch.tensor(a) for a in arrays]
    if call is None:
        return lambda: f(*args)
    return lambda: call(f, *args)


def run_with_target(mod, opts, text, limit):
    """The standard run of ``mod`` with one target: the compiled step's ratio to hand NumPy."""
    result = harness.run_standard(mod, opts, tol=1e-4)
    result["targets"] = [harness.ratio_target(result, text, limit)]
    return result
