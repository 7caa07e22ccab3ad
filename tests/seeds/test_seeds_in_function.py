"""The seed examples (../shared/seeds; eager versions in test_00*.py) inside tapeflow.function.

Two modes, as in the TF oracle (../shared/tf-oracle):
  "through": the forward computation is a ``tf.function`` called under eager tapes;
  "inside":  the tapes and ``gradient`` calls run inside a ``tf.function``.
TensorFlow prints the same numbers in both modes, except where DESIGN.md says a
``None`` becomes zeros through a function (second order through a function:
seed 000's Hessian); that is asserted exactly where it applies.

Seed 001's memory note has no printed value: its gradients are checked, and the bytes the
tape keeps through a function are asserted. Seed 003's "custom gradients in SavedModel" saves the function
and loads it back (tests/saved_model/ also does it in a fresh process).
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.tracer import TracingError

from seeds.modes import in_mode, modes
from seeds.references import grad_norm_bias_fd

# traced graphs run on the NumPy interpreter here (Numba is tested elsewhere)
pytestmark = pytest.mark.usefixtures("numpy_backend")


@pytest.fixture(autouse=True)
def seeded():
    tf.random.set_seed(1234)


def floats(gs):
    return [None if g is None else float(g) for g in gs]


# ============================================================================================
# Seed 000 (book excerpt)
# ============================================================================================

def f000(w1, w2):
    return 3 * w1 ** 2 + 2 * w1 * w2


@modes
def test_000_watched_constants_give_36_and_10(mode):
    def run(f, c1, c2):
        with tf.GradientTape() as tape:
            tape.watch(c1)
            tape.watch(c2)
            z = f(c1, c2)
        return z, tape.gradient(z, [c1, c2])

    z, gradients = in_mode(mode, run, f000, tf.constant(5.0), tf.constant(3.0))
    assert float(z) == 105.0 and floats(gradients) == [36.0, 10.0]


@modes
@pytest.mark.parametrize("how", ["passed", "captured"])
def test_000_variables_watched_automatically(mode, how):
    w1, w2 = tf.Variable(5.0), tf.Variable(3.0)

    def run(f, *args):
        with tf.GradientTape() as tape:
            z = f(*args)
        return tape.gradient(z, [w1, w2])

    if how == "passed":
        gradients = in_mode(mode, run, f000, w1, w2)
    else:
        gradients = in_mode(mode, run, lambda: f000(w1, w2))
    assert floats(gradients) == [36.0, 10.0]


@modes
def test_000_vector_target_gives_gradient_of_its_sum(mode):
    def body(w1, w2):
        z1, z2 = f000(w1, w2), f000(w2, w1)
        return tf.stack([z1, z2]), z1 + z2

    def run(fn, w1, w2):
        with tf.GradientTape(persistent=True) as tape:
            zs, total = fn(w1, w2)
        return tape.gradient(zs, [w1, w2]), tape.gradient(total, [w1, w2])

    g_vec, g_sum = in_mode(mode, run, body, tf.Variable(5.0), tf.Variable(3.0))
    assert floats(g_vec) == floats(g_sum) == [42.0, 38.0]


@modes
def test_000_jacobian_rows_are_individual_gradients(mode):
    def body(w1, w2):
        return tf.stack([f000(w1, w2), f000(w2, w1)])

    def run(fn, w1, w2):
        with tf.GradientTape(persistent=True) as tape:
            zs = fn(w1, w2)
        return tape.jacobian(zs, [w1, w2])

    j = in_mode(mode, run, body, tf.Variable(5.0), tf.Variable(3.0))
    assert j[0].shape == j[1].shape == (2,)
    assert j[0].numpy().tolist() == [36.0, 6.0] and j[1].numpy().tolist() == [10.0, 28.0]


@modes
def test_000_hessians_by_nested_tapes(mode):
    def run(fn, w1, w2):
        with tf.GradientTape(persistent=True) as hessian_tape:
            with tf.GradientTape() as jacobian_tape:
                z = fn(w1, w2)
            jacobians = jacobian_tape.gradient(z, [w1, w2])
        return jacobians, [hessian_tape.gradient(jac, [w1, w2]) for jac in jacobians]

    jacobians, hessians = in_mode(mode, run, f000, tf.Variable(5.0), tf.Variable(3.0))
    assert floats(jacobians) == [36.0, 10.0]
    assert floats(hessians[0]) == [6.0, 2.0]
    assert float(hessians[1][0]) == 2.0
    if mode == "inside":
        assert hessians[1][1] is None  # the seed's [[6, 2], [2, None]], as eagerly
    else:
        # DESIGN.md: second order through a function gives 0.0 where eager gives None for a
        # source connected at first order (w2 is: dz/dw2 = 2 w1).
        assert hessians[1][1] is not None and float(hessians[1][1]) == 0.0


@modes
def test_000_stop_gradient_blocks_the_second_term(mode):
    def g(w1, w2):
        return 3 * w1 ** 2 + tf.stop_gradient(2 * w1 * w2)

    def run(fn, w1, w2):
        with tf.GradientTape() as tape:
            z = fn(w1, w2)
        return z, tape.gradient(z, [w1, w2])

    z, gradients = in_mode(mode, run, g, tf.Variable(5.0), tf.Variable(3.0))
    assert float(z) == 105.0  # same result as without stop_gradient
    assert floats(gradients) == [30.0, None]  # w2 reaches the output only through stop_gradient


@modes
def test_000_naive_softplus_gradient_is_nan_at_100(mode):
    def my_softplus(z):
        return tf.math.log(tf.exp(z) + 1.0)

    def run(fn, x):
        with tf.GradientTape() as tape:
            z = fn(x)
        return tape.gradient(z, [x])

    x = tf.Variable([100.0])
    (g,) = in_mode(mode, run, my_softplus, x)
    assert g.dtype == tf.float32 and g.shape == (1,) and np.isnan(g.numpy()).all()
    (g,) = in_mode(mode, run, tf.nn.softplus, x)  # the library's softplus is stable
    assert g.numpy().tolist() == [1.0]


# ============================================================================================
# Seed 001 (notebook)
# ============================================================================================

@modes
def test_001_gradient_has_the_shape_of_its_source(mode):
    w = tf.Variable(tf.random.normal((3, 2)), name="w")
    b = tf.Variable(tf.zeros(2, dtype=tf.float32), name="b")
    x = [[1.0, 2.0, 3.0]]

    def body(w, b):
        y = x @ w + b
        return tf.reduce_mean(y ** 2)

    def run(fn, w, b):
        with tf.GradientTape(persistent=True) as tape:
            loss = fn(w, b)
        return tape.gradient(loss, [w, b])

    dl_dw, dl_db = in_mode(mode, run, body, w, b)
    assert w.shape == dl_dw.shape == (3, 2) and str(dl_dw.shape) == "(3, 2)"
    yv = np.array(x, np.float32) @ w.numpy() + b.numpy()
    np.testing.assert_allclose(dl_dw.numpy(), np.array(x).T @ yv, rtol=1e-5)
    np.testing.assert_allclose(dl_db.numpy(), yv.sum(0), rtol=1e-5)


@modes
def test_001_gradients_with_respect_to_a_model(mode):
    tf.keras.backend.clear_session()
    layer = tf.keras.layers.Dense(2, activation="relu")
    x = tf.constant([[1.0, 2.0, 3.0]])

    def body(x):
        y = layer(x)  # built (variables created) on the function's first call
        return tf.reduce_mean(y ** 2)

    def run(fn, x):
        with tf.GradientTape() as tape:
            loss = fn(x)
        return loss, tape.gradient(loss, layer.trainable_variables)

    loss, grad = in_mode(mode, run, body, x)
    lines = [f"{var.name}, shape: {g.shape}" for var, g in zip(layer.trainable_variables, grad)]
    assert lines == ["dense/kernel:0, shape: (3, 2)", "dense/bias:0, shape: (2,)"]
    eager_loss, eager_grad = run(body, x)
    assert float(loss) == float(eager_loss)
    for g, e in zip(grad, eager_grad, strict=True):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-6)


@modes
def test_001_controlling_what_the_tape_watches(mode):
    def run(fn, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        return tape.gradient(y, x)

    assert in_mode(mode, run, lambda x: x ** 2, tf.constant(3.0)).numpy() == 6.0

    x0 = tf.Variable(3.0, name="x0")
    x1 = tf.Variable(3.0, name="x1", trainable=False)
    x2 = tf.Variable(2.0, name="x2") + 1.0
    x3 = tf.constant(3.0, name="x3")
    watched = []

    def body(x2):
        return (x0 ** 2) + (x1 ** 2) + (x2 ** 2)

    def run2(fn, x2, x3):
        with tf.GradientTape() as tape:
            y = fn(x2)
        watched.extend(var.name for var in tape.watched_variables())
        return tape.gradient(y, [x0, x1, x2, x3])

    grad = in_mode(mode, run2, body, x2, x3)
    assert [str(g) for g in grad] == ["tf.Tensor(6.0, shape=(), dtype=float32)", "None", "None", "None"]
    assert watched == ["x0:0"]


@modes
def test_001_watch_accessed_variables_false(mode):
    x0 = tf.Variable(0.0)
    x1 = tf.Variable(10.0)

    def body():
        y0 = tf.math.sin(x0)
        y1 = tf.nn.softplus(x1)
        y = y0 + y1
        return tf.reduce_sum(y)

    def run(fn):
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(x1)
            ys = fn()
        return tape.gradient(ys, {"x0": x0, "x1": x1})

    grad = in_mode(mode, run, body)
    assert grad["x0"] is None
    assert f"{grad['x1'].numpy():.7f}" == "0.9999546"


@modes
def test_001_intermediate_results(mode):
    def run(sq, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = sq(x)   # through: one compiled call per product
            z = sq(y)
        return tape.gradient(z, y)

    assert in_mode(mode, run, lambda a: a * a, tf.constant(3.0)).numpy() == 18.0


def _square_and_fourth_power(x):
    y = x * x
    return y, y * y


def _two_gradients_from_one_persistent_tape(fn, x):
    """Seeds 001 and 002's persistent-tape example: dz/dx, then dy/dx, of ``y, z = fn(x)``."""
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y, z = fn(x)
    return tape.gradient(z, x), tape.gradient(y, x)


