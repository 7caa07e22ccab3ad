"""Recurrent layers against TensorFlow 2.21: outputs, states, and gradients with respect to the
inputs and every weight (recurrent_facts.py, made by running recurrent_cases.py on TF), eagerly,
inside a function (the loop is one While node) and compiled (compiled == eager)."""
import numpy as np
import pytest

import tapeflow as tf

from recurrent_cases import cases, flatten, inputs, seeds, weight_value
from recurrent_facts import FACTS

CASES = cases(tf)


def built(name):
    layer, fn = CASES[name]()
    x_value, mask = inputs()
    fn(tf.constant(x_value), mask)
    for k, w in enumerate(layer.weights):
        w.assign(weight_value(k, tuple(w.shape)))
    return layer, fn


def outputs_and_grads(layer, fn, x, mask):
    with tf.GradientTape() as tape:
        tape.watch(x)
        flat = flatten(fn(x, mask))
        loss = tf.add_n([tf.reduce_sum(o * seeds(k, tuple(o.shape))) for k, o in enumerate(flat)])
    grads = tape.gradient(loss, [x] + list(layer.weights))
    return flat, grads[0], [tf.convert_to_tensor(g) for g in grads[1:]]


def check(got, name):
    outs, gx, gws = got
    want_outs, want_gx, want_gws = FACTS[name]
    assert len(outs) == len(want_outs)
    for o, w in zip(outs, want_outs):
        np.testing.assert_allclose(np.asarray(o), w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(gx), want_gx, rtol=1e-5, atol=1e-5)
    assert len(gws) == len(want_gws)
    for g, w in zip(gws, want_gws):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(FACTS))
def test_eager_matches_tensorflow(name):
    layer, fn = built(name)
    x_value, mask = inputs()
    check(outputs_and_grads(layer, fn, tf.constant(x_value), mask), name)


@pytest.mark.parametrize("name", sorted(FACTS))
def test_function_matches_tensorflow(name):
    layer, fn = built(name)
    x_value, mask = inputs()
    step = tf.function(lambda x: outputs_and_grads(layer, fn, x, mask), jit_compile=False)
    check(step(tf.constant(x_value)), name)


COMPILED = ["lstm_mask", "bidi_lstm_concat", "simple_rnn_back_state", "gru_before_state",
            "gru_mask_back", "stacked"]


@pytest.mark.slow
@pytest.mark.filterwarnings("error::tapeflow.codegen.generate.InterpreterFallbackWarning")
@pytest.mark.parametrize("name", COMPILED)
def test_compiled_matches_tensorflow(name):
    """The compiled program (Numba) of a layer's forward and backward loops."""
    x_value, mask = inputs()
    layer, fn = built(name)
    step = tf.function(lambda x: outputs_and_grads(layer, fn, x, mask), jit_compile=True)
    check(step(tf.constant(x_value)), name)


def test_each_layer_is_one_loop_in_a_function():
    x_value, mask = inputs()
    for name, loops in [("lstm_mask", 1), ("bidi_lstm_concat", 2), ("stacked", 1),
                        ("lstm_unroll", 0)]:
        layer, fn = built(name)
        graph = tf.function(lambda x: fn(x, mask)).get_concrete_function(
            tf.constant(x_value)).graph
        assert [op.type for op in graph.get_operations()].count("While") == loops, name


def test_dropout_masks_are_shared_by_the_steps_of_a_sequence():
    L = tf.keras.layers
    for layer in (L.SimpleRNN(6, dropout=0.5, activation=None, use_bias=False,
                              kernel_initializer="ones",
                              recurrent_initializer="zeros", return_sequences=True, seed=3),):
        x = tf.ones((3, 4, 1))
        inference = layer(x).numpy()
        np.testing.assert_array_equal(inference, np.ones((3, 4, 6)))
        trained = layer(x, training=True).numpy()
        assert set(np.unique(trained)) <= {0.0, 2.0} and 0 < (trained == 0).mean() < 1
        for t in range(1, 4):      # one input mask per sequence, the same at every step
            np.testing.assert_array_equal(trained[:, t], trained[:, 0])
        again = layer(x, training=True).numpy()
        assert not np.array_equal(again, trained)     # a new mask per call
        step = tf.function(lambda x: layer(x, training=True), jit_compile=False)
        assert not np.array_equal(step(x).numpy(), step(x).numpy())


