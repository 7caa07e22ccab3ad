"""keras.utils, keras.models.clone_model/model_from_json, the top-level keras names and the
added initializers (the expected values are TF 2.21's, printed from /work/tfvenv)."""
import numpy as np
import pytest

import tapeflow as tf

k = tf.keras


def test_data_helpers_match_tf():
    u = k.utils
    assert u.pad_sequences([[1, 2, 3], [4], [5, 6]], maxlen=2).tolist() == [[2, 3], [0, 4], [5, 6]]
    assert u.pad_sequences([[1, 2, 3], [4], [5, 6]], maxlen=2, padding="post", truncating="post",
                           value=-1).tolist() == [[1, 2], [4, -1], [5, 6]]
    assert u.to_categorical(np.array([[1], [0], [3]])).tolist() == [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1]]
    assert u.normalize(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist() == [[0.6, 0.8], [0.0, 0.0]]
    ds = u.timeseries_dataset_from_array(np.arange(12), np.arange(12) * 10, sequence_length=3,
                                         sequence_stride=2, sampling_rate=2, batch_size=2)
    assert [(a.tolist(), b.tolist()) for a, b in ds.as_numpy_iterator()] == [
        ([[0, 2, 4], [2, 4, 6]], [0, 20]), ([[4, 6, 8], [6, 8, 10]], [40, 60])]
    assert u.pack_x_y_sample_weight(1, 2) == (1, 2) and u.unpack_x_y_sample_weight((1, 2)) == (1, 2, None)
    left, right = u.split_dataset(np.arange(10), left_size=0.8)
    assert [int(v) for v in left] == list(range(8)) and [int(v) for v in right] == [8, 9]
    u.set_random_seed(3)
    first = tf.random.uniform([2]).numpy()
    u.set_random_seed(3)
    assert np.array_equal(first, tf.random.uniform([2]).numpy())


def test_py_dataset_fit_and_clone_and_json():
    model = k.Sequential([k.Input((3,)), k.layers.Dense(2, activation="relu"), k.layers.Dense(1)])

    class Batches(k.utils.PyDataset):
        epochs_ended = 0

        def __len__(self):
            return 2

        def __getitem__(self, i):
            return np.ones((4, 3), np.float32) * i, np.ones((4, 1), np.float32)

        def on_epoch_end(self):
            Batches.epochs_ended += 1
    model.compile("sgd", "mse")
    assert len(model.fit(Batches(), epochs=2, verbose=0).history["loss"]) == 2
    assert Batches.epochs_ended == 2
    restored = k.models.model_from_json(model.to_json())
    assert [w.shape for w in restored.weights] == [w.shape for w in model.weights]
    clone = k.models.clone_model(model)
    assert type(clone) is k.Sequential and len(clone.weights) == 4
    assert not np.allclose(clone.weights[0].numpy(), model.weights[0].numpy())
    inputs = k.Input((3,))
    outputs = k.layers.Dense(1)(k.layers.Dense(2)(inputs))
    functional = k.Model(inputs, outputs)
    assert len(k.models.clone_model(functional).weights) == 4
    assert k.utils.get_source_inputs(outputs)[0] is inputs and k.utils.is_keras_tensor(outputs)


def test_top_level_names_and_initializers():
    assert k.Layer is k.layers.Layer and k.Loss is k.losses.Loss and k.Metric is k.metrics.Metric
    assert k.Variable(k.initializers.Ones(), shape=(2,)).numpy().tolist() == [1.0, 1.0]
    with pytest.raises(ValueError):
        k.Variable(k.initializers.Ones())
    q = k.initializers.Orthogonal(seed=1)((4, 3)).numpy()
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-5)
    assert k.initializers.Identity(gain=2.0)((2, 3)).numpy().tolist() == [[2, 0, 0], [0, 2, 0]]
    assert isinstance(k.initializers.get("orthogonal"), k.initializers.Orthogonal)
    assert k.initializers.glorot_uniform is k.initializers.GlorotUniform
    assert k.backend.epsilon() == 1e-7 and k.backend.floatx() == "float32"
    k.backend.set_floatx("float64")
    try:
        assert k.layers.Dense(1)(tf.ones((1, 2), tf.float64)).dtype == tf.float64
    finally:
        k.backend.set_floatx("float32")


def test_keras_file_round_trip_of_new_objects(tmp_path):
    x = np.random.RandomState(0).randn(32, 3).astype("float32")
    y = x.sum(1, keepdims=True)
    norm = k.layers.Normalization()
    norm.adapt(x)
    model = k.Sequential([k.Input((3,)), norm,
                          k.layers.Dense(4, kernel_regularizer=k.regularizers.L2(0.01), kernel_constraint="non_neg"),
                          k.layers.LeakyReLU(0.2), k.layers.PReLU(), k.layers.Dense(1, activation="mish")])
    schedule = k.optimizers.schedules.CosineDecay(0.01, decay_steps=20)
    model.compile(k.optimizers.Nadam(schedule), k.losses.Huber(0.5),
                  metrics=[k.metrics.RootMeanSquaredError(), "mape"])
    model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = k.models.load_model(path)
    np.testing.assert_array_equal(model.predict(x, verbose=0), loaded.predict(x, verbose=0))
    assert type(loaded.loss).__name__ == "Huber" and len(loaded.losses) == 1
    again = [m.fit(x, y, epochs=1, batch_size=8, verbose=0, shuffle=False).history for m in (model, loaded)]
    assert again[0] == again[1]     # optimizer slots, iterations and the schedule came back