@modes
def test_001_persistent_tape(mode):
    dz, dy = in_mode(mode, _two_gradients_from_one_persistent_tape, _square_and_fourth_power,
                     tf.constant([1, 3.0]))
    assert dz.numpy().tolist() == [4.0, 108.0]
    assert dy.numpy().tolist() == [2.0, 6.0]


@modes
def test_001_memory_example_gradients(mode):
    x = tf.constant(np.linspace(-1, 1, 1000, dtype=np.float32))
    w = tf.Variable(np.full(1000, 2.0, np.float32))

    def body(x):
        a = tf.math.sigmoid(x + w)
        c = tf.math.sin(x + w)
        return tf.nn.relu(a * c)

    def run(fn, x):
        with tf.GradientTape() as tape:
            y = fn(x)
        return tape.gradient(y, w)

    got = in_mode(mode, run, body, x)
    np.testing.assert_allclose(got.numpy(), run(body, x).numpy(), rtol=1e-6)
    s = 1 / (1 + np.exp(-(x.numpy() + 2.0)))
    want = s * (1 - s) * np.sin(x.numpy() + 2.0) + s * np.cos(x.numpy() + 2.0)
    want = np.where(s * np.sin(x.numpy() + 2.0) > 0, want, 0.0)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-6)


def test_001_relu_through_a_function_keeps_only_its_output():
    x = tf.constant(np.linspace(-1, 1, 1000, dtype=np.float32))
    w = tf.Variable(np.full(1000, 2.0, np.float32))
    fn = tf.function(lambda x: tf.nn.relu(x + w))
    with tf.GradientTape() as tape:
        y = fn(x)
    assert tape.saved_bytes() == 4000  # the backward program reads only relu's output
    with tf.GradientTape(persistent=True) as tape:
        y = fn(x)
    # a persistent tape may differentiate the backward again, which needs the call's inputs
    # too (x and the read of w): 4000 + 2 * 4000
    assert tape.saved_bytes() == 12000
    tape.gradient(y, w)
    with tf.GradientTape() as tape:
        y = fn(x)
    tape.gradient(y, w)
    assert tape.saved_bytes() == 0


