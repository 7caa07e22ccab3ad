"""Keras 3's convolution, pooling and spatial layers: values against Keras 3.15.1's facts
(keras_facts.py), configs, saving and loading, aliases, errors; then TensorFlow's "advanced
quickstart" (a subclassed Conv2D -> Flatten -> Dense model trained with GradientTape in a
tf.function) and Keras' "simple MNIST convnet" on synthetic MNIST-shaped data, their losses
falling."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import backend
from tapeflow.testing import check_gradients

from conv import keras_table
from conv.keras_facts import FACTS

K = tf.keras
ENTRIES = [pytest.param(e, id=keras_table.name(i, e)) for i, e in enumerate(keras_table.LAYERS)]


@pytest.fixture(autouse=True)
def _setup(numpy_backend):
    backend.clear_session()
    tf.random.set_seed(0)


@pytest.mark.parametrize("entry", ENTRIES)
def test_layer_matches_keras(entry):
    i = keras_table.LAYERS.index(entry)
    np.testing.assert_allclose(keras_table.facts(K.layers, entry),
                               FACTS[keras_table.name(i, entry)], rtol=2e-5, atol=2e-4)


def test_configs_round_trip_and_aliases():
    conv = K.layers.Conv2D(4, 3, strides=2, padding="same", dilation_rate=1, activation="relu")
    config = conv.get_config()
    # Keras 3.15.1's keys and normalized values
    assert config["kernel_size"] == (3, 3) and config["strides"] == (2, 2)
    assert config["padding"] == "same" and config["data_format"] == "channels_last"
    assert config["groups"] == 1 and config["activation"] == "relu"
    assert config["kernel_initializer"]["class_name"] == "GlorotUniform"
    again = K.layers.Conv2D.from_config(config)
    assert again.get_config() == config
    assert K.layers.MaxPooling2D().get_config()["pool_size"] == (2, 2)
    assert K.layers.MaxPooling2D().get_config()["strides"] == (2, 2)
    dw = K.layers.DepthwiseConv2D(3).get_config()
    assert "filters" not in dw and dw["depthwise_initializer"]["class_name"] == "GlorotUniform"
    assert K.layers.Conv2DTranspose(3, 2).get_config()["output_padding"] is None
    assert K.layers.UpSampling1D().get_config()["size"] == 2
    assert K.layers.Cropping1D().get_config()["cropping"] == (1, 1)
    assert K.layers.ZeroPadding2D().get_config()["padding"] == ((1, 1), (1, 1))
    for alias, cls in [("Convolution2D", "Conv2D"), ("MaxPool2D", "MaxPooling2D"),
                       ("AvgPool2D", "AveragePooling2D"), ("GlobalAvgPool2D",
                                                           "GlobalAveragePooling2D"),
                       ("GlobalMaxPool1D", "GlobalMaxPooling1D"),
                       ("SeparableConvolution2D", "SeparableConv2D"),
                       ("Convolution3DTranspose", "Conv3DTranspose")]:
        assert getattr(K.layers, alias) is getattr(K.layers, cls)
    assert tf.keras.layers.Conv2D(2, 3)(tf.ones([1, 4, 4, 1])).shape == (1, 2, 2, 2)


def test_adaptive_pooling_configs_and_errors(tmp_path):
    # Keras 3.15.1's config and errors
    config = K.layers.AdaptiveAveragePooling2D(3).get_config()
    assert config["output_size"] == (3, 3) and config["data_format"] == "channels_last"
    assert K.layers.AdaptiveMaxPooling1D(4).get_config()["output_size"] == (4,)
    with pytest.raises(TypeError, match="must be an integer or \\(height, width\\) tuple"):
        K.layers.AdaptiveMaxPooling2D((1, 2, 3))
    with pytest.raises(ValueError, match="For 1D input, `output_size` tuple must have length 1"):
        K.layers.AdaptiveMaxPooling1D((1, 2))
    with pytest.raises(ValueError, match="Invalid data_format: x"):
        K.layers.AdaptiveMaxPooling3D(2, data_format="x")
    model = K.Sequential([K.Input((7, 6, 2)), K.layers.AdaptiveMaxPooling2D((2, 3)),
                          K.layers.Flatten(), K.layers.Dense(2)])
    x = np.sin(np.arange(2 * 7 * 6 * 2) * 0.3).reshape(2, 7, 6, 2).astype("float32")
    model.save(str(tmp_path / "adaptive.keras"))
    loaded = K.models.load_model(str(tmp_path / "adaptive.keras"))
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)
    assert type(loaded.layers[0]).__name__ == "AdaptiveMaxPooling2D"


def test_conv_lstm_config_states_saving_and_gradients(tmp_path):
    layer = K.layers.ConvLSTM2D(2, 3, return_state=True)
    config = layer.get_config()
    # Keras 3.15.1's keys and values
    assert sorted(config) == sorted([
        "activation", "activity_regularizer", "bias_constraint", "bias_initializer",
        "bias_regularizer", "data_format", "dilation_rate", "dropout", "dtype", "filters",
        "go_backwards", "kernel_constraint", "kernel_initializer", "kernel_regularizer",
        "kernel_size", "name", "padding", "recurrent_activation", "recurrent_constraint",
        "recurrent_dropout", "recurrent_initializer", "recurrent_regularizer",
        "return_sequences", "return_state", "seed", "stateful", "strides", "trainable",
        "unit_forget_bias", "unroll", "use_bias", "zero_output_for_mask"])
    assert config["kernel_size"] == (3, 3) and config["strides"] == (1, 1)
    assert config["recurrent_initializer"]["class_name"] == "Orthogonal"
    out = layer(np.ones([1, 3, 5, 5, 1], "float32"))
    assert [tuple(o.shape) for o in out] == [(1, 3, 3, 2)] * 3
    assert layer.compute_mask(None, tf.ones([1, 3], tf.bool)) == [None, None, None]
    assert [w.shape for w in layer.get_weights()] == [(3, 3, 1, 8), (3, 3, 2, 8), (8,)]
    assert layer.get_weights()[2].tolist() == [0, 0, 1, 1, 0, 0, 0, 0]   # unit_forget_bias
    with pytest.raises(ValueError, match="`strides > 1` is not compatible with `dilation_rate"):
        K.layers.ConvLSTM2D(2, 3, strides=2, dilation_rate=2)
    model = K.Sequential([K.Input((3, 5, 4, 2)), K.layers.ConvLSTM2D(2, 2, padding="same"),
                          K.layers.Flatten(), K.layers.Dense(1)])
    x = np.sin(np.arange(2 * 3 * 5 * 4 * 2) * 0.3).reshape(2, 3, 5, 4, 2).astype("float32")
    model.save(str(tmp_path / "convlstm.keras"))
    loaded = K.models.load_model(str(tmp_path / "convlstm.keras"))
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)
    cell = K.layers.ConvLSTM1D(2, 2, dtype="float64")
    cell(np.zeros([1, 2, 4, 1]))
    check_gradients(lambda v: cell(v) ** 2, np.sin(np.arange(8.0)).reshape(1, 2, 4, 1), order=1)


def test_spatial_dropout_drops_whole_channels():
    layer = K.layers.SpatialDropout2D(0.5, seed=3)
    y = layer(tf.ones([4, 3, 3, 8]), training=True).numpy()
    per_channel = y.reshape(4, 9, 8)
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert (per_channel == per_channel[:, :1, :]).all()       # one draw per sample and channel
    assert 0 < (y == 0).mean() < 1
    assert (layer(tf.ones([1, 2, 2, 3])).numpy() == 1).all()  # inference: identity
    y1 = K.layers.SpatialDropout1D(0.5, seed=1)(tf.ones([2, 5, 6]), training=True).numpy()
    assert (y1 == y1[:, :1, :]).all()


def test_errors():
    with pytest.raises(ValueError, match="strides > 1` not supported in conjunction"):
        K.layers.Conv2D(2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="evenly divisible by the number of groups"):
        K.layers.Conv2D(3, 3, groups=2)
    with pytest.raises(ValueError, match="padding"):
        K.layers.Conv2D(3, 3, padding="causal")
    with pytest.raises(ValueError, match="kernel_size"):
        K.layers.Conv2D(3, (3, 3, 3))
    with pytest.raises(TypeError):
        K.layers.AveragePooling2D()          # Keras 3: pool_size has no default


def test_cnn_saves_and_loads(tmp_path):
    model = K.Sequential([K.Input((8, 8, 2)), K.layers.Conv2D(3, 3, padding="same"),
                          K.layers.MaxPooling2D(), K.layers.SeparableConv2D(4, 2),
                          K.layers.GlobalAveragePooling2D(), K.layers.Dense(2)])
    x = np.sin(np.arange(2 * 8 * 8 * 2) * 0.3).reshape(2, 8, 8, 2).astype("float32")
    path = str(tmp_path / "cnn.keras")
    model.save(path)
    loaded = K.models.load_model(path)
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)
    assert [type(layer).__name__ for layer in loaded.layers] == \
        ["Conv2D", "MaxPooling2D", "SeparableConv2D", "GlobalAveragePooling2D", "Dense"]


def _mnist_like(n, seed=0):
    """Synthetic MNIST-shaped data a convnet can learn: the label decides where a bright
    square sits in a 28x28 image, plus noise."""
    r = np.random.default_rng(seed)
    y = r.integers(0, 10, n)
    x = r.uniform(0, 0.3, (n, 28, 28)).astype("float32")
    for i, label in enumerate(y):
        row, col = divmod(int(label), 5)
        x[i, 4 + 12 * row:10 + 12 * row, 2 + 5 * col:7 + 5 * col] += 0.7
    return x, y


class MyModel(tf.keras.Model):
    """TensorFlow's advanced quickstart model, unchanged."""

    def __init__(self):
        super().__init__()
        self.conv1 = tf.keras.layers.Conv2D(32, 3, activation="relu")
        self.flatten = tf.keras.layers.Flatten()
        self.d1 = tf.keras.layers.Dense(128, activation="relu")
        self.d2 = tf.keras.layers.Dense(10)

    def call(self, x):
        x = self.conv1(x)
        x = self.flatten(x)
        x = self.d1(x)
        return self.d2(x)


