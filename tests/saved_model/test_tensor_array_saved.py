"""A function with a TensorArray loop (TensorListSetItem inside a While) saves and loads: the
loaded program gives the same values and gradients, second order included, as the original
and as the eager Python loop."""
import numpy as np

import tapeflow as tf


class Recurrence(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([4, 3], tf.float64), tf.TensorSpec([], tf.int32)])
    def __call__(self, x, n):
        ta = tf.TensorArray(tf.float64, size=4)
        h = tf.zeros([3], tf.float64)
        for i in tf.range(n):
            h = tf.tanh(0.5 * h + tf.gather(x, i))
            ta = ta.write(i, h)
        return ta.stack()


def test_tensor_array_loop_saves_and_loads(tmp_path):
    m = Recurrence()
    x = tf.constant(np.linspace(-1.0, 1.0, 12).reshape(4, 3))
    n = tf.constant(3)
    tf.saved_model.save(m, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    np.testing.assert_allclose(loaded(x, n).numpy(), m(x, n).numpy(), rtol=1e-12)
    grads = []
    for fn in (m, loaded):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(fn(x, n) ** 2)
        grads.append(t.gradient(y, x).numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


class Methods(tf.Module):
    """A TensorArray written in a loop, iterated by another, read by gather/read/concat."""

    @tf.function(input_signature=[tf.TensorSpec([4, 3], tf.float64), tf.TensorSpec([], tf.int32)])
    def __call__(self, x, n):
        return methods(x, n)


def methods(x, n):
    ta = tf.TensorArray(tf.float64, size=4, element_shape=[3], clear_after_read=False)
    h = tf.zeros([3], tf.float64)
    for i in tf.range(n):
        h = tf.tanh(0.5 * h + tf.gather(x, i))
        ta = ta.write(i, h)
    s = tf.zeros([3], tf.float64)
    for e in ta:
        s = s + e * e
    return (tf.reduce_sum(ta.gather([0, 2]) ** 2) + tf.reduce_sum(s * ta.read(1))
            + tf.reduce_sum(ta.concat()))


def test_tensor_array_methods_save_and_load_to_second_order(tmp_path):
    m = Methods()
    tf.saved_model.save(m, str(tmp_path))
    graphs = "".join(p.read_text() for p in (tmp_path / "graphs").glob("*.json"))
    assert "TensorListSetItem" in graphs and "While" in graphs
    loaded = tf.saved_model.load(str(tmp_path))
    x, n = tf.constant(np.linspace(-1.0, 1.0, 12).reshape(4, 3)), tf.constant(3)
    results = []
    for fn in (methods, m, loaded):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = fn(x, n)
            g = tf.convert_to_tensor(t1.gradient(y, x))   # eager TF: gather's gradient is IndexedSlices
            s = tf.reduce_sum(g * g)
        results.append([y.numpy(), g.numpy(), tf.convert_to_tensor(t2.gradient(s, x)).numpy()])
    for got in results[1:]:
        for a, b in zip(got, results[0], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


class Grown(tf.Module):
    """A dynamic-size TensorArray grown in a loop of run-time length (leading dim None)."""

    @tf.function(input_signature=[tf.TensorSpec([6, 3], tf.float64), tf.TensorSpec([], tf.int32)])
    def __call__(self, x, n):
        ta = tf.TensorArray(tf.float64, size=0, dynamic_size=True)
        h = tf.zeros([3], tf.float64)
        for i in tf.range(n):
            h = tf.tanh(0.5 * h + tf.gather(x, i))
            ta = ta.write(i, h)
        return tf.reduce_sum(ta.stack() ** 2) + tf.cast(ta.size(), tf.float64)


def test_a_run_time_sized_tensor_array_saves_and_loads_to_second_order(tmp_path):
    m = Grown()
    tf.saved_model.save(m, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    x = tf.constant(np.linspace(-1.0, 1.0, 18).reshape(6, 3))
    for n in (0, 4):
        results = []
        for fn in (m, loaded):
            with tf.GradientTape() as t2:
                t2.watch(x)
                with tf.GradientTape() as t1:
                    t1.watch(x)
                    y = fn(x, tf.constant(n))
                g = t1.gradient(y, x)
                s = tf.reduce_sum(g * g)
            results.append([y.numpy(), g.numpy(), tf.convert_to_tensor(t2.gradient(s, x)).numpy()])
        for a, b in zip(results[1], results[0], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
        assert (results[0][0] == 0.0) == (n == 0)
