"""Seed 003's jacobians inside and through tapeflow.function, on the vectorized path.

test_seeds_in_function.py checks the seed's printed values in both modes; here: the traced
graph does not grow with the target (one vectorized program, not a loop of sweeps), the
vectorized numbers equal the loop path's (``experimental_use_pfor=False``) and finite
differences, ``tapeflow dump`` shows the vectorized program, and the Hessian + Newton step
(reshape, ``linalg.solve`` with ``eye*eps``, ``assign_sub``) runs compiled by Numba.
"""
import numpy as np
import pytest

import tapeflow as tf

from seeds.modes import in_mode, modes

pytestmark = pytest.mark.usefixtures("numpy_backend")


def _dense(x, w):
    return tf.nn.elu(tf.matmul(x, w))


def _jacobians(fn, x, w, pfor=True):
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = fn(x, w)
    return (tape.jacobian(y, x, experimental_use_pfor=pfor),
            tape.batch_jacobian(y, x, experimental_use_pfor=pfor))


def _elu(z):
    return np.where(z > 0, z, np.expm1(z))


def _fd(f, x, eps=1e-6):
    y0 = f(x)
    out = np.zeros(y0.shape + x.shape)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = eps
        out[(...,) + idx] = (f(x + e) - f(x - e)) / (2 * eps)
    return out


def test_traced_graph_does_not_grow_with_the_target():
    def nodes(n_out):
        x = tf.constant(np.ones((3, 4)))
        w = tf.constant(np.ones((4, n_out)))
        f = tf.function(lambda x, w: _jacobians(_dense, x, w))
        return len(f.get_concrete_function(x, w).graph.nodes)
    assert nodes(5) == nodes(50)


@modes
def test_jacobian_and_batch_jacobian_equal_the_loop_and_finite_differences(mode):
    rng = np.random.default_rng(3)
    xv, wv = rng.standard_normal((7, 5)), rng.standard_normal((5, 6))
    x, w = tf.constant(xv), tf.constant(wv)
    j, jb = in_mode(mode, lambda fn, x, w: _jacobians(fn, x, w), _dense, x, w)
    lj, ljb = in_mode(mode, lambda fn, x, w: _jacobians(fn, x, w, pfor=False), _dense, x, w)
    assert j.shape == (7, 6, 7, 5) and jb.shape == (7, 6, 5)
    np.testing.assert_allclose(j.numpy(), lj.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jb.numpy(), ljb.numpy(), rtol=1e-12, atol=1e-12)
    full = _fd(lambda x: _elu(x @ wv), xv)
    np.testing.assert_allclose(j.numpy(), full, atol=1e-7)
    np.testing.assert_allclose(jb.numpy(), np.einsum("bibj->bij", full), atol=1e-7)


@modes
def test_batch_norm_training_jacobian_is_not_diagonal(mode):
    """Batch statistics couple the rows: the full path, equal to the loop and to finite differences."""
    tf.random.set_seed(5)
    norm = tf.keras.layers.BatchNormalization()
    norm.build([7, 6])
    rng = np.random.default_rng(4)
    xv, wv = rng.standard_normal((7, 5)), rng.standard_normal((5, 6)).astype(np.float32)

    def body(x, w):
        return norm(tf.matmul(x, w), training=True)

    x, w = tf.constant(xv.astype(np.float32)), tf.constant(wv)
    j, jb = in_mode(mode, lambda fn, x, w: _jacobians(fn, x, w), body, x, w)
    lj, ljb = _jacobians(body, x, w, pfor=False)
    np.testing.assert_allclose(j.numpy(), lj.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(jb.numpy(), ljb.numpy(), rtol=1e-4, atol=1e-5)
    off = j.numpy().copy()
    for b in range(7):
        off[b, :, b, :] = 0
    assert np.abs(off).max() > 1e-4

    def bn(xv):
        h = xv @ wv.astype(np.float64)
        return (h - h.mean(0)) / np.sqrt(h.var(0) + norm.epsilon)
    np.testing.assert_allclose(j.numpy(), _fd(bn, xv), atol=2e-3)


def test_dump_shows_the_vectorized_program(monkeypatch):
    monkeypatch.setenv("TAPEFLOW_JACOBIAN_MODE", "reverse")
    f = tf.function(lambda x, w: _jacobians(_dense, x, w))
    text = f.lower(tf.constant(np.ones((3, 4))), tf.constant(np.ones((4, 5)))).as_text()
    assert ("== vectorized jacobian 0: reverse mode, vectorized over a batch of 5: every op has "
            "a batching rule") in text
    # one-hot column seeds times a matmul: no product, one broadcast multiply in the final layout
    assert "f64[3,5,4] = Mul" in text and "MatMul" not in text.split("== vectorized")[1].split("==")[0]


def test_dump_says_forward_mode_when_the_source_is_narrower():
    """auto: 4 source columns against 5 target columns, so forward mode with 4 seeds."""
    f = tf.function(lambda x, w: _jacobians(_dense, x, w))
    text = f.lower(tf.constant(np.ones((3, 4))), tf.constant(np.ones((4, 5)))).as_text()
    assert ("== vectorized jacobian 0: forward mode, vectorized over a batch of 4: every op has "
            "a batching rule") in text
    batched = text.split("== vectorized")[1].split("==")[0]
    assert "MatMul" not in batched and "f64[3,5,3,4] = Mul" in batched


def _newton_setup():
    tf.random.set_seed(11)
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)
    layer2(layer1(x))
    return x, layer1, layer2


def _newton(x, layer1, layer2):
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            loss = tf.reduce_mean(layer2(layer1(x)) ** 2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    n_params = tf.reduce_prod(layer1.kernel.shape)
    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(h, [n_params, n_params])
    eye_eps = tf.eye(h_mat.shape[0]) * 1e-3
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)
    layer1.kernel.assign_sub(tf.reshape(update, layer1.kernel.shape))
    return h_mat, g_vec, update


def test_hessian_newton_step_compiled_with_numba():
    tf.set_backend("numba")
    x, layer1, layer2 = _newton_setup()
    before = layer1.kernel.numpy().copy()
    h_mat, g_vec, update = tf.function(lambda x: _newton(x, layer1, layer2))(x)
    h = h_mat.numpy()
    np.testing.assert_allclose(h, h.T, atol=1e-6)                       # symmetric to round-off
    after = layer1.kernel.numpy().copy()
    layer1.kernel.assign(before)
    tf.set_backend("numpy")
    eh, eg, eu = _newton(x, layer1, layer2)                              # eager (vectorized)
    layer1.kernel.assign(before)
    with tf.GradientTape(persistent=True) as t2:
        with tf.GradientTape() as t1:
            loss = tf.reduce_mean(layer2(layer1(x)) ** 2)
        g = t1.gradient(loss, layer1.kernel)
    lh = t2.jacobian(g, layer1.kernel, experimental_use_pfor=False)     # eager loop
    np.testing.assert_allclose(h, eh.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(h, lh.numpy().reshape(40, 40), rtol=1e-4, atol=1e-6)
    expected = np.linalg.solve(h.astype(np.float64) + 1e-3 * np.eye(40), g_vec.numpy())
    np.testing.assert_allclose(update.numpy(), expected, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(before - after, update.numpy().reshape(5, 8), rtol=1e-5, atol=1e-6)
