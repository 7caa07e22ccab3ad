"""Keras 3 models: Layer.build/add_weight, subclassed, Sequential and functional models, summary."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import backend

K = tf.keras


@pytest.fixture(autouse=True)
def _setup(numpy_backend):
    backend.clear_session()
    tf.random.set_seed(0)


X = np.random.default_rng(0).normal(size=(8, 3)).astype("float32")


class Affine(K.layers.Layer):
    """A Keras 3 custom layer: weights made in build from the input shape, with add_weight."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.build_shapes = []

    def build(self, input_shape):
        self.build_shapes.append(tuple(input_shape))
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="ones", name="w")
        self.b = self.add_weight(shape=(self.units,), initializer="zeros", trainable=False, name="b")

    def call(self, x):
        return tf.matmul(x, self.w) + self.b


def test_layer_build_on_first_call_and_add_weight():
    layer = Affine(2)
    assert not layer.built and layer.weights == []
    y = layer(X)
    layer(X[:2])
    assert layer.build_shapes == [(8, 3)] and layer.built
    assert [w.name for w in layer.trainable_weights] == ["affine/w:0"]
    assert [w.name for w in layer.non_trainable_weights] == ["affine/b:0"]
    assert layer.weights == layer.trainable_weights + layer.non_trainable_weights
    np.testing.assert_allclose(y.numpy(), X.sum(1, keepdims=True).repeat(2, 1), rtol=1e-6)


def test_add_weight_keras2_and_keras3_argument_orders():
    layer = K.layers.Layer()
    a = layer.add_weight((2, 3), "ones")  # Keras 3: shape, initializer
    b = layer.add_weight("bias", (3,), initializer="zeros", trainable=False)  # Keras 2: name first
    assert tuple(a.shape) == (2, 3) and a.trainable and np.all(a.numpy() == 1)
    assert tuple(b.shape) == (3,) and not b.trainable and b.name.startswith("bias")


def _weights(model):
    return [w.numpy() for w in model.weights]


def test_subclassed_sequential_and_functional_models_agree():
    class MLP(K.Model):
        def __init__(self):
            super().__init__()
            self.hidden = K.layers.Dense(4, activation="relu")
            self.out = K.layers.Dense(2)

        def call(self, x):
            return self.out(self.hidden(x))

    inputs = K.Input(shape=(3,))
    functional = K.Model(inputs, K.layers.Dense(2)(K.layers.Dense(4, activation="relu")(inputs)))
    sequential = K.Sequential([K.layers.Dense(4, activation="relu")])
    sequential.add(K.layers.Dense(2))
    subclassed = MLP()
    subclassed(X)
    sequential(X)
    assert type(functional).__name__ == "Functional" and isinstance(functional, K.Model)
    assert [type(l).__name__ for l in functional.layers] == ["InputLayer", "Dense", "Dense"]
    assert len(sequential.layers) == 2 and subclassed.layers == [subclassed.hidden, subclassed.out]
    reference = _weights(functional)
    for model in (sequential, subclassed):
        assert [tuple(w.shape) for w in model.trainable_variables] == [(3, 4), (4,), (4, 2), (2,)]
        model.set_weights(reference)
    expected = np.maximum(X @ reference[0] + reference[1], 0) @ reference[2] + reference[3]
    for model in (functional, sequential, subclassed):
        np.testing.assert_allclose(model(X).numpy(), expected, rtol=1e-5, atol=1e-6)


def test_subclassed_model_tracks_layers_in_assignment_order():
    class Two(K.Model):
        def __init__(self):
            super().__init__()
            self.b = K.layers.Dense(1, name="second")
            self.a = K.layers.Dense(1, name="first")

        def call(self, x):
            return self.a(self.b(x))

    model = Two()
    model(X)
    assert model.name == "two"
    assert [v.name for v in model.trainable_variables] == [
        "two/second/kernel:0", "two/second/bias:0", "two/first/kernel:0", "two/first/bias:0"]


