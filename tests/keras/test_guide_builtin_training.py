"""The keras-io guide "Training & evaluation with the built-in methods" (its TensorFlow-backend
programs), run on synthetic data of MNIST's shapes (tests/keras/guide_data.py) with fewer
samples and epochs: the guide's models, compile/fit/evaluate/predict calls, custom losses and
metrics, ``add_loss``, validation splits, ``tf.data`` datasets, ``PyDataset``, class and sample
weights, a multi-input multi-output model, callbacks, checkpoints and a schedule. Each program is
a function of the ``tf`` and ``keras`` modules, so TensorFlow 2.21 ran the same code for the
figures quoted (where ``shuffle=False`` and seeded initial weights make them comparable).
"""
import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import keras
from tapeflow.keras import backend

from guide_data import digits, initial_weights

X_TRAIN, Y_TRAIN = digits(512, seed=1)
X_TEST, Y_TEST = digits(128, seed=2)
X_VAL, Y_VAL = X_TRAIN[-128:], Y_TRAIN[-128:]
X_TRAIN, Y_TRAIN = X_TRAIN[:-128], Y_TRAIN[:-128]


@pytest.fixture(autouse=True)
def _setup(numpy_backend):
    backend.clear_session()
    tf.random.set_seed(0)


def get_uncompiled_model(keras):
    layers = keras.layers
    inputs = keras.Input(shape=(784,), name="digits")
    x = layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = layers.Dense(10, activation="softmax", name="predictions")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.set_weights(initial_weights(model))
    return model


def get_compiled_model(keras):
    model = get_uncompiled_model(keras)
    model.compile(optimizer="rmsprop", loss="sparse_categorical_crossentropy",
                  metrics=["sparse_categorical_accuracy"])
    return model


def first_example(tf, keras, shuffle=True):
    model = get_uncompiled_model(keras)
    model.compile(optimizer=keras.optimizers.RMSprop(),
                  loss=keras.losses.SparseCategoricalCrossentropy(),
                  metrics=[keras.metrics.SparseCategoricalAccuracy()])
    history = model.fit(X_TRAIN, Y_TRAIN, batch_size=64, epochs=2,
                        validation_data=(X_VAL, Y_VAL), shuffle=shuffle, verbose=0)
    results = model.evaluate(X_TEST, Y_TEST, batch_size=128, verbose=0)
    predictions = model.predict(X_TEST[:3], verbose=0)
    return history.history, results, predictions.shape


def custom_losses(tf, keras):
    def custom_mean_squared_error(y_true, y_pred):
        return tf.math.reduce_mean(tf.square(y_true - y_pred))

    class CustomMSE(keras.losses.Loss):
        def __init__(self, regularization_factor=0.1, name="custom_mse"):
            super().__init__(name=name)
            self.regularization_factor = regularization_factor

        def call(self, y_true, y_pred):
            mse = tf.math.reduce_mean(tf.square(y_true - y_pred))
            reg = tf.math.reduce_mean(tf.square(0.5 - y_pred))
            return mse + reg * self.regularization_factor

    out = []
    for loss in (custom_mean_squared_error, CustomMSE()):
        model = get_uncompiled_model(keras)
        model.compile(optimizer=keras.optimizers.Adam(), loss=loss)
        y_train_one_hot = tf.one_hot(Y_TRAIN, depth=10)     # float labels, as the guide's
        out.append(model.fit(X_TRAIN, y_train_one_hot, batch_size=64, epochs=2, shuffle=False,
                             verbose=0).history["loss"])
    return out


