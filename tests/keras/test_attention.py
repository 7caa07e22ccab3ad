"""Attention and normalization layers against TensorFlow 2.21 (attention_facts.py, made by running
attention_cases.py on TF): outputs, attention scores, and gradients with respect to every input
and weight, eagerly and inside a function; masks (causal, attention_mask, value/query masks)
as Keras 3 applies them on each of its paths."""
import numpy as np
import pytest

import tapeflow as tf

from attention_cases import cases, run_case, tensors
from attention_facts import FACTS
from recurrent_cases import flatten, seeds, weight_value

CASES = cases(tf)


def check(got, name):
    for part, (g, w) in enumerate(zip(got, FACTS[name])):
        assert len(g) == len(w), (name, part)
        for a, b in zip(g, w):
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("name", sorted(FACTS))
def test_eager_matches_tensorflow(name):
    check(run_case(tf, CASES[name]), name)


@pytest.mark.parametrize("name", sorted(FACTS))
def test_function_matches_tensorflow(name):
    check(in_function(name, jit_compile=False), name)


@pytest.mark.slow
@pytest.mark.filterwarnings("error::tapeflow.codegen.generate.InterpreterFallbackWarning")
@pytest.mark.parametrize("name", ["mha_causal", "mha_attention_mask_scores", "mha_axes", "gqa",
                                  "attention_scaled_masks", "additive", "group_norm"])
def test_compiled_matches_tensorflow(name):
    """The Numba program of the layer's forward and gradient (compiled == eager == TF)."""
    check(in_function(name, jit_compile=True), name)


def in_function(name, jit_compile):
    make, call, used = CASES[name]
    values = tensors()
    t = {k: tf.constant(v) for k, v in values.items()}
    layer = make()
    call(layer, t)
    for k, w in enumerate(layer.weights):
        w.assign(weight_value(k, tuple(w.shape)))

    @tf.function(jit_compile=jit_compile)
    def step(t):
        sources = [t[n] for n in used]
        with tf.GradientTape() as tape:
            tape.watch(sources)
            flat = flatten(call(layer, t))
            loss = tf.add_n([tf.reduce_sum(o * seeds(k, tuple(o.shape)))
                             for k, o in enumerate(flat)])
        grads = tape.gradient(loss, sources + list(layer.weights))
        return flat, grads[:len(sources)], grads[len(sources):]

    return step(t)


