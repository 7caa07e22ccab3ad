"""W12: an LSTM's training-step gradient. x[B,T,F], one LSTM layer of H units (gates i, f, g,
o; W[F,4H], U[H,4H], b[4H]), the last h into a dense layer H -> 10, mean sparse softmax
cross-entropy; gradients of W, U, b and the dense kernel and bias.

Written three ways for tapeflow: a cell in ``for t in tf.range(T)`` (``tf_code``, which the
peers run too), the same cell in ``tf.while_loop``, and ``keras.layers.LSTM`` with the same
weights (``extra_contenders``). Hand NumPy is backpropagation through time with x·W for all
steps in one matmul. JAX runs ``lax.scan``, PyTorch ``nn.LSTM`` (its gate order is Keras').
"""
import sys

import numpy as np

from .. import harness

ID = "W12"
TITLE = "LSTM training step, B=32 T=50 F=64 H=128, dense 128->10, sparse CE"
STRESSES = "a recurrent layer's loop and its gradient (keras.layers.LSTM and hand cells)"


def params(quick):
    return {"B": 4, "T": 6, "F": 5, "H": 8} if quick else {"B": 32, "T": 50, "F": 64, "H": 128}


def inputs(p):
    rng = np.random.default_rng(0)
    B, T, F, H = p["B"], p["T"], p["F"], p["H"]
    return {"x": rng.standard_normal((B, T, F), dtype=np.float32),
            "y": rng.integers(0, 10, B).astype(np.int32),
            "W": (rng.standard_normal((F, 4 * H)) / np.sqrt(F)).astype(np.float32),
            "U": (rng.standard_normal((H, 4 * H)) / np.sqrt(H)).astype(np.float32),
            "b": (0.1 * rng.standard_normal(4 * H)).astype(np.float32),
            "Wd": (rng.standard_normal((H, 10)) / np.sqrt(H)).astype(np.float32),
            "bd": np.zeros(10, np.float32)}


NAMES = ("x", "y", "W", "U", "b", "Wd", "bd")


def tf_args(tf, inp):
    return tuple(tf.constant(inp[k]) for k in NAMES)


def _cell(tf, xw_t, h, c, U):
    z = xw_t + h @ U
    i, f, g, o = tf.split(z, 4, axis=1)
    c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
    return tf.sigmoid(o) * tf.tanh(c), c


def _loss(tf, h, y, Wd, bd):
    logits = h @ Wd + bd
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))


def tf_code(tf):
    """The cell in ``for t in tf.range(T)``, x·W + b for every step before the loop."""
    def w12_grads(x, y, W, U, b, Wd, bd):
        with tf.GradientTape() as tape:
            tape.watch([W, U, b, Wd, bd])
            xt = tf.transpose(x, [1, 0, 2])
            xw = tf.reshape(tf.reshape(xt, [-1, x.shape[2]]) @ W + b,
                            [x.shape[1], x.shape[0], W.shape[1]])
            h = tf.zeros((x.shape[0], U.shape[0]), x.dtype)
            c = tf.zeros((x.shape[0], U.shape[0]), x.dtype)
            for t in tf.range(tf.shape(x)[1]):
                h, c = _cell(tf, tf.gather(xw, t), h, c, U)
            loss = _loss(tf, h, y, Wd, bd)
        return tape.gradient(loss, [W, U, b, Wd, bd])
    return w12_grads


def tf_code_while_loop(tf):
    def w12_grads(x, y, W, U, b, Wd, bd):
        with tf.GradientTape() as tape:
            tape.watch([W, U, b, Wd, bd])
            xt = tf.transpose(x, [1, 0, 2])
            xw = tf.reshape(tf.reshape(xt, [-1, x.shape[2]]) @ W + b,
                            [x.shape[1], x.shape[0], W.shape[1]])
            zeros = tf.zeros((x.shape[0], U.shape[0]), x.dtype)

            def body(t, h, c):
                h, c = _cell(tf, tf.gather(xw, t), h, c, U)
                return t + 1, h, c
            _, h, _ = tf.while_loop(lambda t, h, c: t < tf.shape(x)[1], body,
                                    (tf.constant(0), zeros, zeros))
            loss = _loss(tf, h, y, Wd, bd)
        return tape.gradient(loss, [W, U, b, Wd, bd])
    return w12_grads


def keras_step(tf, inp):
    """``keras.layers.LSTM`` + ``Dense`` with the workload's weights: (step, args)."""
    lstm, dense = tf.keras.layers.LSTM(inp["U"].shape[0]), tf.keras.layers.Dense(10)
    x = tf.constant(inp["x"])
    dense(lstm(x))
    for var, key in zip(lstm.weights + dense.weights, ("W", "U", "b", "Wd", "bd")):
        var.assign(inp[key])
    weights = lstm.trainable_weights + dense.trainable_weights

    def w12_grads(x, y):
        with tf.GradientTape() as tape:
            logits = dense(lstm(x))
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        return tape.gradient(loss, weights)
    return w12_grads, (x, tf.constant(inp["y"]))


