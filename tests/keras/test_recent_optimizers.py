"""Muon, ScheduleFreeAdamW, LossScaleOptimizer, MultiOptimizer/OptimizerMap and
``gradient_accumulation_steps``: step trajectories and compiled ``fit`` against Keras 3.15's
numbers (recent_optimizer_facts.py), configs, and the wrappers' rules."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import backend
from tests.keras import recent_optimizer_facts as F

# semantics, not codegen: traced functions run on the NumPy interpreter (no compile time)
pytestmark = pytest.mark.usefixtures("numpy_backend")

O = tf.keras.optimizers
f32 = np.float32


@pytest.fixture(autouse=True)
def fresh_names():
    backend.clear_session()


STEP_CASES = [   # (fact prefix, optimizer factory, steps)
    ("MUON", lambda: O.Muon(learning_rate=0.01), 3),
    ("MUON2", lambda: O.Muon(learning_rate=0.02, nesterov=False, rms_rate=None, exclude_embeddings=False,
                             exclude_layers=["tall"], weight_decay=0.1, adam_weight_decay=None), 3),
    ("SF", lambda: O.ScheduleFreeAdamW(), 3),
    ("SF2", lambda: O.ScheduleFreeAdamW(learning_rate=0.01, warmup_steps=2, weight_decay=0.05), 3),
    ("ACC_ADAM", lambda: O.Adam(0.1, gradient_accumulation_steps=2), 4),
    ("ACC_SGD", lambda: O.SGD(0.1, momentum=0.9, gradient_accumulation_steps=3, weight_decay=0.1), 4),
]
ITERATIONS = {"MUON": 3, "MUON2": 3, "SF": 3, "SF2": 3, "ACC_ADAM": 2, "ACC_SGD": 1}


def _variables():
    return [tf.Variable(np.array(getattr(F, k), f32), name=n)
            for k, n in (("W0", "kernel"), ("B0", "bias"), ("E0", "embedding"), ("T0", "tall"))]


def _grads(step):
    return [tf.constant(np.array(getattr(F, k)[step], f32)) for k in ("GW", "GB", "GE", "GT")]


@pytest.mark.parametrize("prefix,make,steps", STEP_CASES, ids=[c[0] for c in STEP_CASES])
def test_steps_match_keras(prefix, make, steps):
    opt, variables = make(), _variables()
    for step in range(steps):
        opt.apply_gradients(zip(_grads(step), variables))
        for v, suffix in zip(variables, "WBET"):
            expected = np.array(getattr(F, f"{prefix}_{suffix}")[step], f32)
            np.testing.assert_allclose(v.numpy(), expected, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{prefix} step {step} {v.name}")
    assert int(opt.iterations) == ITERATIONS[prefix]


def test_steps_in_one_compiled_function_match_eager(numpy_backend):
    """The accumulation's tf.cond and Muon's iteration traced into one program: same numbers."""
    opts = [make() for _, make, _ in STEP_CASES]
    var_sets = [_variables() for _ in opts]

    @tf.function
    def step(gw, gb, ge, gt):
        for opt, variables in zip(opts, var_sets):
            opt.apply_gradients(zip([gw, gb, ge, gt], variables))

    for s in range(3):
        step(*_grads(s))
    for (prefix, _, _), variables in zip(STEP_CASES, var_sets):
        for v, suffix in zip(variables, "WBET"):
            np.testing.assert_allclose(v.numpy(), np.array(getattr(F, f"{prefix}_{suffix}")[2], f32),
                                       rtol=1e-5, atol=1e-6, err_msg=f"{prefix} {v.name}")


def test_muon_slots_follow_the_adamw_rule():
    opt, variables = O.Muon(), _variables()
    opt.build(variables)
    names = [v.name for v in opt.variables]       # built directly: no optimizer name scope
    assert "velocity/bias:0" in names and "velocity/embedding:0" in names
    assert "velocity/kernel:0" not in names and "velocity/tall:0" not in names
    assert sum(n.startswith("momentum/") for n in names) == 4
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        opt.zeropower_via_newtonschulz5(tf.constant([1.0, 2.0]), 5)


def test_schedule_free_momentum_starts_at_the_variable():
    v = tf.Variable([1.0, 2.0], name="w")
    opt = O.ScheduleFreeAdamW()
    opt.build([v])
    momentum = [x for x in opt.variables if "momentum" in x.name][0]
    np.testing.assert_array_equal(momentum.numpy(), [1.0, 2.0])


# Keras 3.15: LossScaleOptimizer(SGD(0.1), initial_scale=8, dynamic_growth_steps=2) on w=[1, 2]
LSO_STEPS = [  # (gradient, w after, dynamic_scale, step_counter, iterations)
    ([8.0, 16.0], [0.8999999761581421, 1.7999999523162842], 8.0, 1, 1),
    ([np.inf, 1.0], [0.8999999761581421, 1.7999999523162842], 4.0, 0, 1),
    ([4.0, 4.0], [0.7999999523162842, 1.6999999284744263], 4.0, 1, 2),
    ([2.0, 2.0], [0.7499999403953552, 1.649999976158142], 8.0, 0, 3),
    ([np.nan, 0.0], [0.7499999403953552, 1.649999976158142], 4.0, 0, 3),
    ([1.0, 1.0], [0.7249999642372131, 1.625], 4.0, 1, 4),
]


@pytest.mark.parametrize("compiled", [False, True])
def test_loss_scale_optimizer_steps(compiled, numpy_backend):
    w = tf.Variable(np.array([1.0, 2.0], f32), name="w")
    opt = O.LossScaleOptimizer(O.SGD(0.1), initial_scale=8.0, dynamic_growth_steps=2)
    assert float(opt.scale_loss(tf.constant(3.0))) == 24.0        # Keras: initial scale before build

    def step(g):
        opt.apply([g], [w])
    step = tf.function(step) if compiled else step
    for g, after, scale, counter, iterations in LSO_STEPS:
        step(tf.constant(np.array(g, f32)))
        np.testing.assert_array_equal(w.numpy(), np.array(after, f32))
        assert (float(opt.dynamic_scale.numpy()), int(opt.step_counter.numpy()), int(opt.iterations)) == \
            (scale, counter, iterations)
    assert float(opt.scale_loss(tf.constant(3.0))) == 12.0
    assert opt.step_counter.dtype == tf.int64
    assert [v.name for v in opt.variables][-4:-2] == ["step_counter:0", "dynamic_scale:0"]


def test_loss_scale_optimizer_config_and_arguments():
    opt = O.LossScaleOptimizer(O.SGD(0.1), initial_scale=8.0, dynamic_growth_steps=2)
    config = opt.get_config()
    assert set(config) == {"name", "inner_optimizer", "initial_scale", "dynamic_growth_steps"}
    assert config["name"] == "loss_scale_optimizer" and config["inner_optimizer"]["class_name"] == "SGD"
    again = O.deserialize(O.serialize(opt))
    assert type(again.inner_optimizer).__name__ == "SGD" and again.initial_scale == 8.0
    assert again.dynamic_growth_steps == 2
    assert abs(float(again.learning_rate) - 0.1) < 1e-7
    with pytest.raises(ValueError, match="dynamic=False"):
        O.LossScaleOptimizer(O.SGD(), dynamic=False)
    with pytest.raises(ValueError, match="does not support `clipnorm`"):
        O.LossScaleOptimizer(O.SGD(), clipnorm=1.0)
    O.LossScaleOptimizer(O.SGD(), clipnorm=None)       # the defaults old configs carry are accepted
    inner = O.SGD(loss_scale_factor=4.0)
    O.LossScaleOptimizer(inner)
    assert inner.loss_scale_factor is None             # Keras: else gradients are unscaled twice


def test_optimizer_map_lookup_and_rules():
    adam, sgd, rms = O.Adam(), O.SGD(), O.RMSprop()
    m = O.OptimizerMap(default_optimizer=rms)
    m["encoder/layer_0/dense"] = adam
    m["encoder/.*"] = sgd
    m["decoder"] = adam
    assert m["decoder"] is adam and m["encoder/layer_0/dense"] is adam
    assert m["encoder/layer_0/attention/query"] is sgd and m["decoder/layer_0/dense"] is rms
    with pytest.raises(ValueError, match="already exists"):
        m["decoder"] = sgd
    with pytest.raises(ValueError, match="cannot be LossScaleOptimizer"):
        m["x"] = O.LossScaleOptimizer(O.SGD())
    m2 = O.OptimizerMap(rms, {"a.*": adam, "ab.*": sgd})
    with pytest.raises(ValueError, match="Multiple optimizers"):
        m2["abc"]
    with pytest.raises(TypeError, match="default_optimizer"):
        O.OptimizerMap("sgd")


def test_multi_optimizer_dispatches_and_counts():
    a = tf.Variable(np.array([1.0, -1.0], f32), name="a1")
    b = tf.Variable(np.array([0.5], f32), name="b1")
    opt = O.MultiOptimizer(O.OptimizerMap(O.SGD(0.1), {"a.*": O.Adam(0.1)}))
    for _ in range(2):
        opt.apply([tf.constant(np.array([0.3, -0.2], f32)), tf.constant(np.array([1.0], f32))], [a, b])
    # Keras 3.15's values
    np.testing.assert_array_equal(a.numpy(), np.array([0.8000034689903259, -0.8000043630599976], f32))
    np.testing.assert_array_equal(b.numpy(), np.array([0.30000001192092896], f32))
    assert int(opt.iterations) == 2 and [int(o.iterations) for o in opt.optimizers] == [2, 2]
    assert [type(o).__name__ for o in opt.optimizers] == ["Adam", "SGD"]
    with pytest.raises(AttributeError, match="Learning rate cannot be accessed"):
        opt.learning_rate
    again = O.deserialize(O.serialize(opt))
    assert [type(o).__name__ for o in again.optimizers] == ["Adam", "SGD"]
    assert again.get_config()["optimizer_map"]["class_name"] == "OptimizerMap"


def test_multi_optimizer_with_a_function_and_loss_scale_factor():
    a, b = tf.Variable(1.0, name="enc"), tf.Variable(1.0, name="dec")
    sgd_a, sgd_b = O.SGD(0.5), O.SGD(0.25)

    def pick(variable):
        return sgd_a if "enc" in variable.name else sgd_b

    opt = O.MultiOptimizer(pick, loss_scale_factor=2.0)
    opt.apply_gradients([(tf.constant(4.0), a), (tf.constant(4.0), b)])
    assert (float(a.numpy()), float(b.numpy())) == (0.0, 0.5)      # 4 / 2 times each rate
    assert sgd_a.loss_scale_factor == 2.0 and float(opt.scale_loss(tf.constant(3.0))) == 6.0
    again = O.MultiOptimizer.from_config(opt.get_config(), custom_objects={"pick": pick})
    assert again._optimizer_map is pick


def test_gradient_accumulation_arguments():
    with pytest.raises(ValueError, match="must be an integer >= 2"):
        O.SGD(gradient_accumulation_steps=1)
    opt = O.SGD(0.1, gradient_accumulation_steps=2)
    v = tf.Variable(1.0, name="v")
    opt.apply_gradients([(tf.constant(1.0), v)])
    assert float(v.numpy()) == 1.0 and int(opt.iterations) == 0
    opt.apply_gradients([(tf.constant(3.0), v)])
    assert abs(float(v.numpy()) - 0.8) < 1e-7 and int(opt.iterations) == 1   # mean gradient 2


def test_configs_round_trip():
    muon = O.Muon(learning_rate=0.02, exclude_layers=["out"], rms_rate=None)
    config = muon.get_config()
    for key, value in {"adam_beta_1": 0.9, "adam_beta_2": 0.999, "epsilon": 1e-07, "exclude_layers": ["out"],
                       "muon_a": 3.4445, "muon_b": -4.775, "muon_c": 2.0315, "adam_lr_ratio": 1,
                       "momentum": 0.95, "ns_steps": 5, "nesterov": True, "exclude_embeddings": True,
                       "adam_weight_decay": 0.004, "rms_rate": None, "weight_decay": 0.004,
                       "name": "muon"}.items():
        assert config[key] == value, key
    assert O.deserialize(O.serialize(muon)).get_config() == config
    sf = O.ScheduleFreeAdamW(warmup_steps=3)
    config = sf.get_config()
    assert (config["name"], config["beta_1"], config["beta_2"], config["epsilon"], config["warmup_steps"]) == \
        ("schedule_free_adam_w", 0.9, 0.999, 1e-08, 3)
    assert O.deserialize(O.serialize(sf)).get_config() == config
    assert type(O.get("muon")).__name__ == "Muon"
    assert type(O.get("schedulefreeadamw")).__name__ == "ScheduleFreeAdamW"


def _fit_model():
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="tanh", name="hidden"),
                                 tf.keras.layers.Dense(1, name="out")])
    model.set_weights([np.array(F.FIT_K1, f32), np.zeros(3, f32), np.array(F.FIT_K2, f32),
                       np.array([0.1], f32)])
    return model


FIT_CASES = {
    "muon": lambda: O.Muon(learning_rate=0.05),
    "sfadamw": lambda: O.ScheduleFreeAdamW(learning_rate=0.05, warmup_steps=2),
    "lso": lambda: O.LossScaleOptimizer(O.SGD(0.1), initial_scale=1024.0, dynamic_growth_steps=3),
    "multi": lambda: O.MultiOptimizer(O.OptimizerMap(O.SGD(0.1), {"(.*/)?hidden/.*": O.Adam(0.05)})),
    "accum": lambda: O.Adam(0.05, gradient_accumulation_steps=2),
    "lsf": lambda: O.SGD(0.1, loss_scale_factor=64.0),
}


@pytest.mark.parametrize("case", list(FIT_CASES))
def test_compiled_fit_matches_keras(case, numpy_backend):
    model, opt = _fit_model(), FIT_CASES[case]()
    model.compile(optimizer=opt, loss="mse")
    history = model.fit(np.array(F.FIT_X, f32), np.array(F.FIT_Y, f32), batch_size=4, epochs=2,
                        shuffle=False, verbose=0)
    fact = F.FIT[case]
    np.testing.assert_allclose(history.history["loss"], fact["loss"], rtol=1e-5)
    for w, expected in zip(model.get_weights(), fact["weights"]):
        np.testing.assert_allclose(w, np.array(expected, f32), rtol=1e-5, atol=1e-6)
    assert int(opt.iterations) == fact["iterations"]
    if case == "lso":
        assert float(opt.dynamic_scale.numpy()) == fact["extra"]["scale"]
        assert int(opt.step_counter.numpy()) == fact["extra"]["counter"]


SAVED = {   # the wrappers by default; every new optimizer under -m slow
    "lso": lambda: O.LossScaleOptimizer(O.Adam(0.01), initial_scale=64.0),
    "multi": lambda: O.MultiOptimizer(O.OptimizerMap(O.SGD(0.1, momentum=0.9), {"(.*/)?hidden/.*": O.Adam(0.05)})),
    "muon": pytest.param(lambda: O.Muon(0.01), marks=pytest.mark.slow),
    "sfadamw": pytest.param(lambda: O.ScheduleFreeAdamW(0.01), marks=pytest.mark.slow),
    "accum": pytest.param(lambda: O.Adam(0.01, gradient_accumulation_steps=2), marks=pytest.mark.slow),
}


@pytest.mark.parametrize("make", list(SAVED.values()), ids=list(SAVED))
def test_keras_file_keeps_the_slots_and_training_resumes_the_same(make, tmp_path):
    x, y = np.array(F.FIT_X, f32), np.array(F.FIT_Y, f32)
    for k, opt in enumerate([make()]):
        model = _fit_model()
        model.compile(optimizer=opt, loss="mse")
        model.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
        model.save(tmp_path / f"m{k}.keras")
        loaded = tf.keras.models.load_model(tmp_path / f"m{k}.keras")
        assert type(loaded.optimizer) is type(opt)
        saved = [v.numpy() for v in model.optimizer.variables]
        assert len(saved) == len(loaded.optimizer.variables) > 2
        for a, b in zip(saved, loaded.optimizer.variables):
            np.testing.assert_array_equal(a, b.numpy())
        for m in (model, loaded):
            m.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
        for a, b in zip(model.get_weights(), loaded.get_weights()):
            np.testing.assert_allclose(a, b, rtol=1e-6)
