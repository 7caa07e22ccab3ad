"""compile/fit/evaluate/predict: values against TensorFlow 2.21, by-hand training, the progress bar.

Constants marked "TF 2.21" were printed by TensorFlow 2.21.0 (Keras 3.15.1) running the same
program with ``import tensorflow as tf``.
"""
import contextlib
import io
import re

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import backend
from tapeflow.keras.callbacks import Progbar

K = tf.keras

X = np.linspace(-1, 1, 20).reshape(10, 2).astype("float32")
Y = (X @ np.array([[2.0], [-1.0]], "float32") + 0.5).astype("float32")
W0 = [np.array([[0.1], [0.2]], "float32"), np.zeros(1, "float32")]


@pytest.fixture(autouse=True)
def _setup(request):
    backend.clear_session()
    tf.random.set_seed(0)
    if not request.node.name.endswith("_compiled"):
        request.getfixturevalue("numpy_backend")


def _linear(optimizer=None, metrics=("mae",)):
    model = K.Sequential([K.Input((2,)), K.layers.Dense(1)])
    model.set_weights(W0)
    model.compile(optimizer=optimizer or K.optimizers.SGD(0.1), loss="mse", metrics=list(metrics))
    return model


# -- values: TensorFlow's own numbers ----------------------------------------------------------

def test_fit_history_and_weights_match_tensorflow():
    model = _linear()
    history = model.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0)
    # TF 2.21: the same program's History and final weights
    np.testing.assert_allclose(history.history["loss"],
                               [0.24124479293823242, 0.04568164423108101, 0.010075303725898266], rtol=2e-6)
    np.testing.assert_allclose(history.history["mae"],
                               [0.4168068468570709, 0.1861724555492401, 0.09073098003864288], rtol=2e-6)
    np.testing.assert_allclose(model.get_weights()[0], [[0.38781997561454773], [0.5233609676361084]], rtol=1e-6)
    np.testing.assert_allclose(model.get_weights()[1], [0.3376399576663971], rtol=1e-6)
    assert list(history.history) == ["loss", "mae"] and history.epoch == [0, 1, 2]
    assert history.params == {"verbose": 0, "epochs": 3, "steps": 3}
    assert all(type(v) is float for v in history.history["loss"])
    assert model.history is history

    history = model.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0, validation_split=0.2)
    expected = {  # TF 2.21: validation on the last 2 samples, training on the first 8
        "loss": [0.0023842458613216877, 0.001266879728063941],
        "mae": [0.04153662919998169, 0.03150284290313721],
        "val_loss": [0.003874626476317644, 0.0027864924632012844],
        "val_mae": [0.06182914972305298, 0.052483439445495605]}
    assert list(history.history) == list(expected)
    for key, values in expected.items():
        np.testing.assert_allclose(history.history[key], values, rtol=1e-5)
    np.testing.assert_allclose(model.get_weights()[0], [[0.40588632225990295], [0.5403897762298584]], rtol=1e-6)


def test_evaluate_is_the_loss_over_all_samples():
    model = _linear()
    model.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0)
    kernel, bias = model.get_weights()
    error = X @ kernel + bias - Y
    loss, mae = model.evaluate(X, Y, batch_size=4, verbose=0)  # batches of 4, 4, 2
    np.testing.assert_allclose(loss, (error ** 2).mean(), rtol=1e-5)
    np.testing.assert_allclose(mae, np.abs(error).mean(), rtol=1e-5)
    assert model.evaluate(X, Y, verbose=0, return_dict=True).keys() == {"loss", "mae"}
    only_loss = _linear(metrics=())
    assert isinstance(only_loss.evaluate(X, Y, verbose=0), float)


def test_predict_in_batches_equals_one_call():
    inputs = K.Input((2,))
    model = K.Model(inputs, K.layers.Dense(3)(K.layers.Dense(5, activation="tanh")(inputs)))
    batched = model.predict(X, batch_size=3, verbose=0)  # 3 + 3 + 3 + 1
    assert isinstance(batched, np.ndarray) and batched.shape == (10, 3) and batched.dtype == np.float32
    np.testing.assert_allclose(batched, model(X).numpy(), rtol=1e-6, atol=1e-7)


