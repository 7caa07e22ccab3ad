"""W8: h_0 = 0[B,H]; for t in range(T): h = tanh(h @ W + x[t] @ U);
loss = sum(h_T^2) + sum_t mean(h_t); gradients wrt W [H,H] and U [D,H].

Stresses loop gradients: the per-iteration values the backward needs must be kept (or
recomputed) so the cost stays linear in T. Written as TensorFlow users write it, with
``for t in tf.range(T)`` over a tensor bound, reading ``x[t]`` as ``tf.gather(x, t)`` and
carrying sum_t mean(h_t) as a loop variable (the peers run this form); `tf_code_tensor_array`
is the same gradient written with ``x[t]`` and a TensorArray, timed as a second tapeflow
contender. The scaling run times the
compiled tapeflow gradient (both forms) and hand NumPy BPTT at T = 100, 200, 400, 800 in the same
process (``benchmarks/w8_scaling_ta.py`` compares the two forms' scaling interleaved);
the memory run gives the peak bytes of one gradient with the loop's stacks and with its
checkpointing (``tapeflow.config.loop_memory(0)``) at each T, and the checkpointed compiled
gradient is timed at T = 200 and 800.
"""
import sys
import time

import numpy as np

from .. import harness

ID = "W8"
TITLE = "tanh recurrence, T steps, B=32 H=64 D=16, grads wrt W, U"
STRESSES = "loop gradients: per-iteration saved values, linear cost in T"
SCALING = (100, 200, 400, 800)


def params(quick):
    return {"T": 20, "B": 8, "H": 16, "D": 4} if quick else {"T": 200, "B": 32, "H": 64, "D": 16}


def inputs(p):
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((p["T"], p["B"], p["D"]), dtype=np.float32),
            "W": (rng.standard_normal((p["H"], p["H"])) / np.sqrt(p["H"])).astype(np.float32),
            "U": (rng.standard_normal((p["D"], p["H"])) / np.sqrt(p["D"])).astype(np.float32)}


def tf_code(tf):
    def w8_grads(x, W, U):
        with tf.GradientTape() as tape:
            tape.watch([W, U])
            h = tf.zeros((x.shape[1], W.shape[0]), dtype=x.dtype)
            acc = tf.constant(0.0, dtype=x.dtype)
            for t in tf.range(tf.shape(x)[0]):
                h = tf.tanh(h @ W + tf.gather(x, t) @ U)
                acc = acc + tf.reduce_mean(h)
            loss = tf.reduce_sum(h * h) + acc
        return tape.gradient(loss, [W, U])
    return w8_grads


def tf_code_tensor_array(tf):
    """The same gradient as the issue writes it: ``x[t]`` read by index and every h_t
    collected in a TensorArray, the mean term taken from its stack after the loop."""
    def w8_grads(x, W, U):
        with tf.GradientTape() as tape:
            tape.watch([W, U])
            h = tf.zeros((x.shape[1], W.shape[0]), dtype=x.dtype)
            hs = tf.TensorArray(x.dtype, size=tf.shape(x)[0])
            for t in tf.range(tf.shape(x)[0]):
                h = tf.tanh(h @ W + x[t] @ U)
                hs = hs.write(t, h)
            loss = tf.reduce_sum(h * h) + tf.reduce_sum(tf.reduce_mean(hs.stack(), axis=[1, 2]))
        return tape.gradient(loss, [W, U])
    return w8_grads


def extra_contenders(inp, opts):
    """tapeflow compiled on the TensorArray form (``tf_code_tensor_array``)."""
    if not opts.tapeflow:
        return []

    def compiled():
        import tapeflow
        fn = tapeflow.function(tf_code_tensor_array(tapeflow), jit_compile=True)
        args = tf_args(tapeflow, inp)
        fn(*args)
        return lambda: fn(*args)
    return [harness.Contender("tapeflow compiled (TensorArray)", compiled, compiled=True)]


def tf_args(tf, inp):
    return tf.constant(inp["x"]), tf.constant(inp["W"]), tf.constant(inp["U"])


def numpy_grads(inp):
    """Backpropagation through time by hand, in the inputs' precision."""
    x, W, U = inp["x"], inp["W"], inp["U"]
    T, B = x.shape[:2]
    H = W.shape[0]
    hs = [np.zeros((B, H), x.dtype)]
    for t in range(T):
        hs.append(np.tanh(hs[-1] @ W + x[t] @ U))
    gW, gU = np.zeros_like(W), np.zeros_like(U)
    g = 2 * hs[-1]
    for t in range(T, 0, -1):
        dz = (g + x.dtype.type(1.0 / (B * H))) * (1 - hs[t] ** 2)
        gW += hs[t - 1].T @ dz
        gU += x[t - 1].T @ dz
        g = dz @ W.T
    return [gW, gU]