@modes
def test_001_none_when_target_not_connected(mode):
    def run(fn, x, y):
        with tf.GradientTape() as tape:
            z = fn(x, y)
        return tape.gradient(z, x)

    assert in_mode(mode, run, lambda x, y: y * y, tf.Variable(2.0), tf.Variable(3.0)) is None


@modes
def test_001_none_cause_1_replaced_variable_with_tensor(mode):
    def run(fn, x):
        with tf.GradientTape() as tape:
            y = fn(x)
        return tape.gradient(y, x)

    if mode == "through":
        step = lambda x: run(tf.function(lambda x: x + 1), x)  # noqa: E731
    else:
        step = tf.function(lambda x: run(lambda x: x + 1, x))
    x = tf.Variable(2.0)
    printed = []
    for epoch in range(2):
        printed.append(str(step(x)))
        x = x + 1  # This should be `x.assign_add(1)`
    assert printed == ["tf.Tensor(1.0, shape=(), dtype=float32)", "None"]


def test_001_none_cause_2_numpy_outside_the_function_through():
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)
    square = tf.function(lambda x: x ** 2)
    with tf.GradientTape() as tape:
        x2 = square(x)
        y = np.mean(x2, axis=0)
        y = tf.reduce_mean(y, axis=0)
    assert float(y) == 7.5
    assert tape.gradient(y, x) is None