def custom_metric(tf, keras):
    class CategoricalTruePositives(keras.metrics.Metric):
        def __init__(self, name="categorical_true_positives", **kwargs):
            super(CategoricalTruePositives, self).__init__(name=name, **kwargs)
            self.true_positives = self.add_weight(name="ctp", initializer="zeros")

        def update_state(self, y_true, y_pred, sample_weight=None):
            y_pred = tf.reshape(tf.argmax(y_pred, axis=1), shape=(-1, 1))
            values = tf.cast(y_true, "int32") == tf.cast(y_pred, "int32")
            values = tf.cast(values, "float32")
            if sample_weight is not None:
                sample_weight = tf.cast(sample_weight, "float32")
                values = tf.multiply(values, sample_weight)
            self.true_positives.assign_add(tf.reduce_sum(values))

        def result(self):
            return self.true_positives

        def reset_state(self):
            self.true_positives.assign(0.0)

    model = get_uncompiled_model(keras)
    model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(),
                  metrics=[CategoricalTruePositives()])
    return model.fit(X_TRAIN, Y_TRAIN, batch_size=64, epochs=3, shuffle=False, verbose=0).history


def added_losses(tf, keras):
    layers = keras.layers

    class ActivityRegularizationLayer(layers.Layer):
        def call(self, inputs):
            self.add_loss(tf.reduce_sum(inputs) * 0.1)
            return inputs

    inputs = keras.Input(shape=(784,), name="digits")
    x = layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = ActivityRegularizationLayer()(x)
    x = layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = layers.Dense(10, name="predictions")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.set_weights(initial_weights(model))
    model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    regularized = model.fit(X_TRAIN, Y_TRAIN, batch_size=64, epochs=2, shuffle=False,
                            verbose=0).history["loss"]

    class LogisticEndpoint(keras.layers.Layer):
        def __init__(self, name=None):
            super().__init__(name=name)
            self.loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

        def call(self, targets, logits, sample_weights=None):
            loss = self.loss_fn(targets, logits, sample_weights)
            self.add_loss(loss)
            return tf.nn.softmax(logits)

    inputs = keras.Input(shape=(3,), name="inputs")
    targets = keras.Input(shape=(10,), name="targets")
    logits = keras.layers.Dense(10)(inputs)
    predictions = LogisticEndpoint(name="predictions")(targets, logits)
    model = keras.Model(inputs=[inputs, targets], outputs=predictions)
    model.set_weights(initial_weights(model))
    model.compile(optimizer="adam")   # no loss argument
    rng = np.random.RandomState(3)
    data = {"inputs": rng.random_sample((3, 3)), "targets": rng.random_sample((3, 10))}
    endpoint = model.fit(data, epochs=3, verbose=0).history["loss"]
    return regularized, endpoint


# TF 2.21 (Keras 3.15.1) on the same data and initial weights, shuffle=False
TF_FIRST_EXAMPLE = {
    "loss": [1.7382880449295044, 0.7710239291191101],
    "sparse_categorical_accuracy": [0.6822916865348816, 0.7994791865348816],
    "val_loss": [0.8396379947662354, 0.7894454598426819],
}
TF_EVALUATE = [0.7591707706451416, 0.8125]
TF_CUSTOM_LOSSES = [[0.08755966275930405, 0.06937149912118912],
                    [0.10356665402650833, 0.0857282504439354]]
TF_TRUE_POSITIVES = [16710.0, 19648.0, 19648.0]
TF_ADDED_LOSSES = ([12.029412269592285, 2.267465353012085],
                   [0.6955440044403076, 0.6952393651008606, 0.6949358582496643])


def test_first_end_to_end_example_matches_tensorflow():
    history, results, shape = first_example(tf, keras, shuffle=False)
    assert sorted(history) == ["loss", "sparse_categorical_accuracy", "val_loss",
                               "val_sparse_categorical_accuracy"]
    for key, expected in TF_FIRST_EXAMPLE.items():
        np.testing.assert_allclose(history[key], expected, rtol=1e-4)
    np.testing.assert_allclose(results, TF_EVALUATE, rtol=1e-5)
    assert shape == (3, 10)
    shuffled, _, _ = first_example(tf, keras)        # as the guide runs it: shuffled batches
    assert shuffled["loss"][1] < shuffled["loss"][0]


