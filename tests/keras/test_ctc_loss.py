"""keras.losses.CTC / ctc against Keras 3.15's numbers (ctc_facts.py): values and the tape's
gradient, eager and compiled, an impossible alignment, dtypes, configs and training."""
import numpy as np
import pytest

import tapeflow as tf
from tests.keras import ctc_facts as F

f32 = np.float32


def _loss_and_grad(y, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        per_sample = tf.keras.losses.ctc(y, x)
        loss = tf.keras.losses.CTC()(y, x)
    return per_sample, loss, tape.gradient(loss, x)


@pytest.mark.parametrize("compiled", [False, True])
def test_ctc_matches_keras(compiled, numpy_backend):
    fn = tf.function(_loss_and_grad) if compiled else _loss_and_grad
    per_sample, loss, grad = fn(tf.constant(np.array(F.Y, np.int32)), tf.constant(np.array(F.X, f32)))
    np.testing.assert_allclose(per_sample.numpy(), np.array(F.PER, f32), rtol=1e-5)
    np.testing.assert_allclose(float(loss), F.LOSS, rtol=1e-5)
    np.testing.assert_allclose(grad.numpy(), np.array(F.GRAD, f32), rtol=1e-4, atol=1e-6)


def test_ctc_without_an_alignment_pays_tfs_penalty():
    """Three 1s need five frames; with four, TF's finite log(1e-307) stands in for -inf."""
    x = tf.constant(np.array(F.X2, f32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.keras.losses.ctc(tf.constant(np.array(F.Y2, np.int32)), x)
    np.testing.assert_allclose(loss.numpy(), np.array(F.PER2, f32), rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), np.array(F.GRAD2, f32), atol=1e-4)


def test_ctc_dtypes_reductions_config_and_errors():
    y, x = np.array(F.Y, np.int32), np.array(F.X, f32)
    per64 = tf.keras.losses.ctc(y, x.astype(np.float64))
    assert per64.dtype == tf.float64
    np.testing.assert_allclose(per64.numpy(), F.PER, rtol=1e-6)
    np.testing.assert_allclose(float(tf.keras.losses.CTC(reduction="sum")(y, x)), F.SUM, rtol=1e-5)
    loss = tf.keras.losses.CTC()
    assert loss.get_config() == {"name": "ctc", "reduction": "sum_over_batch_size"}
    assert tf.keras.losses.get("ctc") is tf.keras.losses.ctc
    assert type(tf.keras.losses.deserialize(tf.keras.losses.serialize(loss))).__name__ == "CTC"
    with pytest.raises(ValueError, match="batch_size, max_length\\)` in integer"):
        tf.keras.losses.ctc(y[..., None], x)
    with pytest.raises(ValueError, match="num_classes"):
        tf.keras.losses.ctc(y, x[0])


def test_fit_with_ctc_lowers_the_loss(numpy_backend):
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 6, 4)).astype(f32)
    y = np.array([[1, 2, 0], [3, 0, 0], [2, 2, 1], [1, 3, 0]] * 2, np.int32)
    model = tf.keras.Sequential([tf.keras.Input((6, 4)), tf.keras.layers.Dense(4)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="ctc")
    history = model.fit(x, y, batch_size=4, epochs=5, verbose=0, shuffle=False)
    losses = history.history["loss"]
    assert losses[-1] < 0.8 * losses[0]