def test_sequential_from_input_is_built_at_once():
    model = K.Sequential([K.Input((3,)), K.layers.Dense(5), K.layers.Dense(1)])
    assert model.built and [tuple(w.shape) for w in model.weights] == [(3, 5), (5,), (5, 1), (1,)]
    assert model.output_shape == (None, 1)
    assert K.Sequential([K.layers.Dense(2, input_shape=(4,))]).weights[0].shape == (4, 2)


def test_keras_tensors_and_functional_graphs():
    inputs = K.Input(shape=(3,))
    assert tuple(inputs.shape) == (None, 3) and inputs.dtype == tf.float32
    assert repr(inputs).startswith("<KerasTensor shape=(None, 3), dtype=float32, sparse=False")
    hidden = K.layers.Dense(4)(inputs)
    assert tuple(hidden.shape) == (None, 4)
    with pytest.raises(TypeError):
        bool(hidden)
    other = K.Input(shape=(3,))
    with pytest.raises(ValueError, match="Graph disconnected"):
        K.Model(inputs, K.layers.Dense(1)(other))


def test_functional_model_with_two_inputs_and_a_shared_layer():
    class Concat(K.layers.Layer):
        def call(self, xs):
            return tf.concat(xs, axis=-1)

    a, b = K.Input((2,)), K.Input((1,))
    shared = K.layers.Dense(3)
    out = Concat()([shared(Concat()([a, b])), shared(Concat()([b, a]))])
    model = K.Model([a, b], out)
    y = model([X[:, :2], X[:, 2:]]).numpy()
    k, bias = shared.kernel.numpy(), shared.bias.numpy()
    first = np.concatenate([X[:, :2], X[:, 2:]], 1) @ k + bias
    second = np.concatenate([X[:, 2:], X[:, :2]], 1) @ k + bias
    np.testing.assert_allclose(y, np.concatenate([first, second], 1), rtol=1e-5, atol=1e-6)
    assert len(model.trainable_weights) == 2  # the shared layer's weights, once


def test_functional_batchnorm_building_keeps_its_statistics():
    inputs = K.Input((3,))
    bn = K.layers.BatchNormalization()
    model = K.Model(inputs, bn(inputs, training=True))
    np.testing.assert_array_equal(bn.moving_mean.numpy(), np.zeros(3))
    model(X)  # the recorded training=True is replayed: the statistics move
    assert np.abs(bn.moving_mean.numpy()).sum() > 0


def test_summary_text_matches_keras3():
    model = K.Sequential([K.Input((2,)), K.layers.Dense(1)])
    lines = []
    model.summary(print_fn=lines.append)
    # TF 2.21 (Keras 3.15.1) prints, outside a terminal, before compile:
    assert lines[0] == (
        'Model: "sequential"\n'
        "┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓\n"
        "┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃\n"
        "┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩\n"
        "│ dense (Dense)                   │ (None, 1)              │             3 │\n"
        "└─────────────────────────────────┴────────────────────────┴───────────────┘\n"
        " Total params: 3 (12.00 B)\n"
        " Trainable params: 3 (12.00 B)\n"
        " Non-trainable params: 0 (0.00 B)\n")
    assert model.count_params() == 3


def test_namespaces():
    import tapeflow.losses
    import tapeflow.metrics
    assert tf.losses is K.losses and tapeflow.losses is K.losses and tf.metrics is K.metrics
    assert K.layers.Input is K.Input and K.models.Sequential is K.Sequential
    assert K.Model is K.models.Model and issubclass(K.Model, K.layers.Layer)
    assert K.losses.mse is K.losses.mean_squared_error


# -- summary of branching functional models --------------------------------------------------