def test_custom_losses_metric_and_added_losses_match_tensorflow():
    for got, expected in zip(custom_losses(tf, keras), TF_CUSTOM_LOSSES, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-4)
    history = custom_metric(tf, keras)
    # the guide's metric compares y_true [64] with argmax [64, 1]: 64 x 64 pairs, as in TF
    np.testing.assert_allclose(history["categorical_true_positives"], TF_TRUE_POSITIVES)
    assert history["loss"][-1] < history["loss"][0]
    regularized, endpoint = added_losses(tf, keras)
    np.testing.assert_allclose(regularized, TF_ADDED_LOSSES[0], rtol=1e-4)
    np.testing.assert_allclose(endpoint, TF_ADDED_LOSSES[1], rtol=1e-5)


def test_validation_split_and_datasets_train():
    model = get_compiled_model(keras)
    history = model.fit(X_TRAIN, Y_TRAIN, batch_size=64, validation_split=0.2, epochs=2, verbose=0)
    assert len(history.history["val_loss"]) == 2
    assert history.history["loss"][1] < history.history["loss"][0]

    train_dataset = tf.data.Dataset.from_tensor_slices((X_TRAIN, Y_TRAIN))
    train_dataset = train_dataset.shuffle(buffer_size=1024).batch(64)
    test_dataset = tf.data.Dataset.from_tensor_slices((X_TEST, Y_TEST)).batch(64)
    model = get_compiled_model(keras)
    losses = model.fit(train_dataset, epochs=3, verbose=0).history["loss"]
    assert losses[-1] < losses[0]
    result = model.evaluate(test_dataset, verbose=0)
    assert list(dict(zip(model.metrics_names, result))) == ["loss", "compile_metrics"]   # Keras 3's
    model = get_compiled_model(keras)
    assert len(model.fit(train_dataset.repeat(), epochs=2, steps_per_epoch=3,
                         verbose=0).history["loss"]) == 2
    val_dataset = tf.data.Dataset.from_tensor_slices((X_VAL, Y_VAL)).batch(64)
    history = get_compiled_model(keras).fit(train_dataset, epochs=1, validation_data=val_dataset,
                                            validation_steps=1, verbose=0).history
    assert sorted(history) == ["loss", "sparse_categorical_accuracy", "val_loss",
                               "val_sparse_categorical_accuracy"]


@pytest.mark.slow
def test_py_datasets_class_and_sample_weights_train():
    class ExamplePyDataset(keras.utils.PyDataset):
        def __init__(self, x, y, batch_size, **kwargs):
            super().__init__(**kwargs)
            self.x, self.y, self.batch_size = x, y, batch_size

        def __len__(self):
            return int(np.ceil(len(self.x) / float(self.batch_size)))

        def __getitem__(self, idx):
            batch_x = self.x[idx * self.batch_size:(idx + 1) * self.batch_size]
            batch_y = self.y[idx * self.batch_size:(idx + 1) * self.batch_size]
            return batch_x, batch_y

    model = get_compiled_model(keras)
    history = model.fit(ExamplePyDataset(X_TRAIN, Y_TRAIN, batch_size=32), epochs=1, verbose=0,
                        validation_data=ExamplePyDataset(X_VAL, Y_VAL, batch_size=32))
    assert "val_loss" in history.history

    class_weight = {k: 1.0 for k in range(10)}
    class_weight[5] = 2.0
    sample_weight = np.ones(shape=(len(Y_TRAIN),))
    sample_weight[Y_TRAIN == 5] = 2.0
    weighted = tf.data.Dataset.from_tensor_slices((X_TRAIN, Y_TRAIN, sample_weight))
    for fit in (lambda m: m.fit(X_TRAIN, Y_TRAIN, class_weight=class_weight, batch_size=64, epochs=2, verbose=0),
                lambda m: m.fit(X_TRAIN, Y_TRAIN, sample_weight=sample_weight, batch_size=64, epochs=2, verbose=0),
                lambda m: m.fit(weighted.shuffle(buffer_size=1024).batch(64), epochs=2, verbose=0)):
        losses = fit(get_compiled_model(keras)).history["loss"]
        assert losses[1] < losses[0]


