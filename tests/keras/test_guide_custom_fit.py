"""The keras-io guide "Customizing what happens in `fit()` with TensorFlow": a ``keras.Model``
subclass overriding ``train_step`` (with ``compute_loss`` and the compiled metrics; with its own
loss and metric trackers listed in ``metrics``; with sample weights) and ``test_step``, trained
by ``fit`` and scored by ``evaluate`` on the guide's random data (seeded, fewer samples). Each
program is a function of the ``tf`` and ``keras`` modules: TensorFlow 2.21 ran the same code,
with the same initial weights and ``shuffle=False``, for the figures quoted.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import keras
from tapeflow.keras import backend

from guide_data import initial_weights

RNG = np.random.RandomState(5)
X, Y, SW = RNG.random((256, 32)), RNG.random((256, 1)), RNG.random((256, 1))


@pytest.fixture(autouse=True)
def _setup(numpy_backend):
    backend.clear_session()


def compiled_loss_model(tf, keras):
    class CustomModel(keras.Model):
        def train_step(self, data):
            if len(data) == 3:
                x, y, sample_weight = data
            else:
                sample_weight = None
                x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred, sample_weight=sample_weight)
            trainable_vars = self.trainable_variables
            gradients = tape.gradient(loss, trainable_vars)
            self.optimizer.apply(gradients, trainable_vars)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred, sample_weight=sample_weight)
            return {m.name: m.result() for m in self.metrics}

    inputs = keras.Input(shape=(32,))
    outputs = keras.layers.Dense(1)(inputs)
    model = CustomModel(inputs, outputs)
    model.set_weights(initial_weights(model))
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    plain = model.fit(X, Y, epochs=3, shuffle=False, verbose=0).history
    weighted = model.fit(X, Y, sample_weight=SW, epochs=2, shuffle=False, verbose=0).history
    return plain, weighted


def own_metrics_model(tf, keras):
    class CustomModel(keras.Model):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.loss_tracker = keras.metrics.Mean(name="loss")
            self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")
            self.loss_fn = keras.losses.MeanSquaredError()

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.loss_fn(y, y_pred)
            trainable_vars = self.trainable_variables
            gradients = tape.gradient(loss, trainable_vars)
            self.optimizer.apply(gradients, trainable_vars)
            self.loss_tracker.update_state(loss)
            self.mae_metric.update_state(y, y_pred)
            return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

        @property
        def metrics(self):
            return [self.loss_tracker, self.mae_metric]

    inputs = keras.Input(shape=(32,))
    outputs = keras.layers.Dense(1)(inputs)
    model = CustomModel(inputs, outputs)
    model.set_weights(initial_weights(model))
    model.compile(optimizer="adam")        # no loss or metrics
    return model.fit(X, Y, epochs=5, shuffle=False, verbose=0).history


def own_test_step(tf, keras):
    class CustomModel(keras.Model):
        def test_step(self, data):
            x, y = data
            y_pred = self(x, training=False)
            loss = self.compute_loss(y=y, y_pred=y_pred)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    inputs = keras.Input(shape=(32,))
    outputs = keras.layers.Dense(1)(inputs)
    model = CustomModel(inputs, outputs)
    model.set_weights(initial_weights(model))
    model.compile(loss="mse", metrics=["mae"])
    return model.evaluate(X, Y, verbose=0)


# TF 2.21 (Keras 3.15.1), same data and initial weights, shuffle=False
TF_COMPILED_LOSS = (
    {"loss": [0.17172323167324066, 0.11458410322666168, 0.09165435284376144],
     "mae": [0.33798012137413025, 0.2863270044326782, 0.2627466320991516]},
    {"loss": [0.04335905238986015, 0.04381415992975235],
     "mae": [0.2589503526687622, 0.2591257691383362]})
TF_OWN_METRICS = {
    "loss": [0.17172323167324066, 0.11458410322666168, 0.09165435284376144, 0.08817177265882492,
             0.08878193795681],
    "mae": [0.33798012137413025, 0.2863270044326782, 0.2627466320991516, 0.2589508891105652,
            0.2585659623146057]}
TF_TEST_STEP = [0.2064683586359024, 0.3694171905517578]


def test_train_step_with_compute_loss_and_sample_weights_matches_tensorflow():
    plain, weighted = compiled_loss_model(tf, keras)
    for got, expected in zip((plain, weighted), TF_COMPILED_LOSS, strict=True):
        assert sorted(got) == ["loss", "mae"]
        for key in expected:
            np.testing.assert_allclose(got[key], expected[key], rtol=1e-5)
    assert plain["loss"][-1] < plain["loss"][0]


def test_train_step_with_own_trackers_and_test_step_match_tensorflow():
    history = own_metrics_model(tf, keras)
    for key, expected in TF_OWN_METRICS.items():
        np.testing.assert_allclose(history[key], expected, rtol=1e-5)
    assert history["loss"][-1] < history["loss"][0]
    np.testing.assert_allclose(own_test_step(tf, keras), TF_TEST_STEP, rtol=1e-6)
