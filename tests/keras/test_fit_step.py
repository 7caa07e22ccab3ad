"""``fit``'s own cost and its one program (issues 26.6 and 31).

- A ``fit`` with AdamW, an ExponentialDecay schedule, AUC and an L2 regularizer traces its
  train step once over several epochs (the schedule's value changes every step inside the
  program; nothing retraces), and its History and weights are Keras 3's.
- Each step runs with denormals flushed to zero, as TensorFlow's kernels do
  (runtime/denormals.py), and only for the step.
- Batch hooks nobody overrides are not called (``CallbackList.wants``); one that is
  overridden, on the class or on the instance, is called every step with Python floats.

Constants marked "TF 2.21" were printed by TensorFlow 2.21.0 (Keras 3.15.1) running the same
program with ``import tensorflow as tf``.
"""
import logging

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import backend
from tapeflow.keras.callbacks import Callback, CallbackList, History, ProgbarLogger
from tapeflow.runtime.denormals import flush_denormals, flushing

K = tf.keras


@pytest.fixture(autouse=True)
def _setup():
    backend.clear_session()


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.events = []

    def emit(self, record):
        info = getattr(record, "tapeflow", None)
        if info is not None:
            self.events.append((info["event"], info["function"]))


def _issue31_model():
    rng = np.random.default_rng(0)
    x = rng.random((96, 8), dtype=np.float32)
    y = (rng.random(96) > 0.5).astype(np.float32)
    model = K.Sequential([K.Input((8,)),
                          K.layers.Dense(16, activation="relu",
                                         kernel_regularizer=K.regularizers.L2(0.01)),
                          K.layers.Dense(1, activation="sigmoid")])
    model.set_weights([np.sin(np.arange(np.prod(v.shape), dtype=np.float64) * 0.37 + k)
                       .reshape(v.shape).astype(np.float32) * 0.5
                       for k, v in enumerate(model.get_weights())])
    schedule = K.optimizers.schedules.ExponentialDecay(0.05, decay_steps=2, decay_rate=0.8)
    model.compile(optimizer=K.optimizers.AdamW(schedule, weight_decay=0.04),
                  loss="binary_crossentropy", metrics=[K.metrics.AUC()])
    return model, x, y


# TF 2.21: History and the first entries of each weight after 3 epochs of 3 steps
TF_HISTORY = {"auc": [0.4725595712661743, 0.4527665376663208, 0.45996397733688354],
              "loss": [1.2613201141357422, 0.794947624206543, 0.7762207388877869]}
TF_WEIGHTS = [[0.0024265432730317116, 0.22325481474399567, 0.43318015336990356,
               0.30346131324768066, 0.2612599730491638, 0.26460981369018555],
              [0.4182060956954956, 0.627629280090332, 0.6729726195335388, 0.6026595830917358,
               0.10524251312017441, -0.06213979423046112],
              [0.4802505075931549, 0.42982953786849976, 0.33246368169784546,
               0.18890555202960968, 0.03179769217967987, -0.12072675675153732],
              [0.28110453486442566]]


def _fit_issue31():
    model, x, y = _issue31_model()
    records = _Records()
    logger = logging.getLogger("tapeflow")
    old_level = logger.level
    logger.addHandler(records)
    logger.setLevel(logging.INFO)
    try:
        history = model.fit(x, y, batch_size=32, epochs=3, verbose=0, shuffle=False)
    finally:
        logger.removeHandler(records)
        logger.setLevel(old_level)
    return model, history, records.events


def _check_keras_values(model, history):
    assert sorted(history.history) == sorted(TF_HISTORY)
    for k, want in TF_HISTORY.items():
        np.testing.assert_allclose(history.history[k], want, rtol=1e-5)
    for w, want in zip(model.get_weights(), TF_WEIGHTS, strict=True):
        np.testing.assert_allclose(w.ravel()[:6], want, rtol=1e-5, atol=1e-7)
    assert int(model.optimizer.iterations.numpy()) == 9


def test_adamw_schedule_auc_l2_fit_traces_its_step_once_and_matches_keras(numpy_backend):
    model, history, events = _fit_issue31()
    assert events.count(("trace", "train_step")) == 1, events
    assert model.train_function.experimental_get_tracing_count() == 1
    _check_keras_values(model, history)


