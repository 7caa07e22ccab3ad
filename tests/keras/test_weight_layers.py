"""ReversibleEmbedding, SpectralNormalization and the STFT initializer against Keras 3.15's
numbers (weight_layer_facts.py), eager and in one compiled function, with their configs."""
import json

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import backend
from tests.keras import weight_layer_facts as F

# semantics, not codegen: traced functions run on the NumPy interpreter (no compile time)
pytestmark = pytest.mark.usefixtures("numpy_backend")

f32 = np.float32
L = tf.keras.layers


@pytest.fixture(autouse=True)
def fresh_names():
    backend.clear_session()


def _a(x):
    return np.array(x, f32)


def test_reversible_embedding_tied_and_untied():
    tied = L.ReversibleEmbedding(5, 3, logit_soft_cap=2.0)
    tied.build()
    tied.set_weights([_a(F.E)])
    np.testing.assert_allclose(tied(tf.constant(_a(F.H)), reverse=True).numpy(), _a(F.REV_TIED_CAP), rtol=1e-6)
    np.testing.assert_array_equal(tied(tf.constant([[0, 4, 2]])).numpy(), _a(F.FWD))
    untied = L.ReversibleEmbedding(5, 3, tie_weights=False, mask_zero=True)
    untied.build()
    untied.set_weights([_a(F.E), _a(F.R)])
    assert [w.name for w in untied.weights] == ["embeddings:0", "reverse_embeddings:0"]
    np.testing.assert_allclose(untied(tf.constant(_a(F.H)), reverse=True).numpy(), _a(F.REV_UNTIED), rtol=1e-6)
    assert untied.compute_mask(tf.constant([[0, 4, 2]])).numpy().tolist() == [[False, True, True]]
    assert untied.compute_mask(tf.constant(_a(F.H))) is None
    assert tuple(untied.compute_output_shape((2, 7, 3), reverse=True)) == (2, 7, 5)
    config = untied.get_config()
    assert (config["tie_weights"], config["reverse_dtype"], config["logit_soft_cap"]) == (False, None, None)
    again = L.ReversibleEmbedding.from_config(config)
    assert (again.input_dim, again.output_dim, again.tie_weights, again.mask_zero) == (5, 3, False, True)


def test_reversible_embedding_trains_tied_weights_in_a_model(numpy_backend):
    """A tiny language-model step: embed, reverse to logits; the one table gets both gradients."""
    layer = L.ReversibleEmbedding(5, 3)
    layer.build()
    layer.set_weights([_a(F.E)])
    ids = tf.constant([[0, 4, 2]])

    def grad():
        with tf.GradientTape() as tape:
            logits = layer(layer(ids), reverse=True)
            loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(ids, logits))
        return tape.gradient(loss, layer.embeddings)
    eager = grad()
    np.testing.assert_allclose(tf.function(grad)().numpy(), eager.numpy(), rtol=1e-6)
    assert np.count_nonzero(eager.numpy()[1]) == 3     # id 1 only through the reverse projection