def _numpy_inside(x):
    with tf.GradientTape() as tape:
        x2 = x ** 2
        y = np.mean(x2, axis=0)
        y = tf.reduce_mean(y, axis=0)
    return tape.gradient(y, x)


def test_001_none_cause_2_numpy_inside_a_function_raises_like_tensorflow():
    """TF raises NotImplementedError; tapeflow's message also names the user's line."""
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)
    with pytest.raises(NotImplementedError) as e:
        tf.function(_numpy_inside)(x)
    assert "test_seeds_in_function.py" in str(e.value) and "np.mean" in str(e.value)


@modes
def test_001_none_cause_3_integer_dtype(mode):
    def body(x):
        y = tf.cast(x, tf.float32)  # noqa: F841
        return tf.reduce_sum(x)

    def run(fn, x):
        with tf.GradientTape() as tape:
            y = fn(x)
        return y, tape.gradient(y, x)

    y, g = in_mode(mode, run, body, tf.Variable([[2, 2], [2, 2]]))
    assert int(y) == 8 and y.dtype == tf.int32 and g is None


# ============================================================================================
# Seed 002 (tf.GradientTape API page)
# ============================================================================================

@modes
def test_002_watch_a_constant(mode):
    def run(fn, x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = fn(x)
        return g.gradient(y, x)

    dy_dx = in_mode(mode, run, lambda x: x * x, tf.constant(3.0))
    assert str(dy_dx) == "tf.Tensor(6.0, shape=(), dtype=float32)"


@modes
def test_002_nested_tapes_for_higher_order(mode):
    def run(fn, x):
        with tf.GradientTape() as g:
            g.watch(x)
            with tf.GradientTape() as gg:
                gg.watch(x)
                y = fn(x)
            dy_dx = gg.gradient(y, x)
        return dy_dx, g.gradient(dy_dx, x)

    dy_dx, d2y_dx2 = in_mode(mode, run, lambda x: x * x, tf.constant(5.0))
    assert str(dy_dx) == "tf.Tensor(10.0, shape=(), dtype=float32)"
    assert str(d2y_dx2) == "tf.Tensor(2.0, shape=(), dtype=float32)"


@modes
def test_002_persistent_tape(mode):
    dz_dx, dy_dx = in_mode(mode, _two_gradients_from_one_persistent_tape, _square_and_fourth_power,
                           tf.constant(3.0))
    assert str(dz_dx) == "tf.Tensor(108.0, shape=(), dtype=float32)"
    assert str(dy_dx) == "tf.Tensor(6.0, shape=(), dtype=float32)"


@modes
def test_002_watch_accessed_variables_false(mode):
    def body(x, w):
        return x ** 2, w ** 3

    def run(fn, x, w):
        with tf.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
            tape.watch(x)
            y, z = fn(x, w)
        return tape.gradient(y, x), tape.gradient(z, w)

    gy, gz = in_mode(mode, run, body, tf.Variable(2.0), tf.Variable(5.0))
    assert str(gy) == "tf.Tensor(4.0, shape=(), dtype=float32)"
    assert gz is None


# ============================================================================================
# Seed 003 (advanced autodiff guide)
# ============================================================================================

def _square(a):
    return a * a


@modes
def test_003_stop_recording(mode):
    def run(sq, x, y):
        with tf.GradientTape() as t:
            x_sq = sq(x)
            with t.stop_recording():
                y_sq = sq(y)
            z = x_sq + y_sq
        return z, t.gradient(z, {"x": x, "y": y})

    z, grad = in_mode(mode, run, _square, tf.Variable(2.0), tf.Variable(3.0))
    assert float(z) == 13.0
    assert grad["x"].numpy() == 4.0 and grad["y"] is None


@modes
def test_003_reset(mode):
    def run(sq, x, y):
        reset = True
        with tf.GradientTape() as t:
            y_sq = sq(y)
            if reset:
                t.reset()
            z = sq(x) + y_sq
        return t.gradient(z, {"x": x, "y": y})

    grad = in_mode(mode, run, _square, tf.Variable(2.0), tf.Variable(3.0))
    assert grad["x"].numpy() == 4.0 and grad["y"] is None


@modes
def test_003_stop_gradient(mode):
    def body(x, y):
        y_sq = y ** 2
        return x ** 2 + tf.stop_gradient(y_sq)

    def run(fn, x, y):
        with tf.GradientTape() as t:
            z = fn(x, y)
        return t.gradient(z, {"x": x, "y": y})

    grad = in_mode(mode, run, body, tf.Variable(2.0), tf.Variable(3.0))
    assert grad["x"].numpy() == 4.0 and grad["y"] is None


@tf.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return tf.clip_by_norm(dy, 0.5)
    return y, backward


@modes
def test_003_custom_gradient_clips_4_to_2(mode):
    def run(fn, v):
        with tf.GradientTape() as t:
            output = fn(v)
        return output, t.gradient(output, v)

    output, g = in_mode(mode, run, lambda v: clip_gradients(v * v), tf.Variable(2.0))
    assert float(output) == 4.0
    assert str(g) == "tf.Tensor(2.0, shape=(), dtype=float32)"  # calls "backward", which clips 4 to 2


class MyModule(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec(None)])
    def call_custom_grad(self, x):
        return clip_gradients(x)


