"""Dropout, Flatten, Reshape, Activation, ReLU, Softmax, Concatenate, Add, Embedding,
LayerNormalization: values and configs against TensorFlow 2.21 (Keras 3.15.1).

Constants marked "TF 2.21" were printed by TensorFlow 2.21.0 running the same program.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import backend
from tapeflow.keras.random_bits import SeedGenerator

K = tf.keras
X = np.array([[1., 2., 4.], [-1., 0., 3.]], "float32")


@pytest.fixture(autouse=True)
def _setup(request):
    backend.clear_session()
    tf.random.set_seed(0)
    if not request.node.name.endswith("_compiled"):
        request.getfixturevalue("numpy_backend")


# -- Dropout ----------------------------------------------------------------------------------

def test_dropout_training_drops_and_scales_inference_is_identity():
    layer = K.layers.Dropout(0.5, seed=3)
    x = np.ones((40, 50), "float32")
    out = layer(x, training=True).numpy()
    assert set(np.unique(out)) <= {0.0, 2.0}             # kept values scaled by 1 / (1 - rate)
    assert 0.45 < (out == 0).mean() < 0.55
    np.testing.assert_array_equal(layer(x).numpy(), x)   # TF 2.21: the default is inference
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    assert layer.weights == []                           # TF 2.21: Dropout has no weights


def test_dropout_draws_a_new_mask_per_call_and_a_seed_repeats_them():
    x = np.ones((8, 16), "float32")
    a, b = K.layers.Dropout(0.5, seed=7), K.layers.Dropout(0.5, seed=7)
    first, second = a(x, training=True).numpy(), a(x, training=True).numpy()
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(b(x, training=True).numpy(), first)
    np.testing.assert_array_equal(b(x, training=True).numpy(), second)


def test_dropout_noise_shape_shares_the_mask_along_axes_of_one():
    out = K.layers.Dropout(0.5, noise_shape=(None, 1), seed=3)(np.ones((64, 3), "float32"),
                                                               training=True).numpy()
    # TF 2.21 (seed 3): rows all 0 or all 2, e.g. [[0,0,0],[2,2,2],[2,2,2],[2,2,2]] for 4 rows
    assert all(len(set(row)) == 1 for row in out.tolist())
    assert 0 < (out[:, 0] == 0).sum() < 64


def test_dropout_rate_is_checked_and_rate_zero_is_identity():
    for rate in (1.5, -0.1):
        with pytest.raises(ValueError, match="Expected a float value between 0 and 1"):
            K.layers.Dropout(rate)
    np.testing.assert_array_equal(K.layers.Dropout(0.0)(X, training=True).numpy(), X)
    # TF 2.21's config keys
    assert K.layers.Dropout(0.2, name="d").get_config() == {
        "name": "d", "trainable": True, "dtype": "float32", "rate": 0.2, "seed": None, "noise_shape": None}


def test_seed_generator_noise_is_uniform_and_uncorrelated():
    gen = SeedGenerator(11)
    u, v = gen.uniform((200_000,), tf.float64).numpy(), gen.uniform((200_000,), tf.float64).numpy()
    assert 0 <= u.min() and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 0.01
    assert abs(np.corrcoef(u, v)[0, 1]) < 0.01
    counts = np.histogram(u, 10, (0, 1))[0]
    assert ((counts - 20_000) ** 2 / 20_000).sum() < 30  # chi-square, 9 dof: p < 0.001 at 27.9


def test_dropout_in_a_model_follows_training_through_call_fit_and_predict():
    inp = K.Input((4,))
    model = K.Model(inp, K.layers.Dropout(0.999, seed=1)(inp))
    ones = np.ones((2, 4), "float32")
    # TF 2.21: predict and a plain call infer; training=True drops (nearly) everything
    np.testing.assert_array_equal(model.predict(ones, verbose=0), ones)
    np.testing.assert_array_equal(model(ones).numpy(), ones)
    assert (model(ones, training=True).numpy() == 0).all()


def _dropout_fit_masks_differ_per_step():
    """A Dense model with Dropout before its output: two identical batches in a row
    give different losses in fit (the mask changes), and evaluate is deterministic."""
    model = K.Sequential([K.Input((4,)), K.layers.Dense(8, kernel_initializer="ones"),
                          K.layers.Dropout(0.5, seed=5), K.layers.Dense(1, kernel_initializer="ones")])
    model.compile(K.optimizers.SGD(0.0), "mse")
    x, y = np.ones((4, 4), "float32"), np.zeros((4, 1), "float32")
    losses = model.fit(x, y, batch_size=4, epochs=4, verbose=0, shuffle=False).history["loss"]
    assert len(set(losses)) > 1   # one traced step, four batches: the mask changed
    assert model.evaluate(x, y, verbose=0) == model.evaluate(x, y, verbose=0) == pytest.approx(1024.0)  # (4 * 8) ** 2


def test_dropout_fit_draws_a_new_mask_per_step():
    _dropout_fit_masks_differ_per_step()


def test_dropout_fit_draws_a_new_mask_per_step_compiled():
    _dropout_fit_masks_differ_per_step()


# -- shape layers -------------------------------------------------------------------------------

def test_flatten_and_reshape():
    x = np.arange(12.0, dtype="float32").reshape(1, 2, 3, 2)
    np.testing.assert_array_equal(K.layers.Flatten()(x).numpy(), np.arange(12.0).reshape(1, 12))
    # TF 2.21 channels_first
    np.testing.assert_array_equal(K.layers.Flatten(data_format="channels_first")(x).numpy(),
                                  [[0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11]])
    assert tuple(K.layers.Flatten()(np.ones((2,), "float32")).shape) == (2, 1)   # TF 2.21
    assert tuple(K.layers.Reshape((-1, 2))(np.ones((2, 3, 4), "float32")).shape) == (2, 6, 2)
    with pytest.raises(ValueError, match="total size of the tensor must be unchanged"):
        K.layers.Reshape((5,))(np.ones((2, 3, 4), "float32"))


def test_flatten_in_a_functional_model_has_keras_shapes():
    inp = K.Input((3, 4))
    out = K.layers.Dense(2)(K.layers.Flatten()(inp))
    assert tuple(out.shape) == (None, 2)
    model = K.Model(inp, out)
    assert model.predict(np.ones((5, 3, 4), "float32"), verbose=0).shape == (5, 2)


# -- activations -----------------------------------------------------------------------------

def test_activation_relu_softmax_values():
    # TF 2.21
    np.testing.assert_allclose(K.layers.Softmax()(X).numpy(),
                               [[0.04201006516814232, 0.11419519037008286, 0.8437947034835815],
                                [0.01714782603085041, 0.04661262035369873, 0.9362395405769348]],
                               rtol=1e-6)
    np.testing.assert_allclose(K.layers.Activation("tanh")(X).numpy(), np.tanh(X), rtol=1e-6)
    relu = K.layers.ReLU(max_value=1.0, negative_slope=0.1, threshold=0.5)
    np.testing.assert_allclose(relu(np.array([-1., 0.2, 0.7, 3.], "float32")).numpy(),
                               [-0.15, -0.03, 0.7, 1.0], rtol=1e-6)   # TF 2.21
    np.testing.assert_array_equal(K.layers.ReLU()(X).numpy(), np.maximum(X, 0))
    with pytest.raises(ValueError, match="negative_slope of a ReLU layer cannot be a negative value"):
        K.layers.ReLU(negative_slope=-1.0)


# -- merging ----------------------------------------------------------------------------------

def test_concatenate_and_add():
    np.testing.assert_array_equal(
        K.layers.Concatenate(axis=1)([np.ones((2, 1), "float32"), np.zeros((2, 2), "float32")]).numpy(),
        [[1, 0, 0], [1, 0, 0]])
    with pytest.raises(ValueError, match="matching shapes except for the concatenation axis"):
        K.layers.Concatenate()([np.ones((2, 1), "float32"), np.ones((3, 1), "float32")])
    np.testing.assert_array_equal(K.layers.Add()([X, X, X]).numpy(), 3 * X)
    a, b = K.Input((3,)), K.Input((2,))
    out = K.layers.Concatenate()([a, K.layers.Dense(3)(b)])
    assert tuple(out.shape) == (None, 6)


# -- weights ----------------------------------------------------------------------------------

def test_embedding_looks_up_rows():
    emb = K.layers.Embedding(5, 2)
    emb.build(None)
    emb.embeddings.assign(np.arange(10, dtype="float32").reshape(5, 2))
    # TF 2.21
    np.testing.assert_array_equal(emb(np.array([[0, 4], [2, 2]])).numpy(),
                                  [[[0.0, 1.0], [8.0, 9.0]], [[4.0, 5.0], [4.0, 5.0]]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(emb(np.array([1, 1, 3])))
    np.testing.assert_array_equal(tf.convert_to_tensor(tape.gradient(loss, emb.embeddings)).numpy(),
                                  [[0, 0], [2, 2], [0, 0], [1, 1], [0, 0]])


def test_layer_normalization_matches_tensorflow():
    np.testing.assert_allclose(K.layers.LayerNormalization()(X).numpy(),  # TF 2.21
                               [[-1.0687015056610107, -0.2671753168106079, 1.3358769416809082],
                                [-0.9804109930992126, -0.392164409160614, 1.372575283050537]], rtol=1e-5)
    ln = K.layers.LayerNormalization(epsilon=0.1)
    ln.build((None, 3))
    ln.gamma.assign([1., 2., 3.])
    ln.beta.assign([0.5, 0., -0.5])
    np.testing.assert_allclose(ln(X).numpy(),  # TF 2.21
                               [[-0.536255419254303, -0.5181276798248291, 3.385958194732666],
                                [-0.46403738856315613, -0.7712299227714539, 3.548957109451294]],
                               rtol=1e-5)
    assert [w.name.split("/")[-1] for w in ln.weights] == ["gamma:0", "beta:0"]


def test_dropout_mask_compiled_by_numba_equals_eager_compiled():
    """The noise ops (int64 multiply and floormod) compile: the same seed gives the same masks."""
    traced, eager = K.layers.Dropout(0.5, seed=4), K.layers.Dropout(0.5, seed=4)
    x = np.ones((3, 5), "float32")

    @tf.function(jit_compile=True)
    def step(x):
        return traced(x, training=True)

    first, second = step(x).numpy(), step(x).numpy()
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(first, eager(x, training=True).numpy())
    np.testing.assert_array_equal(second, eager(x, training=True).numpy())


def test_training_flows_through_a_subclassed_model():
    class Net(K.Model):
        def __init__(self):
            super().__init__()
            self.dense = K.layers.Dense(4, kernel_initializer="ones")
            self.drop = K.layers.Dropout(0.999, seed=2)

        def call(self, x, training=False):
            return self.drop(self.dense(x))   # training reaches Dropout without being passed

    net = Net()
    ones = np.ones((2, 3), "float32")
    np.testing.assert_array_equal(net(ones).numpy(), np.full((2, 4), 3.0))
    assert (net(ones, training=True).numpy() == 0).all()
    np.testing.assert_array_equal(net.predict(ones, verbose=0), np.full((2, 4), 3.0))


def test_layer_normalization_axis_is_checked():
    with pytest.raises(ValueError, match="Invalid value for `axis` argument"):
        K.layers.LayerNormalization(axis=5)(X)


def test_unseeded_dropout_repeats_after_set_seed():
    x = np.ones((4, 8), "float32")
    tf.random.set_seed(5)
    first = K.layers.Dropout(0.5)(x, training=True).numpy()
    tf.random.set_seed(5)
    np.testing.assert_array_equal(K.layers.Dropout(0.5)(x, training=True).numpy(), first)