@pytest.mark.parametrize("iterations", [1, 3])
def test_spectral_normalization_training_calls(iterations):
    dense = L.Dense(4, use_bias=False)
    layer = L.SpectralNormalization(dense, power_iterations=iterations)
    layer.build((None, 3))
    dense.kernel.assign(_a(F.SK))
    layer.vector_u.assign(_a(F.SU))
    x = tf.constant(_a(F.SX))
    for suffix in ("", "2"):
        out = layer(x, training=True)
        np.testing.assert_allclose(out.numpy(), _a(getattr(F, f"SN{iterations}_OUT{suffix}")), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(dense.kernel.numpy(), _a(getattr(F, f"SN{iterations}_KERNEL{suffix}")),
                                   rtol=1e-5, atol=1e-6)
        if not suffix:
            np.testing.assert_allclose(layer.vector_u.numpy(), _a(getattr(F, f"SN{iterations}_U")),
                                       rtol=1e-5, atol=1e-6)
    before = dense.kernel.numpy()
    layer(x)                                  # not training: the kernel stays
    np.testing.assert_array_equal(dense.kernel.numpy(), before)


def test_spectral_normalization_gradient_compiled_and_eager(numpy_backend):
    dense = L.Dense(4, use_bias=False)
    layer = L.SpectralNormalization(dense)
    layer.build((None, 3))
    x = tf.constant(_a(F.SX))

    def grad():
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(layer(x, training=True) ** 2)
        return tape.gradient(y, dense.kernel)
    for fn in (grad, tf.function(grad)):
        dense.kernel.assign(_a(F.SK))
        layer.vector_u.assign(_a(F.SU))
        np.testing.assert_allclose(fn().numpy(), _a(F.SN_GRAD), rtol=1e-5, atol=1e-6)


def test_spectral_normalization_rules():
    emb = L.Embedding(5, 3)
    layer = L.SpectralNormalization(emb)
    layer.build((None, 2))
    emb.embeddings.assign(_a(F.E))
    layer.vector_u.assign(_a(F.SU)[:, :3])
    out = layer(tf.constant([[1, 2]]), training=True)       # Keras casts to the ids' dtype
    assert out.dtype == tf.int32 and out.numpy().tolist() == F.SN_EMB
    zero = L.Dense(2, kernel_initializer="zeros")
    wrapped = L.SpectralNormalization(zero)
    wrapped(tf.ones((1, 2)), training=True)                  # an all-zero kernel is left alone
    assert not np.isnan(zero.kernel.numpy()).any()
    with pytest.raises(ValueError, match="greater than zero"):
        L.SpectralNormalization(L.Dense(2), power_iterations=0)
    with pytest.raises(ValueError, match="nor 'embeddings'"):
        L.SpectralNormalization(L.Flatten())(tf.ones((1, 2)))
    assert L.SpectralNormalization(L.Dense(2), power_iterations=3).get_config()["power_iterations"] == 3


STFT_CASES = {   # fact name -> (side, window, scaling, periodic)
    "STFT_HANN_DENSITY": ("real", "hann", "density", False),
    "STFT_HAMMING_SPECTRUM_PERIODIC": ("imag", "hamming", "spectrum", True),
    "STFT_NONE": ("real", None, None, False),
    "STFT_HANN_NOSCALE": ("imag", "hann", None, False),
}


@pytest.mark.parametrize("fact", list(STFT_CASES))
def test_stft_kernels(fact):
    init = tf.keras.initializers.STFT(*STFT_CASES[fact])
    np.testing.assert_allclose(init(shape=(6, 1, 4)).numpy(), _a(getattr(F, fact)), rtol=1e-5, atol=1e-6)


def test_stft_names_config_and_errors():
    I = tf.keras.initializers
    assert I.STFT is I.STFTInitializer is I.stft
    assert type(I.get("stft")).__name__ == "STFT"
    config = I.STFT(window=None).get_config()
    assert config == {"side": "real", "window": None, "periodic": False, "scaling": "density"}
    window = np.hanning(6)
    kernel = I.STFT(window=window, scaling=None)(shape=(6, 1, 4))
    again = I.deserialize(json.loads(json.dumps(I.serialize(I.STFT(window=window, scaling=None)))))
    np.testing.assert_array_equal(again(shape=(6, 1, 4)).numpy(), kernel.numpy())
    assert I.STFT()(shape=(6, 1, 4), dtype="float64").dtype == tf.float64
    with pytest.raises(ValueError, match="side should be"):
        I.STFT(side="both")
    with pytest.raises(ValueError, match="Scaling is invalid"):
        I.STFT(scaling="l2")
    with pytest.raises(ValueError, match="window"):
        I.STFT(window=np.ones(3))(shape=(6, 1, 4))


def test_a_functional_model_with_both_layers_saves_and_loads(tmp_path):
    inputs = tf.keras.Input((3,), dtype="int32")
    embedding = L.ReversibleEmbedding(7, 4, tie_weights=False)
    hidden = embedding(inputs)
    model = tf.keras.Model(inputs, [L.SpectralNormalization(L.Dense(2))(hidden), embedding(hidden, reverse=True)])
    model.save(tmp_path / "m.keras")
    loaded = tf.keras.models.load_model(tmp_path / "m.keras")
    x = np.array([[1, 2, 3]], "int32")
    for a, b in zip(model(x), loaded(x), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert tuple(loaded.outputs[1].shape) == (None, 3, 7)
    assert [w.name for w in loaded.weights][-1] == "spectral_normalization/vector_u:0"
