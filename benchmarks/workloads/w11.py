"""W11: a small CNN's training-step gradient, float32 NHWC. x[64,28,28,1], int64 labels[64];
conv 3x3 1->16 (SAME) + bias + relu, 2x2/2 max-pool, conv 3x3 16->32 (SAME) + bias + relu,
2x2/2 max-pool, flatten (h, w, c) -> 1568, dense 1568->10, mean sparse softmax cross-entropy;
gradients of the 6 parameters (kernels HWIO).

Hand NumPy is im2col + one matmul per convolution, col2im for the input gradient, the pools
as reshapes, with its im2col and padding buffers kept between calls. JAX runs
``lax.conv_general_dilated`` and ``lax.reduce_window`` in NHWC; PyTorch runs its native NCHW
(the input and kernels laid out once outside the step, the gradients handed back as HWIO views).
"""
import sys

import numpy as np

from .. import harness

ID = "W11"
TITLE = "CNN step: conv3x3 1->16, pool, conv3x3 16->32, pool, dense 1568->10, batch 64, sparse CE"
STRESSES = "convolution and pooling forward and backward, layout, fusion of bias/relu/pool"
PARAMS = ("k1", "b1", "k2", "b2", "wd", "bd")
PEER_ROWS = ("tf.function", "tf.function(jit_compile=True)", "jax jit(grad)", "torch eager",
             "torch.compile")


def params(quick):
    return {"batch": 4, "size": 12} if quick else {"batch": 64, "size": 28}


def inputs(p):
    rng = np.random.default_rng(0)
    n, s = p["batch"], p["size"]
    flat = (s // 4) * (s // 4) * 32
    return {"x": rng.standard_normal((n, s, s, 1), dtype=np.float32),
            "labels": rng.integers(0, 10, n).astype(np.int64),
            "k1": (rng.standard_normal((3, 3, 1, 16)) * np.sqrt(2.0 / 9)).astype(np.float32),
            "b1": (0.1 * rng.standard_normal(16)).astype(np.float32),
            "k2": (rng.standard_normal((3, 3, 16, 32)) * np.sqrt(2.0 / 144)).astype(np.float32),
            "b2": (0.1 * rng.standard_normal(32)).astype(np.float32),
            "wd": (rng.standard_normal((flat, 10)) * np.sqrt(1.0 / flat)).astype(np.float32),
            "bd": np.zeros(10, np.float32)}


def tf_code(tf):
    """The workload as TensorFlow code, for any module with TensorFlow's API."""
    def w11_grads(x, labels, params):
        k1, b1, k2, b2, wd, bd = params
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.nn.conv2d(x, k1, 1, "SAME") + b1)
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")
            h = tf.nn.relu(tf.nn.conv2d(h, k2, 1, "SAME") + b2)
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")
            logits = tf.matmul(tf.reshape(h, [tf.shape(h)[0], -1]), wd) + bd
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        return tape.gradient(loss, params)
    return w11_grads


def tf_args(tf, inp):
    return (tf.constant(inp["x"]), tf.constant(inp["labels"]),
            [tf.Variable(inp[k], name=k) for k in PARAMS])


# -- hand NumPy ------------------------------------------------------------------------------
_SCRATCH = {}


def _buffer(name, shape, dtype):
    """A scratch array kept between calls (one per name, shape and dtype)."""
    key = (name, shape, np.dtype(dtype))
    buf = _SCRATCH.get(key)
    if buf is None:
        buf = _SCRATCH[key] = np.zeros(shape, dtype)
    return buf


def _im2col(name, x):
    """x [N,H,W,C] -> the 3x3 SAME windows as [N*H*W, 9*C] (a kept buffer), and the padded
    input buffer (its border stays zero)."""
    n, h, w, c = x.shape
    pad = _buffer(name + "pad", (n, h + 2, w + 2, c), x.dtype)
    pad[:, 1:-1, 1:-1] = x
    cols = _buffer(name + "cols", (n, h, w, 3, 3, c), x.dtype)
    for i in range(3):
        for j in range(3):
            cols[:, :, :, i, j] = pad[:, i:i + h, j:j + w]
    return cols.reshape(n * h * w, 9 * c)


def _col2im(name, dcols, shape):
    """The input gradient [N,H,W,C] from the windows' gradients [N*H*W, 9*C] (SAME, 3x3)."""
    n, h, w, c = shape
    dpad = _buffer(name + "dpad", (n, h + 2, w + 2, c), dcols.dtype)
    dpad[...] = 0
    d6 = dcols.reshape(n, h, w, 3, 3, c)
    for i in range(3):
        for j in range(3):
            dpad[:, i:i + h, j:j + w] += d6[:, :, :, i, j]
    return dpad[:, 1:-1, 1:-1]


def _conv_relu(name, x, k, b):
    """relu(conv(x, k) + b) by im2col + one matmul; (output [N,H,W,O], the im2col matrix)."""
    n, h, w, _ = x.shape
    cols = _im2col(name, x)
    y = cols @ k.reshape(-1, k.shape[-1])
    y += b
    np.maximum(y, 0, out=y)
    return y.reshape(n, h, w, k.shape[-1]), cols