def test_003_custom_gradient_in_a_module_method_with_signature():
    """The module of "Custom gradients in SavedModel", before saving: a tf.function method."""
    model = MyModule()
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = model.call_custom_grad(v * v)
    assert float(output) == 4.0
    assert str(t.gradient(output, v)) == "tf.Tensor(2.0, shape=(), dtype=float32)"
    with tf.GradientTape() as t:  # another rank: the same signature, one trace
        t.watch(v)
        out = model.call_custom_grad(tf.stack([v, 3.0 * v]))
    g = t.gradient(out, v)  # dy = [1, 1] clipped to norm 0.5, then d/dv of [v, 3v]: (1 + 3) * 0.5/sqrt(2)
    np.testing.assert_allclose(float(g), 4 * 0.5 / np.sqrt(2), rtol=1e-6)
    assert model.call_custom_grad.experimental_get_tracing_count() == 1


def test_003_custom_gradients_in_saved_model(tmp_path):
    model = MyModule()
    path = str(tmp_path / "saved_model")
    tf.saved_model.save(model, path,
                        options=tf.saved_model.SaveOptions(experimental_custom_gradients=True))
    v = tf.Variable(2.0)
    loaded = tf.saved_model.load(path)
    with tf.GradientTape() as t:
        output = loaded.call_custom_grad(v * v)
    assert str(t.gradient(output, v)) == "tf.Tensor(2.0, shape=(), dtype=float32)"


@modes
def test_003_multiple_tapes(mode):
    def body(x0, x1):
        y0 = tf.math.sin(x0)
        y1 = tf.nn.sigmoid(x1)
        y = y0 + y1
        return tf.reduce_sum(y)

    def run(fn, x0, x1):
        with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
            tape0.watch(x0)
            tape1.watch(x1)
            ys = fn(x0, x1)
        return tape0.gradient(ys, x0), tape1.gradient(ys, x1)

    g0, g1 = in_mode(mode, run, body, tf.constant(0.0), tf.constant(0.0))
    assert g0.numpy() == 1.0   # cos(x) => 1.0
    assert g1.numpy() == 0.25  # sigmoid(x1)*(1-sigmoid(x1)) => 0.25


