"""Keras optimizers: SGD and Adam steps against NumPy, None gradients, slots, minimize."""
import warnings

import numpy as np
import pytest

import tapeflow as tf
import tapeflow.keras as keras
from tapeflow.keras import backend
from tapeflow.keras.layers import Dense
from tapeflow.keras.optimizers import SGD, Adam

f32 = np.float32


@pytest.fixture(autouse=True)
def fresh_names():
    backend.clear_session()


def _grads(rng, shape, steps):
    return [rng.standard_normal(shape).astype(f32) for _ in range(steps)]


def test_sgd_steps(rng):
    w0 = rng.standard_normal((3, 2)).astype(f32)
    w = tf.Variable(w0)
    opt = SGD(learning_rate=0.1)
    expected = w0.copy()
    for g in _grads(rng, (3, 2), 3):
        opt.apply_gradients([(tf.constant(g), w)])
        expected = expected + (-g * f32(0.1))  # Keras: var += -g * lr
        np.testing.assert_array_equal(w.numpy(), expected)
    assert int(opt.iterations.numpy()) == 3


@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_momentum_steps(rng, nesterov):
    w0 = rng.standard_normal(4).astype(f32)
    w = tf.Variable(w0)
    opt = SGD(learning_rate=0.05, momentum=0.9, nesterov=nesterov)
    lr, mom = f32(0.05), f32(0.9)
    expected, m = w0.copy(), np.zeros(4, f32)
    for g in _grads(rng, 4, 4):
        opt.apply_gradients(zip([tf.constant(g)], [w]))
        m = -g * lr + m * mom
        expected = expected + ((-g * lr + m * mom) if nesterov else m)
        np.testing.assert_allclose(w.numpy(), expected, rtol=1e-6, atol=1e-7)


def test_adam_steps_match_keras_formula(rng):
    w0 = rng.standard_normal((2, 3)).astype(f32)
    w = tf.Variable(w0)
    opt = Adam(learning_rate=0.01)
    expected, m, v = w0.copy(), np.zeros_like(w0), np.zeros_like(w0)
    textbook, tm, tv = w0.astype(np.float64), np.zeros((2, 3)), np.zeros((2, 3))
    for t, g in enumerate(_grads(rng, (2, 3), 4), start=1):
        opt.apply_gradients([(tf.constant(g), w)])
        # Keras's float32 arithmetic, op for op.
        alpha = f32(0.01) * np.sqrt(f32(1) - f32(0.999) ** f32(t)) / (f32(1) - f32(0.9) ** f32(t))
        m = m + (g - m) * f32(1 - 0.9)
        v = v + (np.square(g) - v) * f32(1 - 0.999)
        expected = expected - (m * alpha) / (np.sqrt(v) + f32(1e-7))
        np.testing.assert_allclose(w.numpy(), expected, rtol=1e-6, atol=1e-7)
        # And the textbook algorithm in float64, to be sure the formula is Adam.
        tm = 0.9 * tm + 0.1 * g
        tv = 0.999 * tv + 0.001 * g.astype(np.float64) ** 2
        textbook = textbook - 0.01 * (tm / (1 - 0.9 ** t)) / (np.sqrt(tv / (1 - 0.999 ** t)) + 1e-7 * np.sqrt(1 - 0.999 ** t))
        np.testing.assert_allclose(w.numpy(), textbook, rtol=1e-4, atol=1e-6)
    assert int(opt.iterations.numpy()) == 4


def test_adam_first_step_moves_each_weight_by_learning_rate(rng):
    w = tf.Variable(np.zeros(5, f32))
    g = rng.standard_normal(5).astype(f32)
    Adam(learning_rate=0.1).apply_gradients([(tf.constant(g), w)])
    np.testing.assert_allclose(w.numpy(), -0.1 * np.sign(g), rtol=1e-4)


def test_apply_gradients_returns_iterations_and_counts():
    w = tf.Variable(1.0)
    opt = SGD()
    it = opt.apply_gradients([(tf.constant(1.0), w)])
    assert it is opt.iterations
    assert opt.iterations.dtype == tf.int64 and int(opt.iterations.numpy()) == 1
    assert opt.apply_gradients([]) is opt.iterations
    assert int(opt.iterations.numpy()) == 1


def test_none_gradient_is_skipped_with_a_warning():
    a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
    opt = SGD(learning_rate=0.5)
    with pytest.warns(UserWarning, match=r"Gradients do not exist for variables \['b:0'\]"):
        opt.apply_gradients([(tf.constant(1.0), a), (None, b)])
    assert a.numpy() == 0.5 and b.numpy() == 2.0


def test_all_none_gradients_is_an_error():
    a = tf.Variable(1.0, name="a")
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        SGD().apply_gradients([(None, a)])


