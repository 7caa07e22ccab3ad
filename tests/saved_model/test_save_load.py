"""Saving and loading in one process: variables, training loaded programs, nesting, calling rules."""
import numpy as np
import pytest

import tapeflow as tf

from programs import Seed003Clip, Seed003Log1pexp


class Regressor(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[0.5], [-1.0]], name="w")
        self.b = tf.Variable([0.25], name="b")
        self.calls = tf.Variable(0, trainable=False, name="calls")
        self.extra = [tf.Variable(1.0, name="e0"), {"k": tf.Variable(2.0, name="e1")}]

    @tf.function(input_signature=[tf.TensorSpec([None, 2])])
    def __call__(self, x):
        return x @ self.w + self.b

    @tf.function
    def loss(self, x, y):
        self.calls.assign_add(1)
        return tf.reduce_mean((self(x) - y) ** 2) * self.extra[0] * self.extra[1]["k"]


X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]], np.float32)
Y = np.array([[1.0], [2.0], [0.0]], np.float32)


def _loss_np(w, b, e0=1.0, e1=2.0):
    return np.mean((X @ w + b - Y) ** 2) * e0 * e1


def test_variables_come_back_with_names_values_and_trainability(tmp_path):
    m = Regressor()
    m.loss(X, Y)
    tf.saved_model.save(m, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    assert [(v.name, v.trainable, v.dtype.name, tuple(v.shape)) for v in loaded.variables] == \
        [(v.name, v.trainable, v.dtype.name, tuple(v.shape)) for v in m.variables]
    for a, b in zip(loaded.variables, m.variables, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert loaded.extra[1]["k"].name == "e1:0" and int(loaded.calls.numpy()) == 1
    assert list(loaded.signatures) == ["serving_default"]
    np.testing.assert_allclose(loaded(X).numpy(), X @ m.w.numpy() + m.b.numpy(), rtol=1e-6)


def test_loaded_variables_train_and_save_again(tmp_path):
    m = Regressor()
    m.loss(X, Y)
    tf.saved_model.save(m, str(tmp_path / "a"))
    loaded = tf.saved_model.load(str(tmp_path / "a"))
    opt = tf.optimizers.SGD(0.05)
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = loaded.loss(X, Y)
        grads = tape.gradient(loss, loaded.trainable_variables)
        opt.apply_gradients(zip(grads, loaded.trainable_variables))
    # the same steps by hand, in float64, from the saved values
    w, b = m.w.numpy().astype(np.float64), m.b.numpy().astype(np.float64)
    e0, e1 = 1.0, 2.0
    for _ in range(3):
        r = X @ w + b - Y
        gw, gb = 2 * X.T @ r / len(X) * e0 * e1, 2 * r.mean(0) * e0 * e1
        ge0, ge1 = np.mean(r ** 2) * e1, np.mean(r ** 2) * e0
        w, b, e0, e1 = w - 0.05 * gw, b - 0.05 * gb, e0 - 0.05 * ge0, e1 - 0.05 * ge1
    np.testing.assert_allclose(loaded.w.numpy(), w, rtol=1e-5)
    np.testing.assert_allclose(loaded.extra[1]["k"].numpy(), e1, rtol=1e-5)
    assert int(loaded.calls.numpy()) == 4          # assign_add inside the loaded function
    tf.saved_model.save(loaded, str(tmp_path / "b"))
    again = tf.saved_model.load(str(tmp_path / "b"))
    np.testing.assert_allclose(again.w.numpy(), w, rtol=1e-5)
    assert int(again.calls.numpy()) == 4 and list(again.signatures) == ["serving_default"]
    np.testing.assert_allclose(float(again.loss(X, Y)), _loss_np(w, b, e0, e1), rtol=1e-5)


def test_nested_tapes_through_a_loaded_function(tmp_path):
    class Cube(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None])])
        def f(self, x):
            return tf.reduce_sum(x * x * x)

    tf.saved_model.save(Cube(), str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    x = tf.constant([1.0, -2.0, 0.5])
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = loaded.f(x)
            g1 = t1.gradient(y, x)
        g2 = t2.gradient(g1, x)
    g3 = t3.gradient(g2, x)
    xv = x.numpy()
    np.testing.assert_allclose(g1.numpy(), 3 * xv ** 2, rtol=1e-6)
    np.testing.assert_allclose(g2.numpy(), 6 * xv, rtol=1e-6)
    np.testing.assert_allclose(g3.numpy(), [6.0, 6.0, 6.0], rtol=1e-6)


def test_loaded_function_inside_another_function(tmp_path):
    m = Regressor()
    tf.saved_model.save(m, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))

    @tf.function
    def outer(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(loaded(x))
        return t.gradient(y, x)

    g = outer(tf.constant(X))
    np.testing.assert_allclose(g.numpy(), np.tile(m.w.numpy().T, (3, 1)), rtol=1e-6)


def test_custom_gradient_second_order_survives(tmp_path):
    """log1pexp's gradient is sigmoid; its derivative must come from the saved gradient graph."""
    tf.saved_model.save(_traced_log1pexp(), str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    x = tf.constant([0.5, -1.0, 100.0])
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = loaded.f(x)
        g = t1.gradient(y, x)
    h = t2.gradient(g, x)
    s = 1 / (1 + np.exp(-x.numpy().astype(np.float64)))
    np.testing.assert_allclose(g.numpy(), s, rtol=1e-6)
    np.testing.assert_allclose(h.numpy()[:2], (s * (1 - s))[:2], rtol=1e-5)
    assert np.isnan(h.numpy()[2])  # exp(100) overflows in float32, as the seed's formula does


def _traced_log1pexp():
    m = Seed003Log1pexp()
    m.f(tf.constant([0.5, -1.0, 100.0]))
    return m


def test_without_custom_gradients_this_process_still_has_them(tmp_path):
    """TF: 'the gradient registry still contains the custom gradient' in the saving process."""
    tf.saved_model.save(Seed003Clip(), str(tmp_path),
                        options=tf.saved_model.SaveOptions(experimental_custom_gradients=False))
    loaded = tf.saved_model.load(str(tmp_path))
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = loaded.f(v * v)
    assert str(t.gradient(output, v)) == "tf.Tensor(2.0, shape=(), dtype=float32)"


def test_custom_gradients_are_saved_by_default():
    assert tf.saved_model.SaveOptions().experimental_custom_gradients is True


def test_a_plain_function_round_trips(tmp_path):
    @tf.function(input_signature=[tf.TensorSpec([3]), tf.TensorSpec([], tf.int32)])
    def f(x, n):
        return {"sum": tf.reduce_sum(x[1:, ...] * tf.cast(n, tf.float32)), "n": n, "note": None}

    tf.saved_model.save(f, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    out = loaded(tf.constant([1.0, 2.0, 4.0]), 3)   # a Python int converts to the spec's dtype
    assert float(out["sum"]) == 18.0 and int(out["n"]) == 3 and out["note"] is None
    with pytest.raises(ValueError, match="Could not find matching concrete function"):
        loaded(tf.constant([1.0, 2.0]), 3)
    with pytest.raises(TypeError, match="missing required argument 'n'"):
        loaded(tf.constant([1.0, 2.0, 3.0]))


def test_split_by_count_and_by_sizes_round_trip(tmp_path):
    """Split's ``sizes`` is a count (``tf.split(x, 2)``) or a list of sizes; both load."""
    @tf.function(input_signature=[tf.TensorSpec([4])])
    def f(x):
        a, b = tf.split(x, 2)
        c, d = tf.split(x, [1, 3])
        return a * b + tf.reduce_sum(c) * tf.reduce_sum(d)

    tf.saved_model.save(f, str(tmp_path))
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    assert tf.saved_model.load(str(tmp_path))(x).numpy().tolist() == f(x).numpy().tolist() == [12.0, 17.0]


def test_python_arguments_select_their_own_trace(tmp_path):
    class Scale(tf.Module):
        @tf.function
        def f(self, x, double=False):
            return x * 2.0 if double else x

    m = Scale()
    m.f(tf.constant(3.0))
    m.f(tf.constant(3.0), double=True)
    tf.saved_model.save(m, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    assert float(loaded.f(tf.constant(5.0))) == 5.0
    assert float(loaded.f(tf.constant(5.0), double=True)) == 10.0
    assert float(loaded.f(tf.constant(5.0), True)) == 10.0


def test_what_cannot_be_saved_says_why(tmp_path):
    with pytest.raises(ValueError, match="never called and has no input_signature"):
        tf.saved_model.save(tf.function(lambda x: x), str(tmp_path / "a"))
    with pytest.raises(ValueError, match="wrap it in tapeflow.function"):
        tf.saved_model.save(lambda x: x, str(tmp_path / "b"))
    with pytest.raises(ValueError, match="cannot save an object of type int"):
        tf.saved_model.save(3, str(tmp_path / "c"))
    with pytest.raises(TypeError, match="unsupported option"):
        tf.saved_model.SaveOptions(namespace_whitelist=["x"])


def test_saving_again_into_the_same_directory_replaces_it(tmp_path):
    m = Regressor()
    m.loss(X, Y)
    tf.saved_model.save(m, str(tmp_path))
    m.w.assign([[2.0], [3.0]])
    tf.saved_model.save(m, str(tmp_path))
    assert tf.saved_model.load(str(tmp_path)).w.numpy().tolist() == [[2.0], [3.0]]


def test_saved_graphs_are_the_irs_json(tmp_path):
    """A saved graph file is the IR codec's JSON (slices with Ellipsis included)."""
    import json

    from tapeflow.ir.codec import decode
    from tapeflow.ir.graph import print_graph

    @tf.function(input_signature=[tf.TensorSpec([2, 3, 4])])
    def f(x):
        return x[1:, ..., None, 0] * 2.0

    tf.saved_model.save(f, str(tmp_path))
    g = decode(json.loads((tmp_path / "graphs" / "0.json").read_text()))
    assert print_graph(g) == print_graph(f.get_concrete_function().graph)
    assert "Ellipsis" in print_graph(g)


def test_a_variable_only_a_function_captures_is_restored_and_trainable(tmp_path):
    outside = tf.Variable(3.0, name="outside")

    class UsesGlobal(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([])])
        def f(self, x):
            return outside * x

    tf.saved_model.save(UsesGlobal(), str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    assert [v.name for v in loaded.variables] == ["outside:0"]
    with tf.GradientTape() as t:
        y = loaded.f(tf.constant(2.0))
    (g,) = t.gradient(y, loaded.trainable_variables)
    assert float(y) == 6.0 and float(g) == 2.0
    loaded.variables[0].assign(5.0)
    assert float(loaded.f(tf.constant(2.0))) == 10.0 and float(outside.numpy()) == 3.0


def test_loaded_programs_run_compiled_under_nested_tapes(tmp_path, monkeypatch):
    """The Numba path: forward, backward and the backward's backward are compiled programs."""
    monkeypatch.setenv("TAPEFLOW_CACHE_DIR", str(tmp_path / "cache"))

    class SinX(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([3])])
        def f(self, x):
            return tf.reduce_sum(tf.sin(x) * x)

    tf.saved_model.save(SinX(), str(tmp_path / "p"))
    tf.set_backend("numba")   # the autouse fixture restores the numpy backend
    loaded = tf.saved_model.load(str(tmp_path / "p"))
    x = tf.constant([0.5, -1.0, 2.0])
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = loaded.f(x)
        g = t1.gradient(y, x)
    h = t2.gradient(g, x)
    xv = x.numpy().astype(np.float64)
    np.testing.assert_allclose(float(y), np.sum(np.sin(xv) * xv), rtol=1e-6)
    np.testing.assert_allclose(g.numpy(), np.sin(xv) + xv * np.cos(xv), rtol=1e-5)
    np.testing.assert_allclose(h.numpy(), 2 * np.cos(xv) - xv * np.sin(xv), rtol=1e-5)
    concrete = loaded.f.get_concrete_function(x)
    forward, backward, _ = concrete.tape_pair()
    for program in (concrete.program, forward.program, backward.program):
        assert type(program).__name__ == "Program" and program.fallback is None


class Looper(tf.Module):
    """Control flow: a Python `if` on a tensor (an If node) and a while_loop (a While node)."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable([0.5, -0.25], name="w")

    @tf.function(input_signature=[tf.TensorSpec([2]), tf.TensorSpec([], tf.int32)])
    def __call__(self, x, n):
        s = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, tf.tanh(s * self.w + x)), (0, x))[1]
        if tf.reduce_sum(s) > 0:
            return tf.reduce_sum(s * s)
        return tf.reduce_sum(s)


def test_control_flow_graphs_round_trip_with_their_gradients(tmp_path):
    m = Looper()
    tf.saved_model.save(m, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    for xv in ([1.0, 2.0], [-1.0, -3.0]):
        x = tf.constant(xv)
        got = []
        for obj, w in ((m, m.w), (loaded, loaded.w)):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = obj(x, tf.constant(3))
            got.append([y.numpy()] + [g.numpy() for g in tape.gradient(y, [x, w])])
        for a, b in zip(*got, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6)