# -- fit is the training loop a user would write ---------------------------------------------

def _by_hand(model, optimizer, loss_fn, batch_size, epochs):
    for _ in range(epochs):
        for start in range(0, len(X), batch_size):
            xb, yb = tf.constant(X[start:start + batch_size]), tf.constant(Y[start:start + batch_size])
            with tf.GradientTape() as tape:
                loss = loss_fn(yb, model(xb, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))


def _mlp():
    model = K.Sequential([K.Input((2,)), K.layers.Dense(6, activation="relu"), K.layers.Dense(1)])
    return model


def _fit_equals_hand():
    fitted, manual = _mlp(), _mlp()
    manual.set_weights(fitted.get_weights())
    fitted.compile(K.optimizers.Adam(0.05), K.losses.MeanSquaredError())
    fitted.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0)  # a last batch of 2
    _by_hand(manual, K.optimizers.Adam(0.05), K.losses.MeanSquaredError(), 4, 3)
    for a, b in zip(fitted.get_weights(), manual.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert fitted.optimizer.iterations.numpy() == 9
    assert fitted.train_function.experimental_get_tracing_count() == 2  # full and last batch


def test_fit_equals_the_same_steps_by_hand():
    _fit_equals_hand()


def test_fit_equals_the_same_steps_by_hand_compiled():
    """The train step compiled by the default backend (Numba), against eager steps."""
    _fit_equals_hand()


def test_fit_converges_and_is_repeatable_with_a_seed():
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, size=(64, 3)).astype("float32")
    y = (np.sin(2 * x[:, :1]) + x[:, 1:2] * x[:, 2:3]).astype("float32")

    def train():
        backend.clear_session()
        tf.random.set_seed(42)
        model = K.Sequential([K.Input((3,)), K.layers.Dense(16, activation="tanh"), K.layers.Dense(1)])
        model.compile(K.optimizers.Adam(0.02), "mse")
        return model.fit(x, y, batch_size=16, epochs=150, verbose=0).history["loss"]

    losses = train()
    assert losses[0] > 0.5 and losses[-1] < 0.005  # 64 samples, 4 steps an epoch
    assert losses == train()  # same seed: same initial weights, same shuffles


def test_classification_with_accuracy_strings():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(12, 3)).astype("float32")
    labels = (x[:, 0] > 0).astype("int64")
    model = K.Sequential([K.Input((3,)), K.layers.Dense(2)])
    model.compile("adam", K.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(x, labels, epochs=2, batch_size=5, verbose=0)
    assert list(history.history) == ["accuracy", "loss"]  # sorted, as Keras 3
    assert type(model._compile_metrics.metrics[0]).__name__ == "SparseCategoricalAccuracy"
    assert model.metrics_names == ["loss", "compile_metrics"]  # TF 2.21
    loss, accuracy = model.evaluate(x, labels, verbose=0)
    logits = model.predict(x, verbose=0)
    assert accuracy == pytest.approx(np.mean(logits.argmax(1) == labels))
    z = logits - logits.max(1, keepdims=True)
    expected = -(z[np.arange(12), labels] - np.log(np.exp(z).sum(1))).mean()
    assert loss == pytest.approx(expected, rel=1e-5)

    binary = K.Sequential([K.Input((3,)), K.layers.Dense(1, activation="sigmoid")])
    binary.compile("sgd", "binary_crossentropy", metrics=["accuracy"])
    binary.fit(x, labels[:, None].astype("float32"), epochs=1, verbose=0)
    assert type(binary._compile_metrics.metrics[0]).__name__ == "BinaryAccuracy"


def test_errors():
    model = K.Sequential([K.Input((2,)), K.layers.Dense(1)])
    with pytest.raises(ValueError, match="You must call `compile\\(\\)`"):
        model.fit(X, Y, verbose=0)
    model.compile("sgd")
    with pytest.raises(ValueError, match="No loss to compute"):
        model.fit(X, Y, verbose=0)
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match="not sufficient to split"):
        model.fit(X, Y, validation_split=0.95, verbose=0)


# -- the progress bar --------------------------------------------------------------------------