def extra_contenders(inp, opts):
    """tapeflow compiled on the ``tf.while_loop`` form and through ``keras.layers.LSTM``."""
    if not opts.tapeflow:
        return []

    def while_form():
        import tapeflow
        fn = tapeflow.function(tf_code_while_loop(tapeflow), jit_compile=True)
        args = tf_args(tapeflow, inp)
        fn(*args)
        return lambda: fn(*args)

    def keras_form():
        import tapeflow
        step, args = keras_step(tapeflow, inp)
        fn = tapeflow.function(step, jit_compile=True)
        fn(*args)
        return lambda: fn(*args)
    return [harness.Contender("tapeflow compiled (tf.while_loop)", while_form, compiled=True),
            harness.Contender("tapeflow compiled (keras.layers.LSTM)", keras_form,
                              compiled=True)]


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def numpy_grads(inp):
    """BPTT by hand, x·W for all steps in one matmul, in the inputs' precision."""
    x, y, W, U, b, Wd, bd = (inp[k] for k in NAMES)
    B, T, F = x.shape
    H = U.shape[0]
    xt = x.transpose(1, 0, 2).reshape(T * B, F)
    xw = (xt @ W).reshape(T, B, 4 * H) + b
    h, c = np.zeros((B, H), x.dtype), np.zeros((B, H), x.dtype)
    hs, cs, gates = [], [], []
    for t in range(T):
        z = xw[t] + h @ U
        i, f = _sigmoid(z[:, :H]), _sigmoid(z[:, H:2 * H])
        g, o = np.tanh(z[:, 2 * H:3 * H]), _sigmoid(z[:, 3 * H:])
        hs.append(h)
        cs.append(c)
        c = f * c + i * g
        h = o * np.tanh(c)
        gates.append((i, f, g, o, c))
    logits = h @ Wd + bd
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(B), y] -= 1
    dlogits = p / B
    dWd, dbd = h.T @ dlogits, dlogits.sum(0)
    dh, dc = dlogits @ Wd.T, np.zeros_like(c)
    dU = np.zeros_like(U)
    dz_all = np.empty((T, B, 4 * H), x.dtype)
    for t in reversed(range(T)):
        i, f, g, o, ct = gates[t]
        tc = np.tanh(ct)
        do = dh * tc
        dc = dc + dh * o * (1 - tc * tc)
        dz = np.concatenate([dc * g * i * (1 - i), dc * cs[t] * f * (1 - f),
                             dc * i * (1 - g * g), do * o * (1 - o)], 1)
        dz_all[t] = dz
        dU += hs[t].T @ dz
        dh, dc = dz @ U.T, dc * f
    dz_flat = dz_all.reshape(T * B, 4 * H)
    return [xt.T @ dz_flat, dU, dz_flat.sum(0), dWd, dbd]


def jax_code(jax, jnp, inp):
    def loss(W, U, b, Wd, bd, x, y):
        xw = jnp.einsum("btf,fg->tbg", x, W) + b
        H = U.shape[0]

        def step(carry, xw_t):
            h, c = carry
            z = xw_t + h @ U
            i, f, g, o = jnp.split(z, 4, axis=1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            return (jax.nn.sigmoid(o) * jnp.tanh(c), c), None
        zeros = jnp.zeros((x.shape[0], H), x.dtype)
        (h, _), _ = jax.lax.scan(step, (zeros, zeros), xw)
        logits = h @ Wd + bd
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], 1))
    g = jax.jit(jax.grad(loss, argnums=(0, 1, 2, 3, 4)))
    args = [jnp.asarray(inp[k]) for k in ("W", "U", "b", "Wd", "bd", "x", "y")]
    return lambda: jax.block_until_ready(g(*args))


def torch_code(torch, inp, compile):
    F, H4 = inp["W"].shape
    lstm = torch.nn.LSTM(F, H4 // 4, batch_first=True)
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(torch.from_numpy(inp["W"].T.copy()))
        lstm.weight_hh_l0.copy_(torch.from_numpy(inp["U"].T.copy()))
        lstm.bias_ih_l0.copy_(torch.from_numpy(inp["b"]))
        lstm.bias_hh_l0.zero_()
    Wd = torch.tensor(inp["Wd"], requires_grad=True)
    bd = torch.tensor(inp["bd"], requires_grad=True)
    x, y = torch.from_numpy(inp["x"]), torch.from_numpy(inp["y"]).long()

    def loss_fn():
        out, _ = lstm(x)
        return torch.nn.functional.cross_entropy(out[:, -1] @ Wd + bd, y)
    loss_fn = torch.compile(loss_fn) if compile else loss_fn
    params = [lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, Wd, bd]

    def step():
        grads = torch.autograd.grad(loss_fn(), params)
        return [grads[0].T, grads[1].T, grads[2], grads[3], grads[4]]
    return step


def run(opts):
    result = harness.run_standard(sys.modules[__name__], opts, tol=1e-4)
    result["targets"] = [harness.ratio_target(result, "compiled <= 1.0 x hand NumPy", 1.0)]
    return result
