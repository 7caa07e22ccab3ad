"""model.save / load_model, save_weights / load_weights, get_config / from_config; hostile files.

Keras' behaviour (messages, which calls fail) is TensorFlow 2.21's (Keras 3.15.1), asked in a
side environment; the file layout is tapeflow's own (weights as .npy, not HDF5).
"""
import io
import json
import pickle
import zipfile

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import backend
from tapeflow.saved_model.errors import SavedModelError

K = tf.keras
X = np.linspace(-1, 1, 24).reshape(8, 3).astype("float32")
Y = (X @ np.array([[1.0], [-2.0], [0.5]], "float32")).astype("float32")


@pytest.fixture(autouse=True)
def _setup(numpy_backend):
    backend.clear_session()
    tf.random.set_seed(0)


def _sequential():
    model = K.Sequential([K.Input((3,)), K.layers.Dense(4, activation="relu", name="d1"),
                          K.layers.BatchNormalization(), K.layers.Dense(1, name="d2")])
    model.compile(K.optimizers.Adam(0.01), "mse", metrics=["mae"])
    return model


def _functional():
    a, b = K.Input((3,), name="a"), K.Input((2,), name="b")
    shared = K.layers.Dense(4, name="shared")
    h = K.layers.Concatenate()([shared(a), K.layers.Dense(4, activation="tanh")(b), shared(a)])
    out = K.layers.Dense(1, name="out")(K.layers.LayerNormalization()(K.layers.Dropout(0.1)(h)))
    return K.Model([a, b], out)


