"""Seed 003 (advanced autodiff guide), eagerly: stop_recording, reset, stop_gradient,
custom_gradient, multiple tapes, higher order, input-gradient regularisation, jacobians,
Hessian + Newton step, batch_jacobian (with and without BatchNormalization).
Custom gradients in SavedModel belong to the saved-programs issue."""
import numpy as np
import pytest

import tapeflow as tf

from seeds.references import grad_norm_bias_fd


def test_stop_recording():
    x, y = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    grad = t.gradient(z, {"x": x, "y": y})
    assert grad["x"].numpy() == 4.0 and grad["y"] is None


def test_reset():
    x, y = tf.Variable(2.0), tf.Variable(3.0)
    reset = True
    with tf.GradientTape() as t:
        y_sq = y * y
        if reset:
            t.reset()
        z = x * x + y_sq
    grad = t.gradient(z, {"x": x, "y": y})
    assert grad["x"].numpy() == 4.0 and grad["y"] is None


def test_stop_gradient():
    x, y = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as t:
        y_sq = y ** 2
        z = x ** 2 + tf.stop_gradient(y_sq)
    grad = t.gradient(z, {"x": x, "y": y})
    assert grad["x"].numpy() == 4.0 and grad["y"] is None


@tf.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return tf.clip_by_norm(dy, 0.5)
    return y, backward


def test_custom_gradient_clips_4_to_2():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = clip_gradients(v * v)
    assert str(t.gradient(output, v)) == "tf.Tensor(2.0, shape=(), dtype=float32)"


def test_multiple_tapes():
    x0, x1 = tf.constant(0.0), tf.constant(0.0)
    with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.sigmoid(x1)
        y = y0 + y1
        ys = tf.reduce_sum(y)
    assert tape0.gradient(ys, x0).numpy() == 1.0
    assert tape1.gradient(ys, x1).numpy() == 0.25


def test_higher_order_gradients():
    x = tf.Variable(1.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    assert dy_dx.numpy() == 3.0 and d2y_dx2.numpy() == 6.0


def test_input_gradient_regularization():
    x = tf.random.normal([7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
    with tf.GradientTape() as t2:
        with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            y = layer(x)
            out = tf.reduce_sum(layer(x) ** 2)
        g1 = t1.gradient(out, x)
        g1_mag = tf.norm(g1)
    dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
    assert [var.shape for var in dg1_mag] == [(5, 10), (10,)]
    # check d|g1|/dbias against finite differences (kernel fixed)
    np.testing.assert_allclose(dg1_mag[1].numpy(), grad_norm_bias_fd(layer, x), rtol=1e-3, atol=1e-3)


def test_jacobian_scalar_source():
    x = tf.linspace(-10.0, 10.0, 200 + 1)
    delta = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        y = tf.nn.sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    assert y.shape == (201,) and dy_dx.shape == (201,)
    s = 1 / (1 + np.exp(-x.numpy().astype(np.float64)))
    np.testing.assert_allclose(dy_dx.numpy(), s * (1 - s), atol=1e-6)


def test_jacobian_tensor_source_sums_to_gradient():
    x = tf.random.normal([7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
    with tf.GradientTape(persistent=True) as tape:
        y = layer(x)
    assert y.shape == (7, 10) and layer.kernel.shape == (5, 10)
    j = tape.jacobian(y, layer.kernel)
    assert j.shape == (7, 10, 5, 10)
    g = tape.gradient(y, layer.kernel)
    assert g.shape == (5, 10)
    j_sum = tf.reduce_sum(j, axis=[0, 1])
    delta = tf.reduce_max(abs(g - j_sum)).numpy()
    assert delta < 1e-3


def test_hessian_and_newton_step():
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = tf.reduce_mean(x ** 2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    assert layer1.kernel.shape == (5, 8) and h.shape == (5, 8, 5, 8)
    n_params = tf.reduce_prod(layer1.kernel.shape)
    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(h, [n_params, n_params])
    np.testing.assert_allclose(h_mat.numpy(), h_mat.numpy().T, atol=1e-5)  # symmetric
    eps = 1e-3
    eye_eps = tf.eye(h_mat.shape[0]) * eps
    before = layer1.kernel.numpy().copy()
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)
    _ = layer1.kernel.assign_sub(tf.reshape(update, layer1.kernel.shape))
    expected = np.linalg.solve(h_mat.numpy().astype(np.float64) + eps * np.eye(40), g_vec.numpy())
    np.testing.assert_allclose(before - layer1.kernel.numpy(), expected.reshape(5, 8), rtol=1e-3, atol=1e-4)


def _elu_net(bn=False):
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    norm = tf.keras.layers.BatchNormalization()
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        if bn:
            y = norm(y, training=True)
        y = layer2(y)
    return tape, x, y


def plot_as_patches(j):
    """The seed's reshaping of j into one image (without plotting)."""
    j = tf.transpose(j, [1, 0, 3, 2])
    lim = tf.reduce_max(abs(j))
    j = tf.pad(j, [[0, 0], [1, 1], [0, 0], [1, 1]], constant_values=-lim)
    s = j.shape
    return tf.reshape(j, [s[0] * s[1], s[2] * s[3]])


def test_batch_jacobian():
    tape, x, y = _elu_net()
    assert y.shape == (7, 6)
    j = tape.jacobian(y, x)
    assert j.shape == (7, 6, 7, 5)
    jn = j.numpy()
    off = jn.copy()
    for b in range(7):
        off[b, :, b, :] = 0
    assert not off.any()  # every (batch, batch) slice is diagonal
    assert plot_as_patches(j).shape == (6 * 9, 5 * 9)
    j_sum = tf.reduce_sum(j, axis=2)
    j_select = tf.einsum("bxby->bxy", j)
    assert j_sum.shape == j_select.shape == (7, 6, 5)
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 6, 5)
    error = tf.reduce_max(abs(jb - j_sum))
    assert error < 1e-3


def test_batch_jacobian_with_batch_norm_is_not_diagonal():
    tape, x, y = _elu_net(bn=True)
    j = tape.jacobian(y, x)
    assert j.shape == (7, 6, 7, 5)
    off = j.numpy().copy()
    for b in range(7):
        off[b, :, b, :] = 0
    assert np.abs(off).max() > 1e-4  # batch statistics couple the examples
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 6, 5)