@modes
def test_003_higher_order_gradients(mode):
    def run(fn, x):
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = fn(x)
            dy_dx = t1.gradient(y, x)
        return dy_dx, t2.gradient(dy_dx, x)

    dy_dx, d2y_dx2 = in_mode(mode, run, lambda x: x * x * x, tf.Variable(1.0))
    assert dy_dx.numpy() == 3.0 and d2y_dx2.numpy() == 6.0


@modes
def test_003_input_gradient_regularization(mode):
    x = tf.random.normal([7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)

    def body(x):
        y = layer(x)
        return y, tf.reduce_sum(layer(x) ** 2)

    def run(fn, x):
        with tf.GradientTape() as t2:
            with tf.GradientTape(watch_accessed_variables=False) as t1:
                t1.watch(x)
                y, out = fn(x)
            g1 = t1.gradient(out, x)
            g1_mag = tf.norm(g1)
        return t2.gradient(g1_mag, layer.trainable_variables)

    dg1_mag = in_mode(mode, run, body, x)
    assert [var.shape for var in dg1_mag] == [(5, 10), (10,)]
    for g, e in zip(dg1_mag, run(body, x), strict=True):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dg1_mag[1].numpy(), grad_norm_bias_fd(layer, x), rtol=1e-3, atol=1e-3)


@modes
def test_003_jacobian_scalar_source(mode):
    x = tf.linspace(-10.0, 10.0, 200 + 1)
    delta = tf.Variable(0.0)

    def run(fn, x, delta):
        with tf.GradientTape() as tape:
            y = fn(x, delta)
        return y, tape.jacobian(y, delta)

    y, dy_dx = in_mode(mode, run, lambda x, delta: tf.nn.sigmoid(x + delta), x, delta)
    assert y.shape == (201,) and dy_dx.shape == (201,)
    s = 1 / (1 + np.exp(-x.numpy().astype(np.float64)))
    np.testing.assert_allclose(y.numpy(), s, atol=1e-6)
    np.testing.assert_allclose(dy_dx.numpy(), s * (1 - s), atol=1e-6)


@modes
def test_003_jacobian_tensor_source_sums_to_gradient(mode):
    x = tf.random.normal([7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)

    def run(fn, x):
        with tf.GradientTape(persistent=True) as tape:
            y = fn(x)
        return y, tape.jacobian(y, layer.kernel), tape.gradient(y, layer.kernel)

    y, j, g = in_mode(mode, run, layer, x)
    assert y.shape == (7, 10) and layer.kernel.shape == (5, 10)
    assert j.shape == (7, 10, 5, 10) and g.shape == (5, 10)
    j_sum = tf.reduce_sum(j, axis=[0, 1])
    delta = tf.reduce_max(abs(g - j_sum)).numpy()
    assert delta < 1e-3
    _, je, ge = run(layer, x)
    np.testing.assert_allclose(j.numpy(), je.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g.numpy(), ge.numpy(), rtol=1e-5, atol=1e-6)


@modes
def test_003_hessian_and_newton_step(mode):
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)

    def body(x):
        x = layer1(x)
        x = layer2(x)
        return tf.reduce_mean(x ** 2)

    def hessian(fn, x):
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                loss = fn(x)
            g = t1.gradient(loss, layer1.kernel)
        return g, t2.jacobian(g, layer1.kernel)

    def newton(g, h):
        n_params = tf.reduce_prod(layer1.kernel.shape)
        g_vec = tf.reshape(g, [n_params, 1])
        h_mat = tf.reshape(h, [n_params, n_params])
        eps = 1e-3
        eye_eps = tf.eye(h_mat.shape[0]) * eps
        update = tf.linalg.solve(h_mat + eye_eps, g_vec)
        _ = layer1.kernel.assign_sub(tf.reshape(update, layer1.kernel.shape))
        return update

    def run(fn, x):
        g, h = hessian(fn, x)
        return g, h, newton(g, h)

    ge, he = hessian(body, x)  # eager reference (builds the layers)
    before = layer1.kernel.numpy().copy()
    if mode == "through":
        g, h = hessian(tf.function(body), x)
        update = newton(g, h)
    else:
        g, h, update = in_mode(mode, run, body, x)  # assign_sub inside the function
    assert layer1.kernel.shape == (5, 8) and h.shape == (5, 8, 5, 8)
    np.testing.assert_allclose(g.numpy(), ge.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.numpy(), he.numpy(), rtol=1e-4, atol=1e-5)
    h_mat = h.numpy().reshape(40, 40)
    np.testing.assert_allclose(h_mat, h_mat.T, atol=1e-5)  # symmetric
    expected = np.linalg.solve(h_mat.astype(np.float64) + 1e-3 * np.eye(40), g.numpy().reshape(40, 1))
    np.testing.assert_allclose(update.numpy(), expected, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(before - layer1.kernel.numpy(), update.numpy().reshape(5, 8), rtol=1e-5,
                               atol=1e-6)


def _elu_net(bn=False):
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    norm = tf.keras.layers.BatchNormalization()
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)

    def body(x):
        y = layer1(x)
        if bn:
            y = norm(y, training=True)
        return layer2(y)

    return body