TIME = re.compile(r"\d+(ms|us|s)/step")


def _normalize(text):
    """Step times vary from run to run: name them, and drop the padding their width causes; an
    epoch's whole seconds (verbose=2's "2/2 - 0s") read 0 (a loaded machine takes 1-2 s)."""
    text = TIME.sub("T/step", text)
    text = re.sub(r"(\d+/\d+ - )\d+s( -)", r"\g<1>0s\2", text)
    return re.sub(r" +\n", "\n", text)


def _final_lines(text):
    """What a terminal shows: each '\\n'-ended line as its last redraw after a '\\r'."""
    return [line.rsplit("\r", 1)[-1] for line in text.split("\n")]


def test_progress_bar_verbose_1(capsys):
    model = _linear()
    model.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=1)
    out = capsys.readouterr().out
    bar = "\x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m"
    # TF 2.21 printed these lines (step times aside)
    assert _final_lines(_normalize(out)) == [
        "Epoch 1/3", f"\x1b[1m3/3\x1b[0m {bar} \x1b[1m0s\x1b[0m T/step - loss: 0.2412 - mae: 0.4168",
        "Epoch 2/3", f"\x1b[1m3/3\x1b[0m {bar} \x1b[1m0s\x1b[0m T/step - loss: 0.0457 - mae: 0.1862",
        "Epoch 3/3", f"\x1b[1m3/3\x1b[0m {bar} \x1b[1m0s\x1b[0m T/step - loss: 0.0101 - mae: 0.0907", ""]
    # The first step is drawn at once (TF 2.21 printed this line too), then redrawn over.
    first = ("Epoch 1/3\n\r\x1b[1m1/3\x1b[0m \x1b[32m━━━━━━\x1b[0m\x1b[37m━━━━━━━━━━━━━━\x1b[0m "
             "\x1b[1m0s\x1b[0m T/step - loss: 0.0382 - mae: 0.1632\x08")
    assert _normalize(out).startswith(first)
    # Each redraw first backspaces over the visible width of the line it replaces (a slow
    # machine may draw step 2 too: every redraw is checked).
    *drawn, final = out.split("\n")[1].split("\r")[1:]
    assert drawn and "\x08" not in final
    for segment in drawn:
        line = segment.rstrip("\x08")
        assert len(segment) - len(line) == len(re.sub("\x1b\\[[0-9;]*m", "", line).rstrip(" "))


def test_progress_bar_verbose_2_and_0(capsys):
    model = _linear()
    model.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0)
    model.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    assert capsys.readouterr().out == ""
    model = _linear()
    model.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0)
    model.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=2, validation_split=0.2)
    # TF 2.21 printed exactly this, step times aside
    assert _normalize(capsys.readouterr().out) == (
        "Epoch 1/2\n2/2 - 0s - T/step - loss: 0.0024 - mae: 0.0415 - val_loss: 0.0039 - val_mae: 0.0618\n"
        "Epoch 2/2\n2/2 - 0s - T/step - loss: 0.0013 - mae: 0.0315 - val_loss: 0.0028 - val_mae: 0.0525\n")


def test_evaluate_and_predict_bars(capsys):
    model = _linear()
    model.evaluate(X, Y, batch_size=4)
    model.predict(X, batch_size=4)
    lines = _final_lines(_normalize(capsys.readouterr().out))
    bar = "\x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m"
    assert re.fullmatch(rf"\x1b\[1m3/3\x1b\[0m {re.escape(bar)} \x1b\[1m0s\x1b\[0m T/step - loss: "
                        r"\d\.\d{4} - mae: \d\.\d{4}", lines[0])
    assert lines[1] == f"\x1b[1m3/3\x1b[0m {bar} \x1b[1m0s\x1b[0m T/step" and lines[2] == ""


def test_small_values_use_exponent_format():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        Progbar(2, verbose=2).update(2, [("loss", 0.00087218), ("mae", 0.0267)])
    assert _normalize(buf.getvalue()) == "2/2 - 0s - T/step - loss: 8.7218e-04 - mae: 0.0267\n"