def test_advanced_quickstart(numpy_backend):
    """The quickstart's training loop as written (tf.function train_step, GradientTape,
    Adam, SparseCategoricalCrossentropy(from_logits=True), metrics), on 256 synthetic images
    with the conv's filters cut to 8 and Dense to 32 for speed."""
    x_train, y_train = _mnist_like(256)
    x_train = x_train[..., tf.newaxis].astype("float32")
    train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(256, seed=0).batch(32)
    model = MyModel()
    model.conv1 = tf.keras.layers.Conv2D(8, 3, activation="relu")
    model.d1 = tf.keras.layers.Dense(32, activation="relu")
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam()
    train_loss = tf.keras.metrics.Mean(name="train_loss")
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = loss_object(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_loss(loss)
        train_accuracy(labels, predictions)

    losses = []
    for _ in range(3):
        train_loss.reset_state()
        train_accuracy.reset_state()
        for images, labels in train_ds:
            train_step(images, labels)
        losses.append(float(train_loss.result()))
    assert losses[-1] < 0.7 * losses[0], losses
    assert float(train_accuracy.result()) > 0.5


def test_keras_simple_mnist_convnet(numpy_backend):
    """Keras' "Simple MNIST convnet" example, layer for layer (filters cut to 8/16 for
    speed), compiled and fit on 384 synthetic images (batches of 32): the loss falls."""
    num_classes, input_shape = 10, (28, 28, 1)
    x_train, y_train = _mnist_like(384, seed=1)
    x_train = np.expand_dims(x_train.astype("float32"), -1)
    y_train = np.eye(num_classes, dtype="float32")[y_train]   # keras.utils.to_categorical
    model = tf.keras.Sequential([
        tf.keras.Input(shape=input_shape),
        tf.keras.layers.Conv2D(8, kernel_size=(3, 3), activation="relu"),
        tf.keras.layers.MaxPooling2D(pool_size=(2, 2)),
        tf.keras.layers.Conv2D(16, kernel_size=(3, 3), activation="relu"),
        tf.keras.layers.MaxPooling2D(pool_size=(2, 2)),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dropout(0.5),
        tf.keras.layers.Dense(num_classes, activation="softmax"),
    ])
    model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
    history = model.fit(x_train, y_train, batch_size=32, epochs=3, validation_split=0.1,
                        verbose=0)
    # Keras 3.15.1 (TensorFlow 2.21) on this data: loss 2.277, 2.123, 1.975; val_accuracy
    # 0.41, 0.69, 0.85 (its own initial weights)
    loss = history.history["loss"]
    assert loss[0] > loss[1] > loss[2] and loss[-1] < 0.95 * loss[0], loss
    assert history.history["val_accuracy"][-1] > 0.3
