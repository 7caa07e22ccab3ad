"""Keras 3's activations and the non-convolutional layers against TF 2.21's outputs
(tests/keras/layer_cases.py holds the inputs, keras_facts.py TF's answers)."""
import os
import sys

import numpy as np
import pytest

import tapeflow as tf

sys.path.insert(0, os.path.dirname(__file__))
from keras_facts import ACTIVATION_FACTS, LAYER_FACTS  # noqa: E402
from layer_cases import X, layer_outputs  # noqa: E402


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kwargs,value", ACTIVATION_FACTS, ids=[f"{f[0]}-{i}" for i, f in enumerate(ACTIVATION_FACTS)])
def test_activation_matches_tf(name, kwargs, value):
    fn = tf.keras.activations.get(name)
    _close(fn(tf.constant(X), **kwargs), value)
    assert tf.keras.activations.serialize(fn) in (name, "silu", "hard_silu")


def test_activations_compiled_equal_eager():
    @tf.function
    def all_activations(x):
        return [tf.keras.activations.get(n)(x, **kw) for n, kw, _ in ACTIVATION_FACTS]
    for got, (_, _, value) in zip(all_activations(tf.constant(X)), ACTIVATION_FACTS):
        _close(got, value)


def test_layers_match_tf():
    got = dict(layer_outputs(tf.keras))
    for name, value in LAYER_FACTS:
        _close(got[name], value)


def test_layer_strings_configs_and_noise():
    layer = tf.keras.layers.Dense(2, activation="mish")
    assert layer.get_config()["activation"] == "mish"
    for layer in (tf.keras.layers.LeakyReLU(0.1), tf.keras.layers.Dot(axes=1, normalize=True),
                  tf.keras.layers.Rescaling(0.5, 1.0), tf.keras.layers.GaussianNoise(0.2, seed=3),
                  tf.keras.layers.Normalization(mean=[1.0], variance=[2.0])):
        restored = tf.keras.layers.deserialize(tf.keras.layers.serialize(layer))
        assert type(restored) is type(layer) and restored.get_config() == layer.get_config()
    x = tf.ones((64, 32))
    noisy = tf.keras.layers.GaussianNoise(0.5, seed=1)(x, training=True).numpy()
    assert abs(noisy.mean() - 1.0) < 0.05 and 0.45 < noisy.std() < 0.55
    assert np.array_equal(tf.keras.layers.GaussianNoise(0.5)(x).numpy(), x.numpy())
    kept = tf.keras.layers.GaussianDropout(0.5, seed=1)(x, training=True).numpy()
    assert abs(kept.mean() - 1.0) < 0.05 and 0.9 < kept.std() < 1.1
    alpha = tf.keras.layers.AlphaDropout(0.2, seed=1)(tf.random.normal((256, 64), seed=1), training=True).numpy()
    assert abs(alpha.mean()) < 0.05 and abs(alpha.std() - 1.0) < 0.05
    reg = tf.keras.layers.ActivityRegularization(l1=0.1)
    reg(tf.constant([[1.0, -2.0]]))
    assert [float(v) for v in reg.losses] == pytest.approx([0.3])