def _pool(y):
    """2x2/2 max-pool of y [N,H,W,C] (even H, W): (pooled, the mask of each window's maxima)."""
    n, h, w, c = y.shape
    y6 = y.reshape(n, h // 2, 2, w // 2, 2, c)
    m = y6.max(axis=(2, 4))
    return m, y6 == m[:, :, None, :, None]


def _unpool_relu(g, mask, y):
    """The gradient through the pool (to the windows' maxima) and the relu before it. A tie
    inside a window is a tie at relu's zero (the inputs are random floats), where the relu's
    gradient is zero anyway: TensorFlow's first-maximum routing gives the same result."""
    n, h, w, c = y.shape
    dy = mask * g[:, :, None, :, None]
    dy = dy.reshape(n, h, w, c)
    dy *= y > 0
    return dy


def numpy_grads(inp):
    """The gradient by hand: im2col + matmul per conv, softmax minus one-hot, col2im back."""
    x, labels = inp["x"], inp["labels"]
    k1, b1, k2, b2, wd, bd = (inp[k] for k in PARAMS)
    n = x.shape[0]
    y1, cols1 = _conv_relu("c1", x, k1, b1)
    p1, mask1 = _pool(y1)
    y2, cols2 = _conv_relu("c2", p1, k2, b2)
    p2, mask2 = _pool(y2)
    flat = p2.reshape(n, -1)
    logits = flat @ wd
    logits += bd
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(n), labels] -= 1
    p /= n
    dwd, dbd = flat.T @ p, p.sum(axis=0)
    dy2 = _unpool_relu((p @ wd.T).reshape(p2.shape), mask2, y2).reshape(-1, k2.shape[-1])
    dk2, db2 = (cols2.T @ dy2).reshape(k2.shape), dy2.sum(axis=0)
    dp1 = _col2im("c2", dy2 @ k2.reshape(-1, k2.shape[-1]).T, p1.shape)
    dy1 = _unpool_relu(dp1, mask1, y1).reshape(-1, k1.shape[-1])
    dk1, db1 = (cols1.T @ dy1).reshape(k1.shape), dy1.sum(axis=0)
    return [dk1, db1, dk2, db2, dwd, dbd]


# -- peers -----------------------------------------------------------------------------------
def jax_code(jax, jnp, inp):
    dims = ("NHWC", "HWIO", "NHWC")

    def block(h, k, b):
        h = jax.lax.conv_general_dilated(h, k, (1, 1), "SAME", dimension_numbers=dims)
        h = jax.nn.relu(h + b)
        return jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def loss(params, x, labels):
        k1, b1, k2, b2, wd, bd = params
        h = block(block(x, k1, b1), k2, b2)
        logp = jax.nn.log_softmax(h.reshape(h.shape[0], -1) @ wd + bd)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))
    g = jax.jit(jax.grad(loss))
    ps = [jnp.asarray(inp[k]) for k in PARAMS]
    x, labels = jnp.asarray(inp["x"]), jnp.asarray(inp["labels"].astype(np.int32))
    return lambda: jax.block_until_ready(g(ps, x, labels))


def torch_code(torch, inp, compile):
    """NCHW, PyTorch's own layout: x and the kernels (OIHW) converted once, the flatten in
    (h, w, c) order, the kernel gradients handed back as HWIO views."""
    import torch.nn.functional as F

    def loss(x, labels, k1, b1, k2, b2, wd, bd):
        h = F.max_pool2d(torch.relu(F.conv2d(x, k1, b1, padding=1)), 2)
        h = F.max_pool2d(torch.relu(F.conv2d(h, k2, b2, padding=1)), 2)
        flat = h.permute(0, 2, 3, 1).reshape(h.shape[0], -1)
        return F.cross_entropy(flat @ wd + bd, labels)
    f = torch.compile(loss) if compile else loss
    ps = [torch.tensor(inp[k].transpose(3, 2, 0, 1).copy() if k[0] == "k" else inp[k],
                       requires_grad=True) for k in PARAMS]
    x = torch.tensor(inp["x"].transpose(0, 3, 1, 2).copy())
    labels = torch.tensor(inp["labels"])

    def step():
        g = torch.autograd.grad(f(x, labels, *ps), ps)
        return [g[0].permute(2, 3, 1, 0), g[1], g[2].permute(2, 3, 1, 0), g[3], g[4], g[5]]
    return step


def peer_targets(result):
    """Compiled tapeflow's ratio over the fastest peer's (each ratio against the hand NumPy
    of its own process): <= 1 is the issue's target. Called once the peers' rows are in."""
    ours = harness.row_of(result, harness.TAPEFLOW_COMPILED)
    peers = [r["ratio"] for r in result["contenders"]
             if r["name"] in PEER_ROWS and r.get("ok") and r.get("ratio")]
    if not peers:
        return []
    value = (ours["ratio"] / min(peers)) if ours and ours.get("ok") and ours.get("ratio") else None
    return [harness.target("compiled <= the fastest peer (ratio of ratios)", value, 1.0, "x")]


def run(opts):
    result = harness.run_standard(sys.modules[__name__], opts, tol=1e-4)
    compiled = harness.row_of(result, harness.TAPEFLOW_COMPILED) or {}
    result["targets"] = [
        harness.ratio_target(result, "compiled <= 0.39 x hand NumPy (PyTorch eager, idle machine)",
                             0.39),
        harness.target("compile <= 10 s", compiled.get("compile_s"), 10.0, "s")]
    if not opts.isolate:           # peers measured in this process: their rows are here
        result["targets"] += peer_targets(result)
    return result