def test_recurrent_dropout_trains_and_changes_outputs():
    L = tf.keras.layers
    for layer in (L.LSTM(3, dropout=0.3, recurrent_dropout=0.4, seed=1),
                  L.GRU(3, recurrent_dropout=0.4, seed=2),
                  L.SimpleRNN(3, recurrent_dropout=0.4, seed=2)):
        x = tf.constant(inputs()[0])
        base = layer(x).numpy()
        with tf.GradientTape() as tape:
            out = layer(x, training=True)
            loss = tf.reduce_sum(out)
        grads = tape.gradient(loss, layer.trainable_weights)
        assert all(g is not None for g in grads)
        assert not np.allclose(out.numpy(), base)
        np.testing.assert_array_equal(layer(x).numpy(), base)


def test_configs_round_trip():
    L = tf.keras.layers
    from tapeflow.keras import serialization
    x = tf.constant(inputs()[0])
    for layer in (L.LSTM(2, return_sequences=True, go_backwards=True, dropout=0.1),
                  L.GRU(2, reset_after=False, unroll=True),
                  L.SimpleRNN(2, activation="relu"),
                  L.Bidirectional(L.GRU(2, return_sequences=True), merge_mode="sum"),
                  L.RNN([L.SimpleRNNCell(3), L.LSTMCell(2)]),
                  L.TimeDistributed(L.Dense(2)), L.Masking(mask_value=-1.0)):
        layer(x)
        config = layer.get_config()
        copy = serialization.deserialize(serialization.serialize(layer))
        assert copy.get_config() == {**config, "name": copy.name}
        copy(x)
        copy.set_weights(layer.get_weights())
        np.testing.assert_allclose(np.asarray(flatten(copy(x))[0]),
                                   np.asarray(flatten(layer(x))[0]), rtol=1e-6)
    assert L.LSTM(3).get_config()["unit_forget_bias"] is True
    assert L.GRU(3).get_config()["reset_after"] is True


def test_lstm_weights_layout_and_unit_forget_bias():
    layer = tf.keras.layers.LSTM(3)
    layer(tf.ones((1, 2, 4)))
    assert [tuple(w.shape) for w in layer.weights] == [(4, 12), (3, 12), (12,)]
    np.testing.assert_array_equal(layer.weights[2].numpy(), [0] * 3 + [1] * 3 + [0] * 6)
    gru = tf.keras.layers.GRU(3)
    gru(tf.ones((1, 2, 4)))
    assert [tuple(w.shape) for w in gru.weights] == [(4, 9), (3, 9), (2, 9)]
    gru = tf.keras.layers.GRU(3, reset_after=False)
    gru(tf.ones((1, 2, 4)))
    assert [tuple(w.shape) for w in gru.weights] == [(4, 9), (3, 9), (9,)]


def test_masks_propagate_through_a_functional_model():
    L = tf.keras.layers
    x_value, mask = inputs()
    inp = tf.keras.Input((4, 3))
    out = L.LSTM(2)(L.Masking()(inp))
    model = tf.keras.Model(inp, out)
    lstm = model.layers[-1]
    for k, w in enumerate(lstm.weights):
        w.assign(weight_value(k, tuple(w.shape)))
    masked = x_value * mask[..., None]
    # the masked steps carry the state: the same as the explicit mask on the LSTM itself
    np.testing.assert_allclose(model(tf.constant(masked)).numpy(),
                               lstm(tf.constant(masked), mask=tf.constant(mask)).numpy(),
                               rtol=1e-6)
    assert not np.allclose(model(tf.constant(masked)).numpy(), lstm(tf.constant(masked)).numpy())


def test_errors():
    L = tf.keras.layers
    with pytest.raises(ValueError, match="should have a `call` method"):
        L.RNN(3)
    with pytest.raises(ValueError, match="positive integer"):
        L.LSTM(0)
    with pytest.raises(ValueError, match="Invalid merge mode"):
        L.Bidirectional(L.LSTM(2), merge_mode="max")
    with pytest.raises(ValueError, match="undefined"):
        L.LSTM(2, unroll=True)(tf.keras.Input((None, 3)))


def test_text_classifier_trains_with_fit(numpy_backend):
    """Embedding -> Bidirectional(LSTM) -> Dense on synthetic token sequences; the label is
    whether token 1 occurs, which the recurrence must carry to the end. The compiled fit step
    runs its loops (forward and both directions' gradients) as While nodes."""
    L = tf.keras.layers
    rng = np.random.default_rng(0)
    tf.random.set_seed(0)
    x = rng.integers(2, 12, (64, 6)).astype(np.int32)
    y = rng.random(64) < 0.5
    x[y, rng.integers(0, 6, y.sum())] = 1
    model = tf.keras.Sequential([tf.keras.Input((6,), dtype="int32"), L.Embedding(12, 8),
                                 L.Bidirectional(L.LSTM(6)), L.Dense(1, activation="sigmoid")])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.03), loss="binary_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x, y.astype(np.float32), epochs=12, batch_size=16, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0], losses
    assert history.history["accuracy"][-1] > 0.9


