"""Models with several inputs and outputs, and class_weight: History, evaluate and predict
against TensorFlow 2.21 (Keras 3.15.1).

Every constant marked "TF 2.21" was printed by TensorFlow 2.21.0 running the same program
(same initial weights: kernels of ones, zero biases; SGD(0.1), batch_size 3, no shuffle).
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import backend

K = tf.keras
X = np.linspace(-1, 1, 12).reshape(6, 2).astype("float32")
B = np.linspace(0, 1, 6).reshape(6, 1).astype("float32")
Y1 = X.sum(1, keepdims=True)
Y2 = X * 2


@pytest.fixture(autouse=True)
def _setup(request):
    backend.clear_session()
    if not request.node.name.endswith("_compiled"):
        request.getfixturevalue("numpy_backend")


def _model():
    a, b = K.Input((2,), name="a"), K.Input((1,), name="b")
    h = K.layers.Concatenate()([a, b])
    out1 = K.layers.Dense(1, name="out1", kernel_initializer="ones")(h)
    out2 = K.layers.Dense(2, name="out2", kernel_initializer="ones")(h)
    return K.Model([a, b], [out1, out2])


CASES = [  # compile arguments, then TF 2.21's History and evaluate()
    (dict(loss=["mse", "mae"], metrics=[["mae"], ["mse"]]),
     {"loss": [0.8537138, 0.5033545], "out1_loss": [0.3377413, 0.0857136],
      "out1_mae": [0.4809476, 0.2422247], "out2_loss": [0.5159725, 0.4176409],
      "out2_mse": [0.378096, 0.2595229]},
     [0.35265931487083435, 0.02382270060479641, 0.328836590051651, 0.12557518482208252,
      0.17592336237430573]),
    (dict(loss={"out1": "mse", "out2": "mae"}, metrics={"out1": "mae", "out2": ["mse", "mae"]},
          loss_weights={"out1": 2.0, "out2": 0.5}),
     {"loss": [0.8821554, 0.2435439], "out1_loss": [0.3102933, 0.0036577],
      "out1_mae": [0.4618954, 0.0554424], "out2_loss": [0.5231377, 0.4724568],
      "out2_mae": [0.5231377, 0.4724568], "out2_mse": [0.3887936, 0.3253514]},
     [0.21406657993793488, 0.0004257304535713047, 0.42643025517463684, 0.016932979226112366,
      0.42643025517463684, 0.27480387687683105]),
    (dict(loss="mse", metrics=["mae", "mse"]),
     {"loss": [0.7209661, 0.2990306], "out1_loss": [0.3377413, 0.0857136],
      "out1_mae": [0.4809476, 0.2422247], "out2_loss": [0.3832248, 0.213317],
      "out2_mse": [0.3832248, 0.213317]},
     [0.1477346420288086, 0.02382270060479641, 0.12391193956136703, 0.12557518482208252,
      0.12391193956136703]),
    (dict(loss=["mse", "mae"], loss_weights=[1.0, 3.0]),
     {"loss": [1.7996753, 0.8356724], "out1_loss": [0.3377413, 0.0857136],
      "out2_loss": [0.4873113, 0.2499862]},
     [0.264591246843338, 0.02382270060479641, 0.08025618642568588]),
]


def _fit_and_check(compile_args, history, evaluated):
    model = _model()
    model.compile(K.optimizers.SGD(0.1), **compile_args)
    h = model.fit([X, B], [Y1, Y2], batch_size=3, epochs=2, verbose=0, shuffle=False).history
    assert set(h) == set(history)
    for key, values in history.items():
        np.testing.assert_allclose(h[key], values, rtol=2e-6, atol=1e-7, err_msg=key)
    np.testing.assert_allclose(model.evaluate([X, B], [Y1, Y2], verbose=0), evaluated, rtol=2e-6, atol=1e-7)
    as_dict = model.evaluate([X, B], [Y1, Y2], verbose=0, return_dict=True)
    assert set(as_dict) == set(history)
    names = ["loss"] + (["compile_metrics"] if "metrics" in compile_args else []) + ["out1_loss", "out2_loss"]
    assert model.metrics_names == names                  # TF 2.21


@pytest.mark.parametrize("case", range(len(CASES)))
def test_losses_metrics_and_weights_per_output(case):
    _fit_and_check(*CASES[case])


def test_losses_metrics_and_weights_per_output_compiled():
    _fit_and_check(*CASES[1])


def test_predict_returns_a_list_and_data_may_be_dicts():
    model = _model()
    model.compile(K.optimizers.SGD(0.1), loss={"out1": "mse", "out2": "mse"})
    out = model.predict([X, B], verbose=0)
    assert isinstance(out, list) and [o.shape for o in out] == [(6, 1), (6, 2)]
    h = model.fit({"a": X, "b": B}, {"out1": Y1, "out2": Y2}, batch_size=3, verbose=0, shuffle=False)
    # TF 2.21 (its Y2 was this X * 2)
    np.testing.assert_allclose(h.history["loss"], [0.720966100692749], rtol=2e-6)
    np.testing.assert_allclose(h.history["out2_loss"], [0.38322484493255615], rtol=2e-6)


def test_multi_output_errors():
    model = _model()
    model.compile("sgd", loss={"out9": "mse"})
    # TF 2.21: "Expected keys ['out1', 'out2'] in loss dict, but found loss.keys()=['out9']"
    with pytest.raises(ValueError, match=r"Expected keys \['out1', 'out2'\] in loss dict, but found "
                                         r"loss.keys\(\)=\['out9'\]"):
        model.fit([X, B], [Y1, Y2], verbose=0)
    model = _model()
    model.compile("sgd", loss="mse", metrics=["mae"])
    with pytest.raises(ValueError, match="Invalid `metrics`"):
        model.fit([X, B], [Y1, Y2], verbose=0)
    model = _model()
    model.compile("sgd", loss="mse")
    # TF 2.21: "`class_weight` is only supported for Models with a single output."
    with pytest.raises(ValueError, match="`class_weight` is only supported for Models with a single output"):
        model.fit([X, B], [Y1, Y2], verbose=0, class_weight={0: 1.0, 1: 1.0})


def test_multi_output_model_saves_and_loads(tmp_path):
    model = _model()
    model.compile(K.optimizers.SGD(0.1), loss={"out1": "mse", "out2": "mae"}, metrics=[["mae"], ["mse"]],
                  loss_weights={"out1": 2.0, "out2": 0.5})
    model.fit([X, B], [Y1, Y2], batch_size=3, verbose=0, shuffle=False)
    model.save(tmp_path / "multi.keras")
    loaded = K.models.load_model(tmp_path / "multi.keras")
    for a, b in zip(loaded.predict([X, B], verbose=0), model.predict([X, B], verbose=0), strict=True):
        np.testing.assert_array_equal(a, b)
    h1 = model.fit([X, B], [Y1, Y2], batch_size=3, verbose=0, shuffle=False).history
    h2 = loaded.fit([X, B], [Y1, Y2], batch_size=3, verbose=0, shuffle=False).history
    assert h1 == h2


# -- class_weight -------------------------------------------------------------------------------

def _class_weight_run():
    model = K.Sequential([K.Input((2,)), K.layers.Dense(3, kernel_initializer="ones")])
    model.compile(K.optimizers.SGD(0.1), "sparse_categorical_crossentropy", metrics=["accuracy"])
    h = model.fit(X, np.array([0, 1, 2, 1, 0, 2]), batch_size=3, epochs=2, verbose=0, shuffle=False,
                  class_weight={0: 1.0, 1: 2.0, 2: 0.5})
    # TF 2.21: the loss is weighted, the accuracy is not (Keras 3 weighs only weighted_metrics)
    np.testing.assert_allclose(h.history["loss"], [1.2817143201828003, 1.1782675981521606], rtol=2e-6)
    np.testing.assert_allclose(h.history["accuracy"], [0.3333333432674408, 0.3333333432674408], rtol=1e-6)
    np.testing.assert_allclose(model.layers[0].kernel.numpy(),
                               [[0.9888888597488403, 1.017775535583496, 0.9888888597488403],
                                [0.9666666984558105, 1.0533264875411987, 0.9666666984558105]], rtol=2e-6)


def test_class_weight_weighs_each_sample_by_its_class():
    _class_weight_run()


def test_class_weight_weighs_each_sample_by_its_class_compiled():
    _class_weight_run()


def test_class_weight_with_binary_labels_and_its_errors():
    model = K.Sequential([K.Input((2,)), K.layers.Dense(1, kernel_initializer="ones")])
    model.compile(K.optimizers.SGD(0.1), "binary_crossentropy")
    labels = np.array([0, 1, 1, 0, 1, 1], "float32")
    h = model.fit(X, labels, batch_size=3, verbose=0, shuffle=False, class_weight={0: 3.0, 1: 1.0})
    np.testing.assert_allclose(h.history["loss"], [5.598691463470459], rtol=2e-6)   # TF 2.21
    # TF 2.21: "You cannot `class_weight` and `sample_weight` at the same time."
    with pytest.raises(ValueError, match="You cannot `class_weight` and `sample_weight` at the same time"):
        model.fit(X, labels, class_weight={0: 1.0}, sample_weight=np.ones(6), verbose=0)


def test_compile_metrics_ignore_sample_weight():
    model = K.Sequential([K.Input((2,)), K.layers.Dense(1, kernel_initializer="ones")])
    model.compile(K.optimizers.SGD(0.0), "mse", metrics=["mae"])
    y = np.arange(6.0, dtype="float32").reshape(6, 1)
    weighted = model.evaluate(X, y, sample_weight=np.array([1, 0, 0, 0, 0, 5.0]), verbose=0, return_dict=True)
    plain = model.evaluate(X, y, verbose=0, return_dict=True)
    # TF 2.21: {'loss': 8.987603187561035, 'mae': 2.499999761581421} and {'loss': 6.466942310333252, 'mae': 2.5}
    assert weighted["loss"] == pytest.approx(8.987603187561035, rel=2e-6)
    assert plain["loss"] == pytest.approx(6.466942310333252, rel=2e-6)
    assert weighted["mae"] == plain["mae"] == pytest.approx(2.5, rel=1e-6)


# -- weighted_metrics -----------------------------------------------------------------------------

SW = np.array([1, 0, 0, 0, 0, 5.0])
Y6 = np.arange(6.0, dtype="float32").reshape(6, 1)


def test_weighted_metrics_see_sample_weight_and_get_a_prefix_on_a_clash():
    model = K.Sequential([K.Input((2,)), K.layers.Dense(1, kernel_initializer="ones")])
    model.compile(K.optimizers.SGD(0.0), "mse", metrics=["mae"], weighted_metrics=["mae", "mse"])
    # TF 2.21
    expected = {"loss": 8.987603187561035, "mae": 2.499999761581421, "mse": 8.987603187561035,
                "weighted_mae": 2.954545259475708}
    got = model.evaluate(X, Y6, sample_weight=SW, verbose=0, return_dict=True)
    assert set(got) == set(expected)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=2e-6), key
    # TF 2.21 lists the clashing name twice (its sub-metric is still called 'mae')
    np.testing.assert_allclose(model.evaluate(X, Y6, sample_weight=SW, verbose=0),
                               [8.987603187561035, 2.499999761581421, 2.499999761581421,
                                8.987603187561035, 2.954545259475708], rtol=2e-6)
    h = model.fit(X, Y6, sample_weight=SW, verbose=0, batch_size=3).history
    assert h["weighted_mae"] == [pytest.approx(2.954545259475708, rel=2e-6)]   # TF 2.21


def test_weighted_metrics_per_output():
    a = K.Input((2,), name="a")
    model = K.Model(a, [K.layers.Dense(1, name="o1", kernel_initializer="ones")(a),
                        K.layers.Dense(1, name="o2", kernel_initializer="ones")(a)])
    model.compile("sgd", "mse", metrics=[["mae"], ["mae"]], weighted_metrics=[["mae"], ["mse"]])
    # TF 2.21
    np.testing.assert_allclose(model.evaluate(X, [Y6, Y6], sample_weight=SW, verbose=0),
                               [17.97520637512207, 8.987603187561035, 8.987603187561035,
                                2.499999761581421, 2.954545259475708, 2.499999761581421,
                                8.987603187561035], rtol=2e-6)
    assert set(model.evaluate(X, [Y6, Y6], sample_weight=SW, verbose=0, return_dict=True)) == {
        "loss", "o1_loss", "o1_mae", "o1_weighted_mae", "o2_loss", "o2_mae", "o2_mse"}