@pytest.mark.slow
def test_adamw_schedule_auc_l2_fit_compiles_once_compiled():
    from tapeflow.tracer import engine
    old = engine.get_backend()
    tf.set_backend("numba")
    try:
        model, history, events = _fit_issue31()
    finally:
        tf.set_backend(old)
    steps = [e for e in events if e[1] == "train_step"]
    assert steps.count(("trace", "train_step")) == 1, events
    assert steps.count(("compile", "train_step")) <= 1, events
    _check_keras_values(model, history)


# -- denormals ------------------------------------------------------------------------------

def test_flush_denormals_holds_for_the_block_only():
    tiny = np.full(3, 1e-39, np.float32)
    assert tiny[0] != 0 and not flushing()
    with flush_denormals():
        assert flushing()
        np.testing.assert_array_equal(tiny * np.float32(1.0), 0.0)        # FTZ
        assert np.float32(1e-30) * np.float32(1e-10) == 0.0
        assert tiny[0] + np.float32(0.0) == 0.0                           # DAZ
    assert not flushing()
    np.testing.assert_array_equal(tiny * np.float32(1.0), tiny)


def test_a_fit_step_flushes_denormals_and_leaves_the_thread_as_it_was(numpy_backend):
    steps, between = [], []

    class Model(K.Sequential):
        def train_step(self, data):
            steps.append(flushing())
            return super().train_step(data)

    class Probe(Callback):
        def on_train_batch_end(self, batch, logs=None):
            between.append(flushing())

    model = Model([K.Input((1,)), K.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mae", run_eagerly=True)
    model.fit(np.ones((4, 1), np.float32), np.zeros((4, 1), np.float32), batch_size=2,
              epochs=2, verbose=0, callbacks=[Probe()])
    assert steps == [True] * 4 and between == [False] * 4 and not flushing()


# -- callbacks per step ---------------------------------------------------------------------

def test_callback_list_wants_only_overridden_batch_hooks():
    plain = CallbackList([], add_history=True, model=None, verbose=0, epochs=1, steps=2)
    assert not plain.wants("on_train_batch_begin") and not plain.wants("on_train_batch_end")
    assert not plain.wants("on_test_batch_end")

    class OnBatch(Callback):
        def on_batch_end(self, batch, logs=None):
            pass
    via_alias = CallbackList([OnBatch()], model=None, verbose=0, epochs=1, steps=2)
    assert via_alias.wants("on_train_batch_end") and not via_alias.wants("on_train_batch_begin")
    assert not via_alias.wants("on_test_batch_end")
    lam = CallbackList([K.callbacks.LambdaCallback(on_train_batch_begin=lambda b, logs: None)],
                       model=None, verbose=0, epochs=1, steps=2)
    assert lam.wants("on_train_batch_begin") and not lam.wants("on_train_batch_end")
    bar = CallbackList([], add_progbar=True, model=None, verbose=1, epochs=1, steps=2)
    assert bar.wants("on_train_batch_end")
    assert isinstance(bar.callbacks[0], ProgbarLogger) and isinstance(plain.callbacks[0], History)


def test_fit_calls_an_overridden_batch_hook_every_step_with_floats(numpy_backend):
    model = K.Sequential([K.Input((2,)), K.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    seen = []
    # Keras 3's CallbackList passes a batch hook's logs as `logs=` (TF 2.21 raises TypeError
    # for a lambda naming it otherwise)
    stop = K.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs=None: seen.append((b, logs)))
    model.fit(np.ones((6, 2), np.float32), np.zeros((6, 1), np.float32), batch_size=2,
              epochs=1, verbose=0, callbacks=[stop])
    assert [b for b, _ in seen] == [0, 1, 2]
    assert all(sorted(lg) == ["loss", "mae"] and all(type(v) is float for v in lg.values())
               for _, lg in seen)


def test_predict_calls_its_batch_hooks_only_when_overridden(numpy_backend):
    model = K.Sequential([K.Input((2,)), K.layers.Dense(1)])
    seen = []

    class Probe(Callback):
        def on_predict_batch_end(self, batch, logs=None):
            seen.append((batch, sorted(logs)))

    out = model.predict(np.ones((5, 2), np.float32), batch_size=2, verbose=0, callbacks=[Probe()])
    assert out.shape == (5, 1) and seen == [(0, ["outputs"]), (1, ["outputs"]), (2, ["outputs"])]
    assert not CallbackList([Callback()], model=None, verbose=0, epochs=1,
                            steps=1).wants("on_predict_batch_end")