def _jacobians(fn, x):
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = fn(x)
    return y, tape.jacobian(y, x), tape.batch_jacobian(y, x)


def plot_as_patches(j):
    """The seed's reshaping of j into one image (without plotting)."""
    j = tf.transpose(j, [1, 0, 3, 2])
    lim = tf.reduce_max(abs(j))
    j = tf.pad(j, [[0, 0], [1, 1], [0, 0], [1, 1]], constant_values=-lim)
    s = j.shape
    return tf.reshape(j, [s[0] * s[1], s[2] * s[3]])


@modes
def test_003_batch_jacobian(mode):
    x = tf.random.normal([7, 5])
    body = _elu_net()
    y, j, jb = in_mode(mode, _jacobians, body, x)
    assert y.shape == (7, 6)
    assert j.shape == (7, 6, 7, 5)
    off = j.numpy().copy()
    for b in range(7):
        off[b, :, b, :] = 0
    assert not off.any()  # every (batch, batch) slice is diagonal
    assert plot_as_patches(j).shape == (6 * 9, 5 * 9)
    j_sum = tf.reduce_sum(j, axis=2)
    j_select = tf.einsum("bxby->bxy", j)
    assert j_sum.shape == j_select.shape == (7, 6, 5)
    assert jb.shape == (7, 6, 5)
    error = tf.reduce_max(abs(jb - j_sum))
    assert error < 1e-3
    _, je, jbe = _jacobians(body, x)
    np.testing.assert_allclose(j.numpy(), je.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jb.numpy(), jbe.numpy(), rtol=1e-5, atol=1e-6)