# TF 2.21 (Keras 3.15.1) printed these for the same two models, outside a terminal.
BRANCHING_SUMMARY = """\
Model: "functional"
┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┓
┃ Layer (type)        ┃ Output Shape      ┃    Param # ┃ Connected to      ┃
┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━┩
│ a (InputLayer)      │ (None, 2)         │          0 │ -                 │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ shared_dense_layer… │ (None, 2)         │          6 │ a[0][0], a[0][0]  │
│ (Dense)             │                   │            │                   │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ b (InputLayer)      │ (None, 1)         │          0 │ -                 │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ c_input_with_a_lon… │ (None, 3)         │          0 │ -                 │
│ (InputLayer)        │                   │            │                   │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ concat              │ (None, 8)         │          0 │ shared_dense_lay… │
│ (Concatenate)       │                   │            │ b[0][0],          │
│                     │                   │            │ c_input_with_a_l… │
│                     │                   │            │ shared_dense_lay… │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ o1 (Dense)          │ (None, 1)         │          9 │ concat[0][0]      │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ o2 (Dense)          │ (None, 2)         │         18 │ concat[0][0]      │
└─────────────────────┴───────────────────┴────────────┴───────────────────┘
 Total params: 33 (132.00 B)
 Trainable params: 33 (132.00 B)
 Non-trainable params: 0 (0.00 B)
"""

MERGE_SUMMARY = """\
Model: "functional"
┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┓
┃ Layer (type)        ┃ Output Shape      ┃    Param # ┃ Connected to      ┃
┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━┩
│ input_layer         │ (None, 4)         │          0 │ -                 │
│ (InputLayer)        │                   │            │                   │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ dense (Dense)       │ (None, 3)         │         15 │ input_layer[0][0] │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ dense_1 (Dense)     │ (None, 3)         │         15 │ input_layer[0][0] │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ add (Add)           │ (None, 3)         │          0 │ dense[0][0],      │
│                     │                   │            │ dense_1[0][0]     │
└─────────────────────┴───────────────────┴────────────┴───────────────────┘
 Total params: 30 (120.00 B)
 Trainable params: 30 (120.00 B)
 Non-trainable params: 0 (0.00 B)
"""


def test_summary_of_branching_models_has_keras_connected_to_column(capsys):
    a, b = K.Input((2,), name="a"), K.Input((1,), name="b")
    c = K.Input((3,), name="c_input_with_a_long_name")
    shared = K.layers.Dense(2, name="shared_dense_layer_with_long_name")
    h = K.layers.Concatenate(name="concat")([shared(a), b, c, shared(a)])
    model = K.Model([a, b, c], [K.layers.Dense(1, name="o1")(h), K.layers.Dense(2, name="o2")(h)])
    # Keras' layer order: deepest first, ties in the order a walk from the outputs meets them
    assert [layer.name for layer in model.layers] == [
        "a", "shared_dense_layer_with_long_name", "b", "c_input_with_a_long_name", "concat", "o1", "o2"]
    model.summary()
    assert capsys.readouterr().out == BRANCHING_SUMMARY
    backend.clear_session()
    x = K.Input((4,))
    merged = K.layers.Add()([K.layers.Dense(3)(x), K.layers.Dense(3)(x)])
    K.Model(x, merged, name="functional").summary()
    assert capsys.readouterr().out == MERGE_SUMMARY


def test_functional_layers_and_weights_come_in_keras_order():
    a, b = K.Input((2,), name="a"), K.Input((1,), name="b")
    h = K.layers.Concatenate(name="concat")([K.layers.Dense(2, name="z_late")(b),
                                             K.layers.Dense(3, name="a_early")(a)])
    out = K.layers.Dense(1, name="o1")(K.layers.Dense(5, name="mid")(h))
    model = K.Model([a, b], [out, K.layers.Dense(2, name="o2")(h)])
    # TF 2.21
    assert [l.name for l in model.layers] == ["b", "a", "z_late", "a_early", "concat", "mid", "o1", "o2"]
    assert [tuple(w.shape) for w in model.weights] == [(1, 2), (2,), (2, 3), (3,), (5, 5), (5,), (5, 1),
                                                       (1,), (5, 2), (2,)]
