"""Keras layers: build on first call, names, Dense and BatchNormalization numerics and gradients."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import backend
from tapeflow.keras.layers import BatchNormalization, Dense, Layer


@pytest.fixture(autouse=True)
def fresh_names():
    backend.clear_session()


def _np(t):
    return np.asarray(t.numpy())


# -- naming and building ---------------------------------------------------------------

def test_seed_001_dense_gradient_names_and_shapes():
    layer = Dense(2, activation="relu")
    x = tf.constant([[1., 2., 3.]])
    with tf.GradientTape() as tape:
        y = layer(x)
        loss = tf.reduce_mean(y**2)
    grad = tape.gradient(loss, layer.trainable_variables)
    assert [(v.name, tuple(g.shape)) for v, g in zip(layer.trainable_variables, grad)] == \
        [("dense/kernel:0", (3, 2)), ("dense/bias:0", (2,))]


def test_layer_names_are_unique_per_process_until_clear_session():
    assert [Dense(1).name for _ in range(3)] == ["dense", "dense_1", "dense_2"]
    assert Dense(1, name="mine").name == "mine"
    assert Dense(1).name == "dense_3"
    assert BatchNormalization().name == "batch_normalization"
    backend.clear_session()
    assert Dense(1).name == "dense"


def test_custom_layer_name_is_keras_snake_case():
    class MyFancyBlock(Layer):
        pass

    assert MyFancyBlock().name == "my_fancy_block"


def test_build_on_first_call_only():
    layer = Dense(4)
    assert not layer.built and layer.trainable_variables == []
    layer(tf.ones((2, 3)))
    kernel = layer.kernel
    layer(tf.ones((5, 3)))
    assert layer.built and layer.kernel is kernel
    assert tuple(layer.kernel.shape) == (3, 4) and tuple(layer.bias.shape) == (4,)


def test_second_layer_variables_are_named_by_its_own_scope():
    Dense(1)(tf.ones((1, 2)))
    second = Dense(1)
    second(tf.ones((1, 2)))
    assert [v.name for v in second.variables] == ["dense_1/kernel:0", "dense_1/bias:0"]


def test_input_checks():
    layer = Dense(2)
    with pytest.raises(ValueError, match="expected min_ndim=2, found ndim=1"):
        layer(tf.ones((3,)))
    layer(tf.ones((1, 3)))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3"):
        layer(tf.ones((1, 4)))


def test_python_nested_list_is_a_structure_not_a_tensor():
    # Keras would take each Python number as an input, so it refuses them: TensorFlow 2.21
    # gives ValueError "Only input tensors may be passed as positional arguments. The
    # following argument value should be passed as a keyword argument: 1.0 (of type <class
    # 'float'>)".
    with pytest.raises(ValueError, match="Only input tensors may be passed as positional"):
        Dense(2)([[1., 2., 3.]])


def test_numpy_and_float64_inputs_are_converted_to_float32():
    layer = Dense(2, kernel_initializer="ones")
    y = layer(np.array([[1., 2., 3.]]))  # float64
    assert y.dtype == tf.float32
    np.testing.assert_array_equal(_np(y), [[6., 6.]])
    y = layer(tf.constant([[1, 2, 3]]))  # int32
    assert y.dtype == tf.float32
    np.testing.assert_array_equal(_np(y), [[6., 6.]])


# -- Dense numerics --------------------------------------------------------------------

def _relu(z):
    return np.maximum(z, 0)


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _elu(z):
    return np.where(z > 0, z, np.expm1(z))


@pytest.mark.parametrize("activation, reference", [
    (None, lambda z: z), ("relu", _relu), ("elu", _elu), ("sigmoid", _sigmoid),
    ("tanh", np.tanh), ("softmax", _softmax), (tf.nn.relu, _relu), (lambda t: t * 2.0, lambda z: 2 * z),
])
def test_dense_output_matches_numpy(activation, reference, rng):
    layer = Dense(4, activation=activation, bias_initializer="random_normal")
    x = rng.standard_normal((5, 3)).astype(np.float32)
    y = layer(tf.constant(x))
    kernel, bias = layer.kernel.numpy(), layer.bias.numpy()
    assert np.any(bias != 0)
    np.testing.assert_allclose(_np(y), reference(x @ kernel + bias), rtol=1e-5, atol=1e-6)


def test_dense_rank3_input_uses_last_axis(rng):
    layer = Dense(2, bias_initializer="ones")
    x = rng.standard_normal((2, 4, 3)).astype(np.float32)
    y = layer(tf.constant(x))
    assert tuple(y.shape) == (2, 4, 2)
    np.testing.assert_allclose(_np(y), x @ layer.kernel.numpy() + 1.0, rtol=1e-5, atol=1e-6)


def test_dense_without_bias():
    layer = Dense(3, use_bias=False)
    layer(tf.ones((1, 2)))
    assert layer.bias is None
    assert [v.name for v in layer.trainable_variables] == ["dense/kernel:0"]


def test_dense_gradients_match_numpy_formula(rng):
    layer = Dense(3, activation="relu", bias_initializer="random_normal")
    x = rng.standard_normal((4, 5)).astype(np.float32)
    with tf.GradientTape() as tape:
        y = layer(tf.constant(x))
        loss = tf.reduce_mean(y ** 2)
    dk, db = tape.gradient(loss, layer.trainable_variables)
    z = x @ layer.kernel.numpy() + layer.bias.numpy()
    dz = 2 * _relu(z) / z.size * (z > 0)
    np.testing.assert_allclose(_np(dk), x.T @ dz, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(_np(db), dz.sum(0), rtol=1e-5, atol=1e-7)


def test_dense_gradient_with_respect_to_input(rng):
    layer = Dense(2, activation="tanh")
    x = tf.constant(rng.standard_normal((3, 4)).astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        s = tf.reduce_sum(layer(x))
    g = tape.gradient(s, x)
    z = _np(x) @ layer.kernel.numpy()
    np.testing.assert_allclose(_np(g), (1 - np.tanh(z) ** 2) @ layer.kernel.numpy().T, rtol=1e-5, atol=1e-6)


def test_glorot_uniform_is_seeded_and_bounded():
    tf.random.set_seed(7)
    a = Dense(30)
    a(tf.ones((1, 20)))
    tf.random.set_seed(7)
    b = Dense(30)
    b(tf.ones((1, 20)))
    np.testing.assert_array_equal(a.kernel.numpy(), b.kernel.numpy())
    limit = np.sqrt(6 / (20 + 30))
    assert np.abs(a.kernel.numpy()).max() <= limit
    assert np.abs(a.kernel.numpy()).max() > 0.8 * limit
    np.testing.assert_array_equal(a.bias.numpy(), np.zeros(30, np.float32))


def test_unknown_activation():
    with pytest.raises(ValueError, match="Unknown activation function: 'nope'"):
        Dense(2, activation="nope")


def test_input_gradient_regularization_second_order(rng):
    """Seed 003: a gradient of an input gradient's norm w.r.t. the layer's variables."""
    x = tf.constant(rng.standard_normal((7, 5)).astype(np.float32))
    layer = Dense(10, activation=tf.nn.relu)
    with tf.GradientTape() as t2:
        with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            out = tf.reduce_sum(layer(x) ** 2)
        g1 = t1.gradient(out, x)
        g1_mag = tf.norm(g1)
    dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
    assert [tuple(g.shape) for g in dg1_mag] == [(5, 10), (10,)]
    # Check the kernel part against central differences of the same float64 formula.
    xv, k, b = _np(x).astype(np.float64), layer.kernel.numpy().astype(np.float64), layer.bias.numpy()

    def mag(kernel):
        z = xv @ kernel + b
        return np.linalg.norm((2 * _relu(z) * (z > 0)) @ kernel.T)

    eps, i, j = 1e-6, 1, 2
    kp, km = k.copy(), k.copy()
    kp[i, j] += eps
    km[i, j] -= eps
    np.testing.assert_allclose(_np(dg1_mag[0])[i, j], (mag(kp) - mag(km)) / (2 * eps), rtol=1e-3)


# -- tracking and training mode ----------------------------------------------------------

class Block(Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.layers = [Dense(3), Dense(2)]
        self.norm = BatchNormalization()
        self.scale = tf.Variable(2.0, name="scale")

    def call(self, x, training=None):
        for layer in self.layers:
            x = layer(x)
        return self.norm(x) * self.scale


def test_nested_layer_tracking_order():
    block = Block()
    block(tf.ones((4, 5)))
    assert [v.name for v in block.trainable_weights] == [
        "scale:0", "block/dense/kernel:0", "block/dense/bias:0", "block/dense_1/kernel:0",
        "block/dense_1/bias:0", "block/batch_normalization/gamma:0",
        "block/batch_normalization/beta:0"]
    assert [v.name for v in block.non_trainable_weights] == [
        "block/batch_normalization/moving_mean:0", "block/batch_normalization/moving_variance:0"]
    assert block.weights == block.trainable_weights + block.non_trainable_weights


def test_frozen_layer_reports_all_weights_as_non_trainable():
    block = Block()
    block(tf.ones((4, 5)))
    block.trainable = False
    assert block.trainable_weights == []
    assert len(block.non_trainable_weights) == 9
    assert not block.layers[0].trainable


def test_reassigning_an_attribute_untracks_the_old_variable():
    layer = Layer()
    layer.w = tf.Variable(1.0, name="old")
    layer.w = tf.Variable(2.0, name="new")
    assert [v.name for v in layer.trainable_weights] == ["new:0"]


def test_training_mode_propagates_to_inner_layers(rng):
    block = Block()
    x = tf.constant(rng.standard_normal((6, 5)).astype(np.float32))
    block(x)  # inference: moving stats untouched
    np.testing.assert_array_equal(block.norm.moving_mean.numpy(), np.zeros(2, np.float32))
    block(x, training=True)  # inner BatchNormalization inherits training=True
    assert np.any(block.norm.moving_mean.numpy() != 0)


def test_get_and_set_weights():
    layer = Dense(2)
    layer(tf.ones((1, 3)))
    new = [np.arange(6, dtype=np.float32).reshape(3, 2), np.array([1., -1.], np.float32)]
    layer.set_weights(new)
    for got, want in zip(layer.get_weights(), new):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="not compatible"):
        layer.set_weights([np.zeros((2, 2)), np.zeros(2)])


# -- BatchNormalization -------------------------------------------------------------------

EPS = 1e-3


def _bn_layer(x_shape, rng, **kwargs):
    bn = BatchNormalization(**kwargs)
    bn(tf.zeros(x_shape))  # build
    channels = bn.gamma.shape[0]
    bn.gamma.assign(rng.uniform(0.5, 2.0, channels).astype(np.float32))
    bn.beta.assign(rng.standard_normal(channels).astype(np.float32))
    return bn


def test_batchnorm_variables():
    bn = BatchNormalization()
    bn(tf.ones((2, 3)))
    assert [v.name for v in bn.trainable_variables] == ["batch_normalization/gamma:0",
                                                        "batch_normalization/beta:0"]
    assert [v.name for v in bn.non_trainable_variables] == ["batch_normalization/moving_mean:0",
                                                            "batch_normalization/moving_variance:0"]
    assert all(tuple(v.shape) == (3,) for v in bn.variables)
    np.testing.assert_array_equal(bn.moving_variance.numpy(), np.ones(3, np.float32))


def test_batchnorm_training_uses_batch_moments(rng):
    bn = _bn_layer((8, 3), rng)
    x = (rng.standard_normal((8, 3)) * 3 + 1).astype(np.float32)
    y = bn(tf.constant(x), training=True)
    mean, var = x.mean(0), x.var(0)
    expected = (x - mean) / np.sqrt(var + EPS) * bn.gamma.numpy() + bn.beta.numpy()
    np.testing.assert_allclose(_np(y), expected, rtol=1e-5, atol=1e-5)


def test_batchnorm_inference_uses_moving_statistics(rng):
    bn = _bn_layer((8, 3), rng)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    y = bn(tf.constant(x))  # training defaults to False
    np.testing.assert_allclose(_np(y), x / np.sqrt(1 + EPS) * bn.gamma.numpy() + bn.beta.numpy(),
                               rtol=1e-6, atol=1e-6)
    bn.moving_mean.assign([1., 2., 3.])
    bn.moving_variance.assign([4., 5., 6.])
    y = bn(tf.constant(x), training=False)
    expected = (x - [1., 2., 3.]) / np.sqrt(np.array([4., 5., 6.]) + EPS) * bn.gamma.numpy() + bn.beta.numpy()
    np.testing.assert_allclose(_np(y), expected, rtol=1e-5, atol=1e-5)


def test_batchnorm_moving_statistics_update_rule(rng):
    bn = BatchNormalization(momentum=0.9)
    xs = [(rng.standard_normal((5, 2)) * 2 + 3).astype(np.float32) for _ in range(3)]
    mm, mv = np.zeros(2, np.float32), np.ones(2, np.float32)
    decay = np.float32(1 - 0.9)
    for x in xs:
        bn(tf.constant(x), training=True)
        # Keras: moving -= (moving - batch) * (1 - momentum), in float32.
        mm = mm - (mm - x.mean(0)) * decay
        mv = mv - (mv - x.var(0)) * decay
        np.testing.assert_allclose(bn.moving_mean.numpy(), mm, rtol=1e-6)
        np.testing.assert_allclose(bn.moving_variance.numpy(), mv, rtol=1e-6)
    before = bn.moving_mean.numpy()
    bn(tf.constant(xs[0]), training=False)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), before)


def test_frozen_batchnorm_always_infers(rng):
    bn = BatchNormalization()
    bn.trainable = False
    x = rng.standard_normal((4, 2)).astype(np.float32)
    y = bn(tf.constant(x), training=True)
    np.testing.assert_allclose(_np(y), x / np.sqrt(1 + EPS), rtol=1e-6)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), np.zeros(2, np.float32))


def test_batchnorm_training_gradients_match_numpy(rng):
    bn = _bn_layer((6, 3), rng)
    x = tf.constant(rng.standard_normal((6, 3)).astype(np.float32))
    w = rng.standard_normal((6, 3)).astype(np.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(bn(x, training=True) * w)
    dx, dgamma, dbeta = tape.gradient(loss, [x, bn.gamma, bn.beta])
    xv = _np(x).astype(np.float64)
    xhat = (xv - xv.mean(0)) / np.sqrt(xv.var(0) + EPS)
    gamma = bn.gamma.numpy().astype(np.float64)
    expected_dx = gamma / np.sqrt(xv.var(0) + EPS) * (w - w.mean(0) - xhat * (w * xhat).mean(0))
    np.testing.assert_allclose(_np(dx), expected_dx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(dgamma), (w * xhat).sum(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(dbeta), w.sum(0), rtol=1e-5)


def test_batchnorm_moving_stats_have_no_gradient(rng):
    bn = BatchNormalization()
    x = tf.constant(rng.standard_normal((4, 2)).astype(np.float32))
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(bn(x, training=True) ** 2)
    assert tape.gradient(y, [bn.moving_mean, bn.moving_variance]) == [None, None]
    assert [v.name for v in tape.watched_variables()] == ["batch_normalization/gamma:0",
                                                          "batch_normalization/beta:0"]


def test_seed_003_batchnorm_couples_examples_in_jacobian(rng):
    x = tf.constant(rng.standard_normal((7, 5)).astype(np.float32))
    layer1 = Dense(8, activation=tf.nn.elu)
    bn = BatchNormalization()
    layer2 = Dense(6, activation=tf.nn.elu)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y_train = layer2(bn(layer1(x), training=True))
        y_infer = layer2(bn(layer1(x), training=False))
    j = _np(tape.jacobian(y_train, x))
    assert j.shape == (7, 6, 7, 5)
    off_diagonal = j.copy()
    for b in range(7):
        off_diagonal[b, :, b, :] = 0
    assert np.abs(off_diagonal).max() > 1e-3  # "These slices are not diagonal"
    jb = tape.batch_jacobian(y_train, x)
    assert tuple(jb.shape) == (7, 6, 5)
    j_inf = _np(tape.jacobian(y_infer, x))
    for b in range(7):
        j_inf[b, :, b, :] = 0
    assert np.abs(j_inf).max() == 0


def test_batchnorm_channels_first_axis(rng):
    bn = _bn_layer((4, 3, 5), rng, axis=1)
    x = rng.standard_normal((4, 3, 5)).astype(np.float32)
    y = bn(tf.constant(x), training=True)
    mean, var = x.mean((0, 2), keepdims=True), x.var((0, 2), keepdims=True)
    g, b = bn.gamma.numpy()[None, :, None], bn.beta.numpy()[None, :, None]
    np.testing.assert_allclose(_np(y), (x - mean) / np.sqrt(var + EPS) * g + b, rtol=1e-5, atol=1e-5)
    assert tuple(bn.moving_mean.shape) == (3,)


def test_batchnorm_4d_fused_uses_unbiased_moving_variance(rng):
    bn = BatchNormalization(momentum=0.5)
    x = rng.standard_normal((2, 3, 3, 4)).astype(np.float32)
    y = bn(tf.constant(x), training=True)
    mean, var = x.mean((0, 1, 2)), x.var((0, 1, 2))
    np.testing.assert_allclose(_np(y), (x - mean) / np.sqrt(var + EPS), rtol=1e-5, atol=1e-5)
    n = 2 * 3 * 3
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.5 * mean, rtol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.5 + 0.5 * var * n / (n - 1), rtol=1e-6)


def test_batchnorm_bad_axis():
    with pytest.raises(ValueError, match="Invalid value for `axis`"):
        BatchNormalization(axis=3)(tf.ones((2, 3)))


def test_reassigning_the_same_variable_keeps_its_place():
    layer = Layer()
    layer.a = tf.Variable(1.0, name="a")
    layer.b = tf.Variable(2.0, name="b")
    layer.a = layer.a
    assert [v.name for v in layer.trainable_weights] == ["a:0", "b:0"]
    del layer.b
    assert [v.name for v in layer.trainable_weights] == ["a:0"]


# -- initializers ---------------------------------------------------------------------------

def test_initializers_by_name_and_their_distributions():
    from tapeflow.keras import initializers
    tf.random.set_seed(3)
    he = initializers.get("he_normal")((400, 300))
    assert he.dtype == tf.float32
    # He normal: truncated normal with std sqrt(2 / fan_in) after truncation.
    np.testing.assert_allclose(_np(he).std(), np.sqrt(2 / 400), rtol=0.03)
    assert np.abs(_np(he)).max() <= 2 * np.sqrt(2 / 400) / 0.87962566103423978 + 1e-6
    lecun = initializers.get("LecunUniform")((50, 7, 7), dtype=tf.float64)  # conv-style fans
    assert lecun.dtype == tf.float64
    assert np.abs(_np(lecun)).max() <= np.sqrt(3 / (7 * 50))
    np.testing.assert_array_equal(_np(initializers.Constant(2.5)((2, 2))), np.full((2, 2), 2.5, np.float32))
    np.testing.assert_array_equal(_np(initializers.get("ones")((3,))), np.ones(3, np.float32))
    with pytest.raises(ValueError, match="Unknown initializer: 'nope'"):
        initializers.get("nope")
