"""Gradient checking against central finite differences, first and second order, in float64.

Used by the test suite for every op; public so users can check their own
custom gradients the same way.
"""
import numpy as np

import tapeflow as tf


class GradientCheckError(AssertionError):
    pass


def _numeric(fn, xs, eps):
    """Central differences of scalar ``fn(list of arrays)`` w.r.t. each array."""
    grads = []
    for i, x in enumerate(xs):
        g = np.zeros_like(x)
        flat, gflat = x.reshape(-1), g.reshape(-1)
        for k in range(flat.size):
            old = flat[k]
            flat[k] = old + eps
            hi = fn(xs)
            flat[k] = old - eps
            lo = fn(xs)
            flat[k] = old
            gflat[k] = (hi - lo) / (2 * eps)
        grads.append(g)
    return grads


def _compare(what, analytic, numeric, rtol, atol):
    for i, (a, n) in enumerate(zip(analytic, numeric)):
        a = np.zeros_like(n) if a is None else np.asarray(a, dtype=np.float64)
        if a.shape != n.shape:
            raise GradientCheckError(f"{what}: gradient {i} has shape {a.shape}, expected {n.shape}")
        if not np.allclose(a, n, rtol=rtol, atol=atol):
            err = np.max(np.abs(a - n))
            raise GradientCheckError(f"{what}: gradient {i} differs from finite differences by {err:.3g}\n"
                                     f"analytic:\n{a}\nnumeric:\n{n}")


def check_gradients(f, *args, order=2, eps=1e-6, rtol=1e-5, atol=1e-6, seed=0):
    """Assert tape gradients of ``f(*tensors)`` match finite differences (orders 1..``order``).

    ``args`` are float64 arrays (the differentiated inputs); ``f`` returns one tensor.
    A random cotangent makes every output element matter; a random direction
    turns the second-order check into a Hessian-vector product.
    """
    rng = np.random.default_rng(seed)
    xs = [np.array(a, dtype=np.float64) for a in args]
    y0 = np.asarray(f(*[tf.constant(x) for x in xs]))
    w = rng.uniform(0.5, 1.5, y0.shape) * rng.choice([-1.0, 1.0], y0.shape)

    def scalar_np(vals):
        return float(np.sum(np.asarray(f(*[tf.constant(v) for v in vals])) * w))

    def first(vals, tape_outer=None):
        ts = [tf.constant(v) for v in vals]
        with tf.GradientTape() as t:
            t.watch(ts)
            s = tf.reduce_sum(f(*ts) * tf.constant(w))
        return ts, [tf.convert_to_tensor(g) if g is not None else None for g in t.gradient(s, ts)]

    _, g1 = first(xs)
    _compare("first order", [None if g is None else g.numpy() for g in g1], _numeric(scalar_np, xs, eps),
             rtol, atol)
    if order < 2:
        return
    vs = [rng.uniform(-1, 1, x.shape) for x in xs]

    def hvp_np(vals):
        _, g = first(vals)
        return float(sum(np.sum((0 if gi is None else gi.numpy()) * v) for gi, v in zip(g, vs)))

    ts = [tf.constant(x) for x in xs]
    with tf.GradientTape() as outer:
        outer.watch(ts)
        with tf.GradientTape() as inner:
            inner.watch(ts)
            s = tf.reduce_sum(f(*ts) * tf.constant(w))
        g = inner.gradient(s, ts)
        terms = [tf.reduce_sum(gi * tf.constant(v)) for gi, v in zip(g, vs) if gi is not None]
        hv = terms[0] if terms else None
        for t in terms[1:]:
            hv = hv + t
    g2 = [None] * len(ts) if hv is None else [
        None if gi is None else tf.convert_to_tensor(gi) for gi in outer.gradient(hv, ts)]
    _compare("second order", [None if gi is None else gi.numpy() for gi in g2],
             _numeric(hvp_np, xs, eps * 10), rtol * 10, atol * 10)