def test_multi_input_multi_output_model():
    layers = keras.layers
    image_input = keras.Input(shape=(32, 32, 3), name="img_input")
    timeseries_input = keras.Input(shape=(None, 10), name="ts_input")
    x1 = layers.Conv2D(3, 3)(image_input)
    x1 = layers.GlobalMaxPooling2D()(x1)
    x2 = layers.Conv1D(3, 3)(timeseries_input)      # a sequence of unknown length
    x2 = layers.GlobalMaxPooling1D()(x2)
    assert tuple(layers.Conv1D(3, 3)(timeseries_input).shape) == (None, None, 3)   # Keras 3's
    x = layers.concatenate([x1, x2])
    score_output = layers.Dense(1, name="score_output")(x)
    class_output = layers.Dense(5, name="class_output")(x)
    model = keras.Model(inputs=[image_input, timeseries_input], outputs=[score_output, class_output])
    model.compile(optimizer=keras.optimizers.RMSprop(1e-3),
                  loss={"score_output": keras.losses.MeanSquaredError(),
                        "class_output": keras.losses.CategoricalCrossentropy()},
                  loss_weights={"score_output": 2.0, "class_output": 1.0})
    rng = np.random.RandomState(4)
    img_data = rng.random_sample(size=(40, 32, 32, 3))
    ts_data = rng.random_sample(size=(40, 20, 10))
    score_targets = rng.random_sample(size=(40, 1))
    class_targets = rng.random_sample(size=(40, 5))
    history = model.fit({"img_input": img_data, "ts_input": ts_data},
                        {"score_output": score_targets, "class_output": class_targets},
                        batch_size=20, epochs=3, verbose=0).history
    assert sorted(history) == ["class_output_loss", "loss", "score_output_loss"]
    assert history["score_output_loss"][-1] < history["score_output_loss"][0]
    train_dataset = tf.data.Dataset.from_tensor_slices(
        ({"img_input": img_data, "ts_input": ts_data},
         {"score_output": score_targets, "class_output": class_targets}))
    model.fit(train_dataset.shuffle(buffer_size=1024).batch(20), epochs=1, verbose=0)


def test_callbacks_checkpoints_and_schedules(tmp_path):
    model = get_compiled_model(keras)
    callbacks = [keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=1e-2, patience=2, verbose=0)]
    history = model.fit(X_TRAIN, Y_TRAIN, epochs=20, batch_size=64, callbacks=callbacks,
                        validation_split=0.2, verbose=0)
    assert 3 <= len(history.history["loss"]) < 20

    class LossHistory(keras.callbacks.Callback):
        def on_train_begin(self, logs):     # Keras 3 passes logs to every hook
            self.per_batch_losses = []

        def on_batch_end(self, batch, logs):
            self.per_batch_losses.append(logs.get("loss"))

    recorder = LossHistory()
    model.fit(X_TRAIN, Y_TRAIN, epochs=1, batch_size=64, callbacks=[recorder], verbose=0)
    assert len(recorder.per_batch_losses) == 6

    model = get_compiled_model(keras)
    callbacks = [keras.callbacks.ModelCheckpoint(filepath=str(tmp_path / "mymodel_{epoch}.keras"),
                                                 save_best_only=True, monitor="val_loss", verbose=0)]
    model.fit(X_TRAIN, Y_TRAIN, epochs=2, batch_size=64, callbacks=callbacks, validation_split=0.2,
              verbose=0)
    assert sorted(os.listdir(tmp_path)) == ["mymodel_1.keras", "mymodel_2.keras"]
    restored = keras.models.load_model(str(tmp_path / "mymodel_2.keras"))
    np.testing.assert_allclose(restored.predict(X_TEST[:4], verbose=0),
                               model.predict(X_TEST[:4], verbose=0), rtol=1e-6)

    lr_schedule = keras.optimizers.schedules.ExponentialDecay(
        0.1, decay_steps=100000, decay_rate=0.96, staircase=True)
    optimizer = keras.optimizers.RMSprop(learning_rate=lr_schedule)
    model = get_uncompiled_model(keras)
    model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy")
    model.fit(X_TRAIN, Y_TRAIN, epochs=1, batch_size=64, verbose=0)
    assert int(optimizer.iterations.numpy()) == 6