def test_custom_train_step_as_in_the_keras_guide():
    """TensorFlow's guide "Customizing what happens in fit()", Keras 3 version, unchanged."""

    class CustomModel(K.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            trainable_vars = self.trainable_variables
            gradients = tape.gradient(loss, trainable_vars)
            self.optimizer.apply(gradients, trainable_vars)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    inputs = K.Input(shape=(2,))
    model = CustomModel(inputs, K.layers.Dense(1)(inputs))
    assert isinstance(model, CustomModel) and type(model).__name__ == "CustomModel"
    model.set_weights(W0)
    model.compile(optimizer=K.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    history = model.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0)
    # TF 2.21: the step's own logs (the loss now an unweighted mean of batch losses), keys in
    # the order of the sorted step keys, 'compile_metrics' flattened where it sorts
    assert list(history.history) == ["mae", "loss"]
    np.testing.assert_allclose(history.history["loss"],
                               [0.299163281917572, 0.055972855538129807, 0.01174322422593832], rtol=2e-6)
    np.testing.assert_allclose(history.history["mae"],
                               [0.4168068468570709, 0.1861724555492401, 0.09073098003864288], rtol=2e-6)


def test_batchnorm_statistics_move_during_fit_only():
    model = K.Sequential([K.Input((2,)), K.layers.BatchNormalization(), K.layers.Dense(1)])
    bn = model.layers[0]
    model.compile("sgd", "mse")
    model.fit(X, Y, batch_size=5, epochs=1, shuffle=False, verbose=0)
    mean = bn.moving_mean.numpy()
    # two steps of moving = 0.99 * moving + 0.01 * batch mean, from zeros
    batch_means = X[:5].mean(0), X[5:].mean(0)
    np.testing.assert_allclose(mean, 0.99 * 0.01 * batch_means[0] + 0.01 * batch_means[1], rtol=1e-5)
    model.evaluate(X, Y, verbose=0)
    model.predict(X, verbose=0)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), mean)


@pytest.mark.parametrize("kwargs, loss, weights", [  # TF 2.21: same program, RMSprop(0.01, **kwargs)
    ({}, [0.2640349268913269, 0.18882998824119568],
     [0.214976504445076, 0.3199366331100464, 0.059424348175525665]),
    ({"momentum": 0.5}, [0.2603840231895447, 0.13581815361976624],
     [0.2917458713054657, 0.4017084538936615, 0.087530218064785]),
    ({"centered": True}, [0.2620643973350525, 0.18167872726917267],
     [0.22575388848781586, 0.3313577175140381, 0.06623923778533936]),
])
def test_rmsprop_matches_tensorflow(kwargs, loss, weights):
    model = _linear(K.optimizers.RMSprop(0.01, **kwargs), metrics=())
    history = model.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"], loss, rtol=1e-5)
    np.testing.assert_allclose(np.concatenate([w.ravel() for w in model.get_weights()]), weights, rtol=1e-5)


def test_compile_defaults_to_rmsprop():
    model = K.Sequential([K.Input((2,)), K.layers.Dense(1)])
    model.compile(loss="mse")
    assert type(model.optimizer).__name__ == "RMSprop"  # TF 2.21, learning rate 0.001
    assert float(model.optimizer.learning_rate.numpy()) == pytest.approx(0.001)


def test_validation_data_is_validation_split_made_explicit():
    split = _linear().fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0, validation_split=0.2)
    explicit = _linear().fit(X[:8], Y[:8], batch_size=4, epochs=2, shuffle=False, verbose=0,
                             validation_data=(X[8:], Y[8:]))
    assert split.history == explicit.history


def test_sample_weight_scales_the_loss():
    plain = _linear(K.optimizers.SGD(0.1), metrics=())
    weighted = _linear(K.optimizers.SGD(0.05), metrics=())
    h1 = plain.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    h2 = weighted.fit(X, Y, sample_weight=np.full(10, 2.0), batch_size=4, epochs=2, shuffle=False, verbose=0)
    # sum_over_batch_size: sum(2 * l) / n is twice the mean, so half the learning rate takes the same steps
    np.testing.assert_allclose(h2.history["loss"], 2 * np.array(h1.history["loss"]), rtol=1e-5)
    for a, b in zip(plain.get_weights(), weighted.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5)