def jax_code(jax, jnp, inp):
    def loss(W, U, x):
        def step(h, xt):
            h = jnp.tanh(h @ W + xt @ U)
            return h, jnp.mean(h)
        h, means = jax.lax.scan(step, jnp.zeros((x.shape[1], W.shape[0]), x.dtype), x)
        return jnp.sum(h * h) + jnp.sum(means)
    g = jax.jit(jax.grad(loss, argnums=(0, 1)))
    args = [jnp.asarray(inp[k]) for k in ("W", "U", "x")]
    return lambda: jax.block_until_ready(g(*args))


def _median_ms(step, n):
    step()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def scaling(opts):
    """Median ms per gradient call of compiled tapeflow (the gather form and the TensorArray
    form) and hand NumPy at each T (same run)."""
    import tapeflow
    fn = tapeflow.function(tf_code(tapeflow), jit_compile=True)   # compiled, not tiered
    ta = tapeflow.function(tf_code_tensor_array(tapeflow), jit_compile=True)
    base = params(False) if not opts.quick else params(True)
    rows = []
    for T in (SCALING if not opts.quick else (10, 20)):
        inp = inputs(dict(base, T=T))
        args = tf_args(tapeflow, inp)
        n = 3 if opts.quick else 15
        rows.append({"T": T, "tapeflow_ms": _median_ms(lambda: fn(*args), n),
                     "tapeflow_ta_ms": _median_ms(lambda: ta(*args), n),
                     "numpy_ms": _median_ms(lambda: numpy_grads(inp), n)})
    return rows


def checkpoint_scaling(opts):
    """Compiled tapeflow with the loop checkpointing (``loop_memory(0)``) at T = 200 and 800:
    median ms, next to the stacks' times of ``scaling`` (the same run)."""
    import tapeflow
    fn = tapeflow.function(tf_code(tapeflow), jit_compile=True)   # compiled, not tiered
    base = params(False) if not opts.quick else params(True)
    rows = []
    for T in ((200, 800) if not opts.quick else (20,)):
        args = tf_args(tapeflow, inputs(dict(base, T=T)))
        with tapeflow.config.loop_memory(0):     # the gradient is built when fn traces
            fn(*args)
        rows.append({"T": T, "checkpointed_ms": _median_ms(lambda: fn(*args), 3 if opts.quick else 15)})
    return rows


def memory_scaling(opts):
    """Peak bytes allocated during one gradient call, stacks against checkpoints, at each T:
    on the NumPy interpreter, where tracemalloc sees every array (Numba's allocations are not
    traced); the compiled program follows the same plan (``segment_length``)."""
    import tracemalloc

    import tapeflow
    from tapeflow.tracer import engine as backend
    old = backend.get_backend()
    tapeflow.set_backend("numpy")
    base = params(False) if not opts.quick else params(True)
    rows = []
    try:
        stacked = tapeflow.function(tf_code(tapeflow))
        checkpointed = tapeflow.function(tf_code(tapeflow))
        for T in (SCALING if not opts.quick else (10, 20)):
            args = tf_args(tapeflow, inputs(dict(base, T=T)))
            row = {"T": T}
            for name, fn, budget in (("stacks", stacked, None), ("checkpoints", checkpointed, 0)):
                def call(fn=fn, budget=budget):
                    if budget is None:
                        return fn(*args)
                    with tapeflow.config.loop_memory(budget):
                        return fn(*args)
                call()                                  # trace outside the measurement
                tracemalloc.start()
                before = tracemalloc.get_traced_memory()[0]
                call()
                row[f"{name}_peak_kb"] = (tracemalloc.get_traced_memory()[1] - before) / 1024
                tracemalloc.stop()
            rows.append(row)
    finally:
        tapeflow.set_backend(old)
    return rows


def run(opts):
    result = harness.run_standard(sys.modules[__name__], opts, tol=1e-4)
    result["targets"] = [harness.ratio_target(result, "compiled <= 1.5 x hand NumPy", 1.5)]
    if opts.tapeflow:
        result["memory"] = memory_scaling(opts)
        for row in result["memory"]:
            print(f"  peak memory T={row['T']}: stacks {row['stacks_peak_kb']:.0f} KiB, "
                  f"checkpoints {row['checkpoints_peak_kb']:.0f} KiB", flush=True)
        result["checkpointed"] = checkpoint_scaling(opts)
        rows = result["scaling"] = scaling(opts)
        for key, form in (("tapeflow_ms", ""), ("tapeflow_ta_ms", ", TensorArray form")):
            by_t = {r["T"]: r[key] for r in rows}
            if 200 in by_t and 800 in by_t:
                result["targets"].append(harness.target(f"T=800 <= 5 x T=200 (linear in T{form})",
                                                        by_t[800] / by_t[200], 5.0, "x"))
    return result