def test_stateful_layer_carries_its_states_between_calls():
    layer = tf.keras.layers.LSTM(2, stateful=True, return_sequences=True)
    x = inputs()[0]
    layer(tf.constant(x))
    for k, w in enumerate(layer.weights):
        w.assign(weight_value(k, tuple(w.shape)))
    assert len(layer.weights) == 3          # the states are variables, not weights (Keras)
    layer.reset_states()
    first = layer(tf.constant(x[:, :2])).numpy()
    second = layer(tf.constant(x[:, 2:])).numpy()
    # TF 2.21: the second half after the first, states carried
    np.testing.assert_allclose(second, [[[0.14608806, -0.07428318], [0.1104127, 0.03161504]],
                                        [[0.10775474, -0.05693954], [0.13541485, 0.03100092]]],
                               rtol=1e-5, atol=1e-6)
    layer.reset_states()
    np.testing.assert_allclose(layer(tf.constant(x[:, :2])).numpy(), first, rtol=1e-6)
    step = tf.function(lambda x: layer(x), jit_compile=False)
    np.testing.assert_allclose(step(tf.constant(x[:, 2:])).numpy(), second, rtol=1e-5)
    with pytest.raises(ValueError, match="batch size must be static"):
        tf.keras.layers.GRU(2, stateful=True)(tf.keras.Input((3, 2)))


def test_model_with_sequence_layers_saves_and_loads(tmp_path):
    L = tf.keras.layers
    inp = tf.keras.Input((5,), dtype="int32")
    h = L.Embedding(10, 8, mask_zero=True)(inp)
    h = L.Bidirectional(L.LSTM(4, return_sequences=True))(h)
    h = L.MultiHeadAttention(2, 3)(h, h)
    h = L.GroupNormalization(2)(h)
    h = L.RNN([L.GRUCell(3), L.SimpleRNNCell(2)])(h)
    model = tf.keras.Model(inp, L.Dense(1)(h))
    x = np.array([[1, 2, 3, 0, 0], [4, 5, 6, 7, 8]], np.int32)
    model.save(tmp_path / "m.keras")
    loaded = tf.keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())


def test_text_classifier_fit_follows_tensorflow(numpy_backend):
    """Embedding -> Bidirectional(LSTM) -> Dense from fixed weights, SGD, no shuffling: the
    per-epoch losses are TF 2.21's."""
    L = tf.keras.layers
    rng = np.random.default_rng(0)
    x = rng.integers(2, 12, (48, 6)).astype(np.int32)
    y = rng.random(48) < 0.5
    x[y, rng.integers(0, 6, y.sum())] = 1
    model = tf.keras.Sequential([tf.keras.Input((6,), dtype="int32"), L.Embedding(12, 4),
                                 L.Bidirectional(L.LSTM(3)), L.Dense(1, activation="sigmoid")])
    for k, w in enumerate(model.weights):
        w.assign(weight_value(k, tuple(w.shape)))
    model.compile(optimizer=tf.keras.optimizers.SGD(0.5), loss="binary_crossentropy")
    losses = model.fit(x, y.astype(np.float32), epochs=4, batch_size=16, shuffle=False,
                       verbose=0).history["loss"]
    np.testing.assert_allclose(losses, [0.6931501, 0.6927195, 0.6924189, 0.6921845], rtol=1e-6)


def test_regularizers_and_constraints_reach_the_cell_weights():
    L = tf.keras.layers
    layer = L.LSTM(2, kernel_regularizer=tf.keras.regularizers.L2(0.01),
                   recurrent_constraint=tf.keras.constraints.NonNeg())
    layer(tf.constant(inputs()[0]))
    np.testing.assert_allclose(float(layer.losses[0]),
                               0.01 * np.sum(layer.weights[0].numpy() ** 2), rtol=1e-6)
    config = layer.get_config()
    assert config["kernel_regularizer"]["class_name"] == "L2"
    assert config["recurrent_constraint"]["class_name"] == "NonNeg"
    copy = L.LSTM.from_config(config)
    assert copy.get_config()["kernel_regularizer"] == config["kernel_regularizer"]