def test_variables_unknown_to_a_built_optimizer_raise_key_error():
    a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
    opt = Adam()
    opt.apply_gradients([(tf.constant(1.0), a)])
    with pytest.raises(KeyError, match="cannot recognize variable b:0"):
        opt.apply_gradients([(tf.constant(1.0), b)])
    assert b.numpy() == 2.0


def test_build_up_front_allows_updating_parts_separately():
    a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
    opt = SGD(learning_rate=1.0)
    opt.build([a, b])
    opt.apply_gradients([(tf.constant(1.0), a)])
    opt.apply_gradients([(tf.constant(1.0), b)])
    assert (a.numpy(), b.numpy()) == (0.0, 1.0)


def test_slot_variables_and_names():
    layer = Dense(2)
    layer(tf.ones((1, 3)))
    opt = Adam()
    grads = [tf.ones_like(v) for v in layer.trainable_variables]
    opt.apply_gradients(zip(grads, layer.trainable_variables))
    # Slots are made inside apply_gradients' name scope (the optimizer's name).
    names = [v.name for v in opt.variables]
    assert names == ["iteration:0", "Adam/m/dense/kernel:0", "Adam/v/dense/kernel:0",
                     "Adam/m/dense/bias:0", "Adam/v/dense/bias:0"]
    assert opt.variables() == opt.variables  # callable, as Keras's CallableList
    assert all(not v.trainable for v in opt.variables)
    np.testing.assert_allclose(opt.variables[1].numpy(), np.full((3, 2), 0.1, f32), rtol=1e-6)


def test_slots_built_directly_are_not_scoped():
    w = tf.Variable(1.0, name="w")
    opt = SGD(momentum=0.5)
    opt.build([w])
    assert [v.name for v in opt.variables] == ["iteration:0", "m/w:0"]


def test_learning_rate_is_a_settable_variable(rng):
    w = tf.Variable(1.0)
    opt = SGD(learning_rate=0.1)
    assert opt.learning_rate.dtype == tf.float32
    opt.learning_rate = 0.5
    opt.apply_gradients([(tf.constant(1.0), w)])
    assert w.numpy() == 0.5


def test_clipnorm(rng):
    w = tf.Variable(np.zeros(2, f32))
    SGD(learning_rate=1.0, clipnorm=1.0).apply_gradients([(tf.constant([3.0, 4.0]), w)])
    np.testing.assert_allclose(w.numpy(), [-0.6, -0.8], rtol=1e-6)


def test_minimize_with_callable_loss():
    w = tf.Variable(3.0)
    opt = SGD(learning_rate=0.25)
    opt.minimize(lambda: w * w, [w])
    assert w.numpy() == 3.0 - 0.25 * 6.0
    with pytest.raises(ValueError, match="`tape` is required"):
        opt.minimize(w * w, [w])


def test_updates_are_not_recorded_on_an_open_tape():
    w = tf.Variable(2.0)
    opt = SGD(learning_rate=0.1)
    with tf.GradientTape() as tape:
        y = w * w
        opt.apply_gradients([(tf.constant(1.0), w)])
    assert tape.gradient(y, w).numpy() == 4.0


def test_training_a_dense_layer_reduces_the_loss(rng):
    x = tf.constant(rng.standard_normal((16, 3)).astype(f32))
    target = tf.constant(rng.standard_normal((16, 1)).astype(f32))
    layer = Dense(1)
    opt = keras.optimizers.Adam(learning_rate=0.05)
    losses = []
    for _ in range(30):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((layer(x) - target) ** 2)
        grads = tape.gradient(loss, layer.trainable_variables)
        opt.apply_gradients(zip(grads, layer.trainable_variables))
        losses.append(float(loss))
    assert losses[-1] < 0.8 * losses[0]
    assert int(opt.iterations.numpy()) == 30


def test_keras_namespace_aliases():
    import tapeflow.layers
    import tapeflow.optimizers
    from tapeflow.keras.layers import Dense as KerasDense
    assert keras.layers is tapeflow.layers
    assert keras.optimizers is tapeflow.optimizers
    assert KerasDense is Dense
    assert keras.optimizers.SGD is SGD
    assert keras.initializers.get("glorot_uniform").__class__.__name__ == "GlorotUniform"


def test_no_warning_when_every_gradient_exists():
    w = tf.Variable(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SGD().apply_gradients([(tf.constant(1.0), w)])


def test_lr_keyword_is_ignored_with_a_warning_as_in_keras():
    with pytest.warns(UserWarning, match="`lr` is deprecated"):
        opt = SGD(lr=0.5)
    assert float(opt.learning_rate.numpy()) == pytest.approx(0.01)
    with pytest.raises(TypeError, match="not a valid argument"):
        SGD(bogus=1)