@K.saving.register_keras_serializable(package="tests")
class TwoDense(K.Model):
    def __init__(self, units=2, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.hidden = K.layers.Dense(units, activation="relu")
        self.out = K.layers.Dense(1)

    def call(self, x):
        return self.out(self.hidden(x))


# -- round trips --------------------------------------------------------------------------------

def test_sequential_round_trip_predicts_and_continues_training(tmp_path):
    model = _sequential()
    model.fit(X, Y, epochs=2, batch_size=4, verbose=0)
    path = tmp_path / "m.keras"
    model.save(path)
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
    assert names[:3] == ["metadata.json", "config.json", "model.weights.json"]
    loaded = K.models.load_model(path)
    assert type(loaded) is K.Sequential and [l.name for l in loaded.layers] == ["d1", "batch_normalization", "d2"]
    np.testing.assert_array_equal(loaded.predict(X, verbose=0), model.predict(X, verbose=0))
    # the optimizer state came too: the same next epoch, bit for bit
    assert int(loaded.optimizer.iterations.numpy()) == 4
    assert type(loaded.optimizer) is K.optimizers.Adam
    h1 = model.fit(X, Y, batch_size=4, verbose=0, shuffle=False).history
    h2 = loaded.fit(X, Y, batch_size=4, verbose=0, shuffle=False).history
    assert h1 == h2 and set(h1) == {"loss", "mae"}
    loaded.save(tmp_path / "again.keras")
    again = K.models.load_model(tmp_path / "again.keras")
    np.testing.assert_array_equal(again.predict(X, verbose=0), loaded.predict(X, verbose=0))


def test_without_the_optimizer_the_model_is_compiled_afresh(tmp_path):
    model = _sequential()
    model.fit(X, Y, epochs=1, batch_size=4, verbose=0)
    model.save(tmp_path / "m.keras", include_optimizer=False)
    loaded = K.models.load_model(tmp_path / "m.keras")
    assert loaded.compiled and not loaded.optimizer._built
    uncompiled = K.models.load_model(tmp_path / "m.keras", compile=False)
    assert not uncompiled.compiled


def test_functional_round_trip_with_shared_layers_and_two_inputs(tmp_path):
    model = _functional()
    xa, xb = X[:, :3], X[:, :2]
    model.save(tmp_path / "f.keras")
    loaded = K.models.load_model(tmp_path / "f.keras")
    assert [l.name for l in loaded.layers] == [l.name for l in model.layers]
    np.testing.assert_array_equal(loaded.predict([xa, xb], verbose=0), model.predict([xa, xb], verbose=0))
    config = model.get_config()
    shared = next(e for e in config["layers"] if e["name"] == "shared")
    assert len(shared["inbound_nodes"]) == 2           # called twice, as Keras records it
    assert config["input_layers"] == [["a", 0, 0], ["b", 0, 0]]
    rebuilt = K.Model.from_config(config)
    assert [l.name for l in rebuilt.layers] == [l.name for l in model.layers]


def test_subclassed_model_needs_registration_or_custom_objects(tmp_path):
    model = TwoDense(3)
    model(X)
    # TF 2.21: the constructor's plain arguments are the config
    assert model.get_config() == {"name": model.name, "trainable": True, "dtype": "float32", "units": 3}
    model.save(tmp_path / "s.keras")
    loaded = K.models.load_model(tmp_path / "s.keras")
    assert type(loaded) is TwoDense and loaded.units == 3
    np.testing.assert_array_equal(loaded(X).numpy(), model(X).numpy())

    class Unregistered(K.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = K.layers.Dense(1)

        def call(self, x):
            return self.dense(x)

    plain = Unregistered()
    plain(X)
    plain.save(tmp_path / "u.keras")
    # TF 2.21: TypeError "Could not locate class 'Unregistered'. Make sure custom classes ..."
    with pytest.raises(TypeError, match=r"u\.keras/config\.json: Could not locate class 'Unregistered'"):
        K.models.load_model(tmp_path / "u.keras")
    loaded = K.models.load_model(tmp_path / "u.keras", custom_objects={"Unregistered": Unregistered})
    np.testing.assert_array_equal(loaded(X).numpy(), plain(X).numpy())


def test_non_serializable_constructor_arguments_need_get_config(tmp_path):
    class Holder(K.Model):
        def __init__(self, thing):
            super().__init__()
            self.thing, self.dense = thing, K.layers.Dense(1)

        def call(self, x):
            return self.dense(x)

    model = Holder(object())
    model(X)
    # TF 2.21: NotImplementedError "Object Holder was created by passing non-serializable ..."
    with pytest.raises(NotImplementedError, match="Object Holder was created by passing\nnon-serializable"):
        model.get_config()
    with pytest.raises(NotImplementedError, match="must override `get_config\\(\\)`"):
        model.save(tmp_path / "h.keras")


def test_save_and_load_weights(tmp_path):
    model, other = _sequential(), _sequential()
    model.fit(X, Y, epochs=1, batch_size=4, verbose=0)
    model.save_weights(tmp_path / "w.weights.h5")
    other.load_weights(tmp_path / "w.weights.h5")
    np.testing.assert_array_equal(other.predict(X, verbose=0), model.predict(X, verbose=0))
    other.set_weights(model.get_weights())
    # TF 2.21: "The filename must end in `.weights.h5`. Received: filepath=w.h5"
    with pytest.raises(ValueError, match="The filename must end in `.weights.h5`"):
        model.save_weights(tmp_path / "w.h5")
    small = K.Sequential([K.Input((3,)), K.layers.Dense(2)])
    with pytest.raises(SavedModelError, match="do not fit this model"):
        small.load_weights(tmp_path / "w.weights.h5")


def test_path_errors_are_keras_errors(tmp_path):
    model = _sequential()
    # TF 2.21: "Invalid filepath extension for saving. Please add either a `.keras` extension ..."
    for name in ("x.h6", "x"):
        with pytest.raises(ValueError, match="Invalid filepath extension for saving"):
            model.save(tmp_path / name)
    # TF 2.21: "File not found: filepath=nonexist.keras. Please ensure the file is an accessible ..."
    with pytest.raises(ValueError, match="File not found: filepath=.*nonexist.keras"):
        K.models.load_model(tmp_path / "nonexist.keras")


def test_every_layer_config_round_trips():
    layers = [K.layers.Dense(3, activation="tanh", kernel_initializer="he_normal"),
              K.layers.Dropout(0.3, noise_shape=(None, 1), seed=2), K.layers.Flatten(),
              K.layers.Reshape((2, -1)), K.layers.Activation("softmax"), K.layers.ReLU(max_value=6.0),
              K.layers.Softmax(axis=1), K.layers.Concatenate(axis=0), K.layers.Add(),
              K.layers.Embedding(4, 2), K.layers.LayerNormalization(epsilon=0.01),
              K.layers.BatchNormalization(momentum=0.9)]
    for layer in layers:
        config = layer.get_config()
        json.dumps(config)
        assert type(layer).from_config(config).get_config() == config


# -- hostile files --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """One saved model's members, to be tampered with."""
    backend.clear_session()
    model = K.Sequential([K.Input((3,)), K.layers.Dense(2, name="d")])
    model.compile("sgd", "mse")
    model.fit(X, np.zeros((8, 2), "float32"), verbose=0)
    path = tmp_path_factory.mktemp("saved") / "m.keras"
    model.save(path)
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def _write(path, members):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def _load_error(tmp_path, members, error=SavedModelError):
    path = _write(tmp_path / "bad.keras", members)
    with pytest.raises(error) as info:
        K.models.load_model(path)
    assert "bad.keras" in str(info.value)
    return str(info.value)


def test_untampered_copy_loads(tmp_path, saved):
    K.models.load_model(_write(tmp_path / "ok.keras", saved))


def test_truncated_zip(tmp_path, saved):
    good = _write(tmp_path / "good.keras", saved).read_bytes()
    for cut in (10, len(good) // 2, len(good) - 30):
        (tmp_path / "bad.keras").write_bytes(good[:cut])
        with pytest.raises(SavedModelError, match="bad.keras: is not a readable zip file"):
            K.models.load_model(tmp_path / "bad.keras")


def test_corrupt_member_data(tmp_path, saved):
    good = bytearray(_write(tmp_path / "good.keras", saved).read_bytes())
    at = good.index(b"NUMPY") + 60
    good[at] ^= 0xFF  # the CRC no longer matches
    (tmp_path / "bad.keras").write_bytes(bytes(good))
    with pytest.raises(SavedModelError, match="truncated or corrupt|npy"):
        K.models.load_model(tmp_path / "bad.keras")


@pytest.mark.parametrize("name", ["../evil.npy", "/etc/evil.json", "model.weights/../../x.npy",
                                  "model.weights/0.npy/", "model.weights/a.npy", "payload.pkl",
                                  "model.weights.h5"])
def test_unexpected_member_names(tmp_path, saved, name):
    message = _load_error(tmp_path, {**saved, name: b"x"})
    assert "unexpected member" in message or "HDF5" in message


def test_pickle_member_is_never_unpickled(tmp_path, saved):
    class Boom:
        def __reduce__(self):
            return (exec, ("raise SystemExit('unpickled!')",))
    payload = pickle.dumps(Boom())
    _load_error(tmp_path, {**saved, "model.weights/9.npy": payload})  # not in the index: never read
    index = json.loads(saved["model.weights.json"])
    npy = io.BytesIO()
    np.lib.format.write_array(npy, np.array([object()] * 2, dtype=object), allow_pickle=True)
    message = _load_error(tmp_path, {**saved, index["weights"][0]["file"]: npy.getvalue()})
    assert "no pickles" in message


def test_duplicate_members(tmp_path, saved):
    path = tmp_path / "bad.keras"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in saved.items():
            z.writestr(name, data)
        with pytest.warns(UserWarning):
            z.writestr("config.json", saved["config.json"])
    with pytest.raises(SavedModelError, match="twice"):
        K.models.load_model(path)


def _with_config(saved, edit):
    config = json.loads(saved["config.json"])
    edit(config)
    return {**saved, "config.json": json.dumps(config).encode()}


def test_unknown_class_names(tmp_path, saved):
    def rename(config):
        config["config"]["layers"][1]["class_name"] = "os.system"
    message = _load_error(tmp_path, _with_config(saved, rename), TypeError)
    assert "Could not locate class 'os.system'" in message

    def bad_activation(config):
        config["config"]["layers"][1]["config"]["activation"] = "__import__"
    assert "Unknown activation function: '__import__'" in _load_error(
        tmp_path, _with_config(saved, bad_activation))

    def bad_initializer(config):
        config["config"]["layers"][1]["config"]["kernel_initializer"] = {"class_name": "Evil", "config": {}}
    assert "Unknown initializer" in _load_error(tmp_path, _with_config(saved, bad_initializer))


def test_huge_declared_shapes(tmp_path, saved):
    def huge_units(config):
        config["config"]["layers"][1]["config"]["units"] = 1 << 40
    message = _load_error(tmp_path, _with_config(saved, huge_units))
    assert "config.json" in message and ("allowed" in message or "budget" in message)

    def huge_input(config):
        config["config"]["layers"][0]["config"]["batch_shape"] = [None, 1 << 41]
    assert "dim" in _load_error(tmp_path, _with_config(saved, huge_input))

    index = json.loads(saved["model.weights.json"])
    index["weights"][0]["shape"] = [1 << 20, 1 << 20]
    message = _load_error(tmp_path, {**saved, "model.weights.json": json.dumps(index).encode()})
    assert "model.weights.json" in message and "allowed" in message


def test_index_and_array_mismatches(tmp_path, saved):
    index = json.loads(saved["model.weights.json"])
    index["weights"][0]["shape"] = [3, 5]
    assert "model's" in _load_error(tmp_path, {**saved, "model.weights.json": json.dumps(index).encode()})
    index = json.loads(saved["model.weights.json"])
    index["weights"][0]["file"] = "../config.json"
    assert "member" in _load_error(tmp_path, {**saved, "model.weights.json": json.dumps(index).encode()})
    index = json.loads(saved["model.weights.json"])
    short = io.BytesIO()
    np.save(short, np.zeros((3, 1), "float32"))
    message = _load_error(tmp_path, {**saved, index["weights"][0]["file"]: short.getvalue()})
    assert "the manifest says" in message


def test_malformed_json(tmp_path, saved):
    assert "not valid JSON" in _load_error(tmp_path, {**saved, "config.json": b"{"})
    deep = b"[" * 10_000 + b"]" * 10_000
    assert "deeper" in _load_error(tmp_path, {**saved, "config.json": deep})
    assert "format" in _load_error(tmp_path, {**saved, "metadata.json": b'{"keras_version": "3.15.1"}'})
    assert "has no config.json" in _load_error(
        tmp_path, {k: v for k, v in saved.items() if k != "config.json"})


def test_a_member_larger_than_it_declares_is_refused(tmp_path, saved):
    """A zip bomb's trick: the header declares a small size, the data inflates to more."""
    path = _write(tmp_path / "bad.keras", {**saved, "config.json": saved["config.json"] + b" " * 200_000})
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("config.json")
    declared = (info.file_size).to_bytes(4, "little")
    small = (len(saved["config.json"])).to_bytes(4, "little")
    assert data.count(declared) >= 2              # the local header and the central directory
    (tmp_path / "bad.keras").write_bytes(bytes(data).replace(declared, small))
    with pytest.raises(SavedModelError, match=r"bad\.keras(/config\.json)?: "):
        K.models.load_model(tmp_path / "bad.keras")


def test_a_huge_zip_directory_is_refused_before_it_is_parsed(tmp_path, saved):
    data = bytearray(_write(tmp_path / "good.keras", saved).read_bytes())
    end = data.rfind(b"PK\x05\x06")
    data[end + 12:end + 16] = (1 << 30).to_bytes(4, "little")
    (tmp_path / "bad.keras").write_bytes(bytes(data))
    with pytest.raises(SavedModelError, match="bad.keras: its zip directory is 1073741824 bytes"):
        K.models.load_model(tmp_path / "bad.keras")


def test_compile_objects_round_trip(tmp_path):
    model = K.Sequential([K.Input((4,)), K.layers.Dense(3)])
    model.compile(K.optimizers.SGD(0.1, momentum=0.5), K.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=[K.metrics.SparseCategoricalAccuracy(), "accuracy"])
    x, y = np.linspace(0, 1, 32).reshape(8, 4).astype("float32"), np.array([0, 1, 2, 0, 1, 2, 0, 1])
    model.fit(x, y, verbose=0)
    model.save(tmp_path / "c.keras")
    loaded = K.models.load_model(tmp_path / "c.keras")
    assert loaded.optimizer.momentum == 0.5 and loaded._compile_loss._loss.from_logits
    assert model.fit(x, y, verbose=0, shuffle=False).history == loaded.fit(x, y, verbose=0, shuffle=False).history

    def python_loss(y_true, y_pred):
        return tf.reduce_mean(tf.square(y_pred))

    model.compile("sgd", python_loss)
    model.save(tmp_path / "f.keras")   # a Python function is not data: saved without compile_config
    assert not K.models.load_model(tmp_path / "f.keras").compiled
