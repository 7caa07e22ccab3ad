"""Keras 3 losses, metrics and optimizers against TF 2.21's values on fixed inputs
(tests/keras/keras_cases.py holds the inputs, keras_facts.py TF's answers)."""
import os
import sys

import numpy as np
import pytest

import tapeflow as tf

sys.path.insert(0, os.path.dirname(__file__))
from keras_cases import INPUTS, IOU_WEIGHT, SAMPLE_WEIGHT  # noqa: E402
from keras_facts import LOSS_FACTS, METRIC_FACTS, OPTIMIZER_FACTS, SCHEDULE_FACTS  # noqa: E402
from optimizer_cases import B0, GRADS, SCHEDULE_STEPS, W0  # noqa: E402


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


def _run_optimizer(name, kwargs, compiled):
    opt = getattr(tf.keras.optimizers, name)(**kwargs)
    w, b = tf.Variable(W0.copy(), name="w"), tf.Variable(B0.copy(), name="b")

    def step(gw, gb):
        opt.apply_gradients([(gw, w), (gb, b)])
    run = tf.function(step) if compiled else step
    for gw, gb in GRADS:
        run(tf.constant(gw), tf.constant(gb))
    return opt, w, b


@pytest.mark.parametrize("name,kwargs,w_after,b_after,keras_name,slots", OPTIMIZER_FACTS,
                         ids=[f"{f[0]}-{i}" for i, f in enumerate(OPTIMIZER_FACTS)])
def test_optimizer_three_steps_match_tf(name, kwargs, w_after, b_after, keras_name, slots):
    opt, w, b = _run_optimizer(name, kwargs, compiled=False)
    _close(w.numpy(), w_after)
    _close(b.numpy(), b_after)
    assert int(opt.iterations.numpy()) == 3
    clone = type(opt).from_config(opt.get_config())
    assert clone.get_config() == opt.get_config()


def test_optimizers_compiled_equal_eager():
    for name, kwargs, w_after, b_after, _, _ in OPTIMIZER_FACTS[:6]:
        _, w, b = _run_optimizer(name, kwargs, compiled=True)
        _close(w.numpy(), w_after)
        _close(b.numpy(), b_after)


@pytest.mark.parametrize("name,kwargs,rates", SCHEDULE_FACTS, ids=[f"{f[0]}-{i}" for i, f in enumerate(SCHEDULE_FACTS)])
def test_schedule_matches_tf(name, kwargs, rates):
    schedule = getattr(tf.keras.optimizers.schedules, name)(**kwargs)
    _close([float(schedule(k)) for k in SCHEDULE_STEPS], rates)
    config = tf.keras.optimizers.schedules.serialize(schedule)
    assert tf.keras.optimizers.schedules.deserialize(config).get_config() == schedule.get_config()


def test_schedule_runs_inside_one_compiled_step():
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, 3, 0.5)
    opt = tf.keras.optimizers.SGD(learning_rate=schedule)
    v = tf.Variable(1.0)
    opt.build([v])
    traces = []

    @tf.function
    def step():
        traces.append(1)
        opt.apply_gradients([(tf.constant(1.0), v)])
    for _ in range(4):
        step()
    expected = 1.0 - sum(float(schedule(k)) for k in range(4))
    _close(v.numpy(), expected)
    assert len(traces) == 1
    with pytest.raises(TypeError):
        opt.learning_rate = 0.5


# TF 2.21's keras.losses.Circle(**kwargs)(labels, emb) and with sample weights w
CIRCLE_FACTS = [({}, 17.414031982421875, 14.568168640136719),
                ({"gamma": 10.0, "margin": 0.25}, 4.152234077453613, 3.98441481590271),
                ({"remove_diagonal": False}, 17.95734214782715, 16.050596237182617),
                ({"reduction": "sum"}, 69.6561279296875, 58.272682189941406)]
CIRCLE_PER_SAMPLE = [43.65766143798828, 22.76888656616211, 0.000989250373095274, 0.0, 3.2285943031311035, 0.0]


def test_circle_loss_matches_tf():
    rng = np.random.RandomState(0)
    emb = rng.randn(6, 4).astype("float32")
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    labels = np.array([0, 1, 0, 2, 1, 3], np.int32)
    w = np.array([1.0, 0.5, 2.0, 1.0, 1.0, 3.0], np.float32)
    for kwargs, value, weighted in CIRCLE_FACTS:
        loss = tf.keras.losses.Circle(**kwargs)
        _close(loss(labels, emb), value)
        _close(loss(labels, emb, sample_weight=w), weighted)
    _close(tf.keras.losses.circle(labels, emb), CIRCLE_PER_SAMPLE)