def test_softmax_masked_rows():
    """Keras' Softmax zeroes a fully masked row; dot_product_attention makes it uniform."""
    from tapeflow.keras.attention import masked_softmax
    x = tf.constant([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    mask = tf.constant([[True, False, True], [False, False, False]])
    out = masked_softmax(x, mask).numpy()
    np.testing.assert_allclose(out[0], [0.11920292, 0.0, 0.88079708], rtol=1e-6)
    np.testing.assert_array_equal(out[1], [0.0, 0.0, 0.0])


def test_mha_query_mask_from_a_masking_layer_and_config():
    L = tf.keras.layers
    x = tf.constant(tensors()["q"]) * tf.constant([[[1.0], [0.0], [1.0]], [[1.0], [1.0], [1.0]]])
    masked = L.Masking()(x)
    mha = L.MultiHeadAttention(num_heads=2, key_dim=3)
    out = mha(masked, masked)
    # Keras 3 turns the query's mask into the attention mask (query x value) and passes it on
    explicit = mha(x, x, attention_mask=tf.constant(
        [[[1, 0, 1], [0, 0, 0], [1, 0, 1]], [[1, 1, 1]] * 3]))
    np.testing.assert_allclose(out.numpy(), explicit.numpy(), rtol=1e-6)
    from tapeflow.keras import masking
    assert masking.get_mask(out) is not None
    config = mha.get_config()
    copy = L.MultiHeadAttention.from_config(config)
    assert copy.get_config() == {**config, "name": copy.name}


def test_configs_round_trip():
    L = tf.keras.layers
    from tapeflow.keras import serialization
    t = {k: tf.constant(v) for k, v in tensors().items()}
    for name in ("gqa", "attention_scaled_masks", "additive", "einsum_dense", "group_norm",
                 "rms_norm_axes", "unit_norm_axes", "mha_axes"):
        make, call, _ = CASES[name]
        layer = make()
        call(layer, t)
        copy = serialization.deserialize(serialization.serialize(layer))
        call(copy, t)
        copy.set_weights(layer.get_weights())
        for a, b in zip(np.atleast_1d(call(copy, t)), np.atleast_1d(call(layer, t))):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    assert isinstance(L.GroupQueryAttention(2, 4, 2), L.GroupedQueryAttention)


def test_errors():
    L = tf.keras.layers
    with pytest.raises(ValueError, match="num_heads"):
        L.MultiHeadAttention(0, 2)
    with pytest.raises(ValueError, match="divisible"):
        L.GroupQueryAttention(head_dim=2, num_query_heads=3, num_key_value_heads=2)
    with pytest.raises(ValueError, match="list of inputs"):
        L.Attention()(tf.ones((1, 2, 3)))
    with pytest.raises(ValueError, match="multiple"):
        L.GroupNormalization(groups=3)(tf.ones((1, 4)))
    with pytest.raises(ValueError, match="Invalid einsum equation"):
        L.EinsumDense("abc", 3)(tf.ones((1, 2)))


def test_transformer_encoder_block_trains_with_fit(numpy_backend):
    """Embedding + MultiHeadAttention (causal) + LayerNormalization + Dense feed-forward,
    trained with fit on synthetic sequences: the loss falls."""
    L = tf.keras.layers
    rng = np.random.default_rng(1)
    tf.random.set_seed(1)
    x = rng.integers(0, 10, (64, 5)).astype(np.int32)
    y = ((x == 1).sum(1) > (x == 2).sum(1)).astype(np.float32)
    inp = tf.keras.Input((5,), dtype="int32")
    h = L.Embedding(10, 8)(inp)
    a = L.MultiHeadAttention(num_heads=2, key_dim=4)(h, h, use_causal_mask=True)
    h = L.LayerNormalization()(L.Add()([h, a]))
    f = L.Dense(8)(L.Dense(16, activation="relu")(h))
    h = L.LayerNormalization()(L.Add()([h, f]))
    out = L.Dense(1, activation="sigmoid")(L.Flatten()(h))
    model = tf.keras.Model(inp, out)
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="binary_crossentropy")
    losses = model.fit(x, y, epochs=10, batch_size=16, verbose=0).history["loss"]
    assert losses[-1] < 0.6 * losses[0], losses


def test_transformer_encoder_block_fit_follows_tensorflow(numpy_backend):
    """The encoder block from fixed weights, SGD, no shuffling: TF 2.21's per-epoch losses."""
    L = tf.keras.layers
    rng = np.random.default_rng(1)
    x = rng.integers(0, 10, (32, 5)).astype(np.int32)
    y = ((x == 1).sum(1) > (x == 2).sum(1)).astype(np.float32)
    inp = tf.keras.Input((5,), dtype="int32")
    h = L.Embedding(10, 8)(inp)
    a = L.MultiHeadAttention(num_heads=2, key_dim=4)(h, h, use_causal_mask=True)
    h = L.LayerNormalization()(L.Add()([h, a]))
    f = L.Dense(8)(L.Dense(16, activation="relu")(h))
    h = L.LayerNormalization()(L.Add()([h, f]))
    model = tf.keras.Model(inp, L.Dense(1, activation="sigmoid")(L.Flatten()(h)))
    for k, w in enumerate(model.weights):
        w.assign(weight_value(k, tuple(w.shape)))
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="binary_crossentropy")
    losses = model.fit(x, y, epochs=4, batch_size=16, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(losses, [0.5855403, 0.528999, 0.4997396, 0.4825457], rtol=1e-5)


def test_regularizers_reach_the_projections():
    L = tf.keras.layers
    mha = L.MultiHeadAttention(2, 3, kernel_regularizer=tf.keras.regularizers.L2(0.1),
                               bias_constraint=tf.keras.constraints.NonNeg())
    q = tf.constant(tensors()["q"])
    mha(q, q)
    kernels = [w for w in mha.weights if "kernel" in w.name]
    np.testing.assert_allclose(float(tf.add_n(mha.losses)),
                               sum(0.1 * np.sum(k.numpy() ** 2) for k in kernels), rtol=1e-5)
    config = mha.get_config()
    assert config["kernel_regularizer"]["class_name"] == "L2"
    assert L.MultiHeadAttention.from_config(config).get_config()["bias_constraint"] == \
        config["bias_constraint"]
    dense = L.EinsumDense("ab,bc->ac", 3, kernel_regularizer="l2")
    dense(tf.ones((1, 2)))
    assert len(dense.losses) == 1
    norm = L.GroupNormalization(2, gamma_regularizer="l2")
    norm(tf.ones((1, 4)))
    assert len(norm.losses) == 1
    assert L.GroupNormalization.from_config(norm.get_config()).get_config()[
        "gamma_regularizer"] == norm.get_config()["gamma_regularizer"]
