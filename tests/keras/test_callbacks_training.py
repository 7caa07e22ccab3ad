"""Callbacks, regularizers and constraints in ``fit``: History, stopping epoch and final
weights of seeded runs with fixed weights against TF 2.21's (tests/keras/training_cases.py)."""
import os
import sys

import numpy as np
import pytest

import tapeflow as tf

sys.path.insert(0, os.path.dirname(__file__))
from keras_facts import TRAINING_FACTS  # noqa: E402
from training_cases import RUNS, WEIGHTS, X, Y, build, run  # noqa: E402


@pytest.mark.parametrize("name", RUNS)
def test_run_matches_tf(name):
    history, epochs, weights = run(tf.keras, name)
    tf_history, tf_epochs, tf_weights = TRAINING_FACTS[name]
    assert epochs == tf_epochs
    assert sorted(history) == sorted(tf_history)
    for key in tf_history:
        np.testing.assert_allclose(history[key], tf_history[key], rtol=2e-5, atol=1e-6)
    for got, want in zip(weights, tf_weights):
        np.testing.assert_allclose(got, np.asarray(want, np.float32), rtol=2e-5, atol=1e-6)


def test_adamw_schedule_auc_l2_epoch_compiles_once():
    k = tf.keras
    model = build(k, dict(kernel_regularizer=k.regularizers.L2(0.01)), final_activation="sigmoid")
    schedule = k.optimizers.schedules.ExponentialDecay(0.05, decay_steps=2, decay_rate=0.5)
    model.compile(k.optimizers.AdamW(schedule, weight_decay=0.01), "binary_crossentropy", metrics=["auc"])
    model.fit(X, (Y > 0).astype(np.float32), batch_size=8, epochs=3, shuffle=False, verbose=0)
    concrete = model.train_function._concrete if hasattr(model.train_function, "_concrete") else None
    traces = len(model.train_function._cache) if hasattr(model.train_function, "_cache") else None
    count = getattr(model.train_function, "experimental_get_tracing_count", lambda: traces)()
    assert count == 1, (count, concrete)


def test_regularization_losses_reach_model_losses():
    k = tf.keras
    model = build(k, dict(kernel_regularizer="l2", activity_regularizer=k.regularizers.L1(0.01)))
    model(X[:4])
    losses = model.losses
    assert len(losses) == 2
    np.testing.assert_allclose(float(losses[1]), 0.01 * float(np.sum(WEIGHTS[0] ** 2)), rtol=1e-6)

    class AddsLoss(k.layers.Layer):
        def call(self, inputs):
            self.add_loss(tf.reduce_sum(inputs) * 0.0 + 1.5)
            return inputs
    layer = AddsLoss()
    layer(tf.ones([2, 2]))
    layer(tf.ones([2, 2]))
    assert [float(v) for v in layer.losses] == [1.5]


def test_terminate_on_nan_lambda_csv_checkpoint_backup(tmp_path):
    k = tf.keras
    model = build(k)
    model.compile(k.optimizers.SGD(1e6), "mse")
    history = model.fit(X, Y * 1e6, batch_size=8, epochs=3, shuffle=False, verbose=0,
                        callbacks=[k.callbacks.TerminateOnNaN()])
    assert len(history.epoch) == 1

    seen = []
    model = build(k)
    model.compile(k.optimizers.SGD(0.01), "mse")
    csv_path, ckpt = tmp_path / "log.csv", str(tmp_path / "m-{epoch:02d}-{loss:.2f}.weights.h5")
    callbacks = [k.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(epoch)),
                 k.callbacks.CSVLogger(csv_path), k.callbacks.ModelCheckpoint(ckpt, save_weights_only=True,
                                                                             monitor="loss")]
    history = model.fit(X, Y, batch_size=8, epochs=2, shuffle=False, verbose=0, callbacks=callbacks)
    assert seen == [0, 1]
    lines = csv_path.read_text().splitlines()
    assert lines[0] == "epoch,loss,val_loss" and lines[1].startswith("0,") and lines[1].endswith(",NA")
    saved = sorted(os.listdir(tmp_path))
    assert saved == sorted(["log.csv", f"m-01-{history.history['loss'][0]:.2f}.weights.h5",
                            f"m-02-{history.history['loss'][1]:.2f}.weights.h5"])

    backup = tmp_path / "backup"

    class Interrupt(k.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                raise RuntimeError("interrupted")
    model = build(k)
    model.compile(k.optimizers.SGD(0.01), "mse")
    with pytest.raises(RuntimeError):
        model.fit(X, Y, epochs=4, verbose=0, callbacks=[k.callbacks.BackupAndRestore(backup), Interrupt()])
    resumed = model.fit(X, Y, epochs=4, verbose=0, callbacks=[k.callbacks.BackupAndRestore(backup)])
    assert resumed.epoch == [2, 3] and not backup.exists()   # epoch 2 was backed up before the error