@modes
def test_003_batch_jacobian_with_batch_norm_is_not_diagonal(mode):
    x = tf.random.normal([7, 5])
    body = _elu_net(bn=True)
    y, j, jb = in_mode(mode, _jacobians, body, x)
    assert j.shape == (7, 6, 7, 5)
    off = j.numpy().copy()
    for b in range(7):
        off[b, :, b, :] = 0
    assert np.abs(off).max() > 1e-4  # batch statistics couple the examples
    assert jb.shape == (7, 6, 5)
    ye, je, jbe = _jacobians(body, x)
    np.testing.assert_allclose(y.numpy(), ye.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(j.numpy(), je.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(jb.numpy(), jbe.numpy(), rtol=1e-4, atol=1e-5)


# ============================================================================================
# Seed 004 (notebook)
# ============================================================================================

@modes
def test_004_square_of_a_variable(mode):
    def run(fn, x):
        with tf.GradientTape() as tape:
            y = fn(x)
        return y, tape.gradient(y, x)

    y, dy_dx = in_mode(mode, run, lambda x: x ** 2, tf.Variable(4.0))
    assert repr(y) == "<tf.Tensor: shape=(), dtype=float32, numpy=16.0>"
    assert repr(dy_dx) == "<tf.Tensor: shape=(), dtype=float32, numpy=8.0>"


@modes
def test_004_linear_model_gradients(mode):
    w = tf.Variable(tf.random.normal((4, 2)))
    b = tf.Variable(tf.ones(2, dtype=tf.float32))
    x = tf.Variable([[10.0, 20.0, 30.0, 40.0]])

    def body(x, w, b):
        y = tf.matmul(x, w) + b
        return y, tf.reduce_mean(y ** 2)

    def run(fn, x, w, b):
        with tf.GradientTape(persistent=True) as tape:
            y, loss = fn(x, w, b)
        return tape.gradient(loss, [w, b]), tape.gradient(y, [w, b])

    (dl_dw, dl_db), (gw, gb) = in_mode(mode, run, body, x, w, b)
    yv = x.numpy() @ w.numpy() + b.numpy()
    np.testing.assert_allclose(dl_db.numpy(), yv[0], rtol=1e-5)
    np.testing.assert_allclose(dl_dw.numpy(), x.numpy().T @ yv, rtol=1e-5)
    assert gw.numpy().tolist() == [[10.0, 10.0], [20.0, 20.0], [30.0, 30.0], [40.0, 40.0]]
    assert repr(gb) == "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 1.], dtype=float32)>"


@modes
def test_004_dense_relu_with_dead_units_gives_zeros_not_none(mode):
    layer = tf.keras.layers.Dense(2, activation="relu")
    x = tf.constant([[10.0, 20.0, 30.0, 40.0]])
    layer(x)
    layer.kernel.assign(-np.abs(layer.kernel.numpy()))  # as in the seed's run: both units dead

    def body(x):
        y = layer(x)
        return tf.reduce_sum(y ** 2)

    def run(fn, x):
        with tf.GradientTape() as tape:
            loss = fn(x)
        return tape.gradient(loss, layer.trainable_variables)

    grad = in_mode(mode, run, body, x)
    assert grad[0].numpy().tolist() == [[0.0, 0.0]] * 4 and grad[1].numpy().tolist() == [0.0, 0.0]


@modes
def test_004_trainable_non_trainable_and_constants(mode):
    x1 = tf.Variable(4.0)
    x2 = tf.Variable(5.0, trainable=False)
    x3 = tf.add(x1, x2)
    x4 = tf.constant(5.0)
    assert repr(x3) == "<tf.Tensor: shape=(), dtype=float32, numpy=9.0>"

    def body(x1, x2, x3, x4):
        return x1 ** 2 + x2 ** 2 + x3 ** 2 + x4 ** 2

    def run(fn, x1, x2, x3, x4):
        with tf.GradientTape() as tape:
            y = fn(x1, x2, x3, x4)
        plain = tape.gradient(y, [x1, x2, x3, x4])
        with tf.GradientTape() as tape:
            tape.watch(x2)  # force the tape to watch
            y = fn(x1, x2, x3, x4)
        forced = tape.gradient(y, [x1, x2, x3, x4])
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(x1)
            y = fn(x1, x2, tf.zeros([]), tf.zeros([]))  # y = x1**2 + x2**2
        only_x1 = tape.gradient(y, [x1, x2])
        return plain, forced, only_x1

    plain, forced, only_x1 = in_mode(mode, run, body, x1, x2, x3, x4)
    assert floats(plain) == [8.0, None, None, None]
    assert floats(forced) == [8.0, 10.0, None, None]
    assert floats(only_x1) == [8.0, None]


def _branchy(x, x1, x2):
    if x > 0:
        y = x1 ** 2
    else:
        y = x2 ** 2
    return y


@modes
def test_004_python_control_flow(mode):
    x1 = tf.Variable(5.0)
    x2 = tf.Variable(6.0)

    def run(fn, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x, x1, x2)
        return y, tape.gradient(y, [x1, x2])

    if mode == "through":
        fn = tf.function(_branchy)
        step = lambda x: run(fn, x)  # noqa: E731
    else:
        step = tf.function(lambda x: run(_branchy, x))
    # One function, both signs: the branch follows the value at every call.
    for xv, taken, y_want in ((1.0, 0, 25.0), (-1.0, 1, 36.0), (2.0, 0, 25.0)):
        y, grad = step(tf.constant(xv))
        assert float(y) == y_want
        want = [10.0, 12.0][taken]
        assert float(grad[taken]) == want
        other = grad[1 - taken]
        if mode == "through":
            # DESIGN.md: a cond's gradient gives 0.0 to a variable read only in the untaken
            # branch, through the call (eagerly, as the seed prints, None).
            assert other is not None and float(other) == 0.0
        else:
            # inside, each side's tape gives None; the If merging the sides gives the None
            # side zeros, as TensorFlow's cond gradient does
            assert other is not None and float(other) == 0.0
