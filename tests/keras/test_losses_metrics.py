"""Keras 3 losses and metrics: NumPy formulas, and TensorFlow 2.21 (Keras 3.15.1) values as facts.

The constants marked "TF 2.21" were printed by ``tf.keras`` in TensorFlow 2.21.0 for the same inputs.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import losses, metrics

EPS = 1e-7
YT = np.array([[1.0, 0.0], [0.5, 2.0]], "float32")
YP = np.array([[0.8, 0.3], [1.0, 1.0]], "float32")
BT = np.array([[1.], [0.], [1.], [0.]], "float32")
BP = np.array([[0.9], [0.2], [1.0], [0.0]], "float32")
BL = np.array([[2.0], [-1.0], [30.0], [-0.5]], "float32")
ST = np.array([1, 2, 0])
SP = np.array([[0.05, 0.95, 0.], [0.1, 0.8, 0.1], [0.7, 0.2, 0.1]], "float32")
SL = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0], [2.0, 2.0, 2.0]], "float32")


@pytest.fixture(autouse=True)
def _numpy(numpy_backend):
    pass


def _f(x):
    return float(np.asarray(x))


# -- losses ---------------------------------------------------------------------------------

def test_mean_squared_error_reductions():
    per_sample = ((YT - YP) ** 2).mean(-1)
    np.testing.assert_allclose(losses.mse(YT, YP).numpy(), per_sample, rtol=1e-6)
    np.testing.assert_allclose(_f(losses.MeanSquaredError()(YT, YP)), per_sample.mean(), rtol=1e-6)
    np.testing.assert_allclose(_f(losses.MeanSquaredError(reduction="sum")(YT, YP)), per_sample.sum(),
                               rtol=1e-6)
    np.testing.assert_allclose(losses.MeanSquaredError(reduction=None)(YT, YP).numpy(), per_sample, rtol=1e-6)
    # sum_over_batch_size divides the weighted sum by the batch size, not by the weights' sum
    weighted = losses.MeanSquaredError()(YT, YP, sample_weight=np.array([1., 3.]))
    np.testing.assert_allclose(_f(weighted), (per_sample * [1, 3]).sum() / 2, rtol=1e-6)
    # TF 2.21
    assert _f(losses.MeanSquaredError()(YT, YP)) == pytest.approx(0.3449999988079071, rel=1e-6)
    assert _f(weighted) == pytest.approx(0.9700000286102295, rel=1e-6)
    assert losses.MeanSquaredError().name == "mean_squared_error"


def test_mean_absolute_error():
    np.testing.assert_allclose(_f(losses.MeanAbsoluteError()(YT, YP)), np.abs(YT - YP).mean(), rtol=1e-6)


def test_binary_crossentropy_clips_probabilities():
    p = np.clip(BP, EPS, 1 - EPS)
    per_sample = -(BT * np.log(p) + (1 - BT) * np.log(1 - p)).mean(-1)
    np.testing.assert_allclose(losses.binary_crossentropy(BT, BP).numpy(), per_sample, rtol=1e-5)
    np.testing.assert_allclose(_f(losses.BinaryCrossentropy()(BT, BP)), per_sample.mean(), rtol=1e-5)
    assert _f(losses.BinaryCrossentropy()(BT, BP)) == pytest.approx(0.08212608098983765, rel=1e-6)  # TF 2.21


def test_binary_crossentropy_from_logits():
    z = BL.astype(np.float64)
    per_sample = (np.maximum(z, 0) - z * BT + np.log1p(np.exp(-np.abs(z)))).mean(-1)
    got = _f(losses.BinaryCrossentropy(from_logits=True)(BT, BL))
    np.testing.assert_allclose(got, per_sample.mean(), rtol=1e-6)
    assert got == pytest.approx(0.22856667637825012, rel=1e-6)  # TF 2.21


def test_sparse_categorical_crossentropy_renormalizes_clipped_probabilities():
    logp = np.log(np.clip(SP, EPS, 1 - EPS).astype(np.float64))
    per_sample = -(logp[np.arange(3), ST] - np.log(np.exp(logp).sum(-1)))
    np.testing.assert_allclose(losses.sparse_categorical_crossentropy(ST, SP).numpy(), per_sample, rtol=1e-5)
    got = _f(losses.SparseCategoricalCrossentropy()(ST, SP))
    assert got == pytest.approx(0.9035177826881409, rel=1e-6)  # TF 2.21
    # a (batch, 1) label column gives the same
    assert _f(losses.SparseCategoricalCrossentropy()(ST[:, None], SP)) == pytest.approx(got, rel=1e-7)


def test_sparse_categorical_crossentropy_from_logits():
    z = SL.astype(np.float64)
    logsm = z - np.log(np.exp(z).sum(-1, keepdims=True))
    expected = -logsm[np.arange(3), ST].mean()
    got = _f(losses.SparseCategoricalCrossentropy(from_logits=True)(ST, SL))
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert got == pytest.approx(0.5429549813270569, rel=1e-6)  # TF 2.21


def test_categorical_crossentropy():
    onehot = np.eye(3, dtype="float32")[ST]
    p = np.clip(SP / SP.sum(-1, keepdims=True), EPS, 1 - EPS)
    np.testing.assert_allclose(losses.categorical_crossentropy(onehot, SP).numpy(),
                               -(onehot * np.log(p)).sum(-1), rtol=1e-5)
    np.testing.assert_allclose(_f(losses.CategoricalCrossentropy(from_logits=True)(onehot, SL)),
                               _f(losses.SparseCategoricalCrossentropy(from_logits=True)(ST, SL)), rtol=1e-6)


def test_losses_by_name():
    assert losses.get("mse") is losses.mean_squared_error
    assert losses.get("sparse_categorical_crossentropy") is losses.sparse_categorical_crossentropy
    assert isinstance(losses.get("BinaryCrossentropy"), losses.BinaryCrossentropy)
    with pytest.raises(ValueError, match="Could not interpret loss identifier"):
        losses.get("nope")
    with pytest.raises(ValueError, match="Invalid value for argument `reduction`"):
        losses.MeanSquaredError(reduction="avg")


def test_loss_is_differentiable():
    w = tf.Variable(YP)
    with tf.GradientTape() as tape:
        loss = losses.MeanSquaredError()(YT, w)
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), 2 * (YP - YT) / YT.size, rtol=1e-6)


# -- metrics --------------------------------------------------------------------------------

def test_mean_counts_samples_not_elements():
    m = metrics.Mean()
    assert _f(m.result()) == 0.0
    m.update_state([1, 3, 5, 7])
    assert _f(m.result()) == 4.0
    m.update_state([[1., 2.], [3., 4.]])  # two samples with means 1.5 and 3.5
    assert _f(m.result()) == pytest.approx(21 / 6) and _f(m.count) == 6.0  # TF 2.21: 3.5, count 6
    m.reset_state()
    assert _f(m.result()) == 0.0 and _f(m.total) == 0.0
    m.update_state([1., 3., 5., 7.], sample_weight=[1, 1, 0, 0])
    assert _f(m.result()) == 2.0
    assert _f(metrics.Mean()([2., 4.])) == 3.0  # calling updates and returns the result


def test_sparse_categorical_accuracy():
    a = metrics.SparseCategoricalAccuracy()
    assert a.name == "sparse_categorical_accuracy"
    a.update_state(ST, SP)
    assert _f(a.result()) == pytest.approx(2 / 3)  # argmaxes 1, 1, 0 against 1, 2, 0
    a.update_state(np.array([[0], [1]]), SL[:2])  # argmaxes 1, 2: both wrong
    assert _f(a.result()) == pytest.approx(0.4000000059604645)  # TF 2.21
    a.reset_state()
    assert _f(a.result()) == 0.0


def test_binary_accuracy_threshold_is_strict():
    b = metrics.BinaryAccuracy()
    b.update_state(BT, np.array([[0.6], [0.5], [0.4], [0.1]]))  # 0.5 is not > 0.5: predicted 0
    assert _f(b.result()) == 0.75 and b.name == "binary_accuracy"  # TF 2.21: 0.75
    b2 = metrics.BinaryAccuracy(threshold=0.65)  # predicts 0, 0, 0, 0
    b2.update_state(BT, np.array([[0.6], [0.5], [0.4], [0.1]]))
    assert _f(b2.result()) == 0.5


def test_categorical_accuracy_and_accuracy():
    c = metrics.CategoricalAccuracy()
    c.update_state(np.eye(3)[ST], SP)
    assert _f(c.result()) == pytest.approx(2 / 3)
    acc = metrics.Accuracy()
    acc.update_state([1, 2, 3, 4], [1, 2, 0, 4])
    assert _f(acc.result()) == 0.75


def test_mean_metric_wrapper_of_a_loss_function():
    m = metrics.MeanMetricWrapper(losses.mean_absolute_error, name="mae")
    m.update_state(YT, YP)
    np.testing.assert_allclose(_f(m.result()), np.abs(YT - YP).mean(), rtol=1e-6)
    assert m.name == "mae"


def test_metric_updates_inside_function():
    m = metrics.Mean()

    @tf.function
    def step(x):
        m.update_state(x)
        return m.result()

    step(tf.constant([1., 2.]))
    out = step(tf.constant([6., 7.]))
    assert _f(out) == 4.0 and _f(m.count) == 4.0
