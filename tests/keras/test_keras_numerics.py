"""Keras 3 losses, metrics and optimizers against TF 2.21's values on fixed inputs
(tests/keras/keras_cases.py holds the inputs, keras_facts.py TF's answers)."""
import os
import sys

import numpy as np
import pytest

import tapeflow as tf

sys.path.insert(0, os.path.dirname(__file__))
from keras_cases import INPUTS, IOU_WEIGHT, SAMPLE_WEIGHT  # noqa: E402
from keras_facts import LOSS_FACTS, METRIC_FACTS  # noqa: E402


def _close(got, want, rtol=1e-5):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("name,kwargs,key,value,weighted", LOSS_FACTS,
                         ids=[f"{f[0]}-{i}" for i, f in enumerate(LOSS_FACTS)])
def test_loss_matches_tf(name, kwargs, key, value, weighted):
    y, p = INPUTS[key]
    loss = getattr(tf.keras.losses, name)(**kwargs)
    _close(loss(y, p), value)
    if isinstance(weighted, str):
        with pytest.raises(Exception):
            loss(y, p, sample_weight=SAMPLE_WEIGHT)
    else:
        _close(loss(y, p, sample_weight=SAMPLE_WEIGHT), weighted)
    clone = type(loss).from_config(loss.get_config())
    assert clone.get_config() == loss.get_config()


def test_losses_compiled_equal_eager():
    cases = [f for f in LOSS_FACTS if not isinstance(f[4], str)]

    @tf.function
    def all_losses():
        return [getattr(tf.keras.losses, n)(**kw)(*INPUTS[k], sample_weight=SAMPLE_WEIGHT)
                for n, kw, k, _, _ in cases]
    for got, case in zip(all_losses(), cases):
        _close(got, case[4])


def test_loss_identifiers():
    get = tf.keras.losses.get
    assert get("huber") is tf.keras.losses.huber
    assert get("KLD") is tf.keras.losses.kl_divergence
    assert isinstance(get("Huber"), tf.keras.losses.Huber)
    restored = get({"class_name": "Huber", "config": {"delta": 2.0}})
    assert restored.delta == 2.0 and restored.name == "huber_loss"
    assert tf.keras.losses.serialize(tf.keras.losses.mape) == "mean_absolute_percentage_error"
    assert tf.keras.losses.deserialize("msle") is tf.keras.losses.mean_squared_logarithmic_error


def _metric_case(name, kwargs, key, weighted):
    y, p = INPUTS[key]
    w = (IOU_WEIGHT if key == "iou" else SAMPLE_WEIGHT) if weighted else None
    return getattr(tf.keras.metrics, name)(**kwargs), y, p, w


@pytest.mark.parametrize("name,kwargs,key,weighted,first,second", METRIC_FACTS,
                         ids=[f"{f[0]}-{i}" for i, f in enumerate(METRIC_FACTS)])
def test_metric_matches_tf(name, kwargs, key, weighted, first, second):
    metric, y, p, w = _metric_case(name, kwargs, key, weighted)
    metric.update_state(y, p, sample_weight=w)
    _close(metric.result(), first)
    metric.update_state(y[::-1], p, sample_weight=w)
    _close(metric.result(), second)
    metric.reset_state()
    metric.update_state(y, p, sample_weight=w)
    _close(metric.result(), first)
    clone = type(metric).from_config(metric.get_config())
    assert clone.get_config() == metric.get_config()


def test_metrics_compiled_equal_eager():
    made = [_metric_case(*f[:4]) for f in METRIC_FACTS]

    @tf.function
    def update_all():
        for metric, y, p, w in made:
            metric.update_state(y, p, sample_weight=w)
        return [metric.result() for metric, _, _, _ in made]
    for got, fact in zip(update_all(), METRIC_FACTS):
        _close(got, fact[4])


def test_metric_identifiers():
    get = tf.keras.metrics.get
    assert isinstance(get("auc"), tf.keras.metrics.AUC)
    assert isinstance(get("mape"), tf.keras.metrics.MeanAbsolutePercentageError)
    assert isinstance(get("f1_score"), tf.keras.metrics.F1Score)
    config = tf.keras.metrics.serialize(tf.keras.metrics.Precision(thresholds=[0.3, 0.6]))
    assert tf.keras.metrics.deserialize(config).thresholds == [0.3, 0.6]
