"""Python ``for`` inside tapeflow.function: over tf.range (tensor or Python bounds, negative
steps), a tensor's rows, enumerate/zip of those -> one While node; Python iterables unrolled.
Each function is checked against the same code run eagerly."""
import numpy as np
import pytest

import tapeflow as tf


def ops_of(fn, *args):
    return [node.op for node in fn.get_concrete_function(*args).graph.nodes]


def same_as_eager(fn, *args):
    got = tf.function(fn)(*args)
    want = fn(*args)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12)
    return got


def range_sum(x, n):
    s = tf.zeros_like(x)
    for i in tf.range(n):
        s = s + x * tf.cast(i, x.dtype)
    return s


@pytest.mark.parametrize("n", [0, 1, 5])
def test_for_over_tf_range_of_a_tensor_is_one_while_node(n):
    x, nt = tf.constant([1.0, 2.0]), tf.constant(n)
    same_as_eager(range_sum, x, nt)
    assert ops_of(tf.function(range_sum), x, nt).count("While") == 1


def test_for_over_range_of_a_shape_and_gradient():
    def f(x):
        s = tf.constant(0.0, dtype=x.dtype)
        for i in tf.range(tf.shape(x)[0]):
            s = s + tf.reduce_sum(tf.gather(x, i) ** 2) * tf.cast(i + 1, x.dtype)
        return s
    x = tf.constant(np.arange(6.0).reshape(3, 2))
    same_as_eager(f, x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.function(f)(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(),
                               2 * x.numpy() * np.arange(1, 4)[:, None])


@pytest.mark.parametrize("start,limit,delta", [(5, 0, -2), (0, 7, 3), (2, 2, 1), (0, 5, -1),
                                               (10, -3, -4)])
def test_for_over_tf_range_with_tensor_bounds_and_negative_steps(start, limit, delta):
    def f(a, b, d):
        out = tf.constant(0)
        count = 0
        for i in tf.range(a, b, d):
            out = out * 10 + i
            count += 1
        return out * 100 + count
    args = [tf.constant(v) for v in (start, limit, delta)]
    want = 0
    for i in range(start, limit, delta):
        want = want * 10 + i
    assert int(tf.function(f)(*args)) == want * 100 + len(range(start, limit, delta))
    assert int(f(*args)) == want * 100 + len(range(start, limit, delta))


def test_python_bounds_of_tf_range_make_a_while_too_and_builtin_range_of_a_tensor():
    def f(x, n):
        s = x
        for i in tf.range(4):
            s = s * 2.0
        for i in range(n):
            s = s + 1.0
        return s
    x, n = tf.constant([1.0]), tf.constant(3)
    assert float(tf.function(f)(x, n)[0]) == 19.0
    assert ops_of(tf.function(f), x, n).count("While") == 2


def test_python_range_stays_an_unrolled_python_loop():
    def f(x):
        for i in range(3):
            x = x * 2.0 + i
        return x
    x = tf.constant([1.0])
    same_as_eager(f, x)
    assert "While" not in ops_of(tf.function(f), x)


def test_for_over_rows_enumerate_zip_with_break_continue_else():
    def f(x, n):
        total = tf.constant(0.0, dtype=x.dtype)
        for k, row in enumerate(x):
            if k == 1:
                continue
            total = total + tf.reduce_sum(row) * tf.cast(k, x.dtype)
        for i, row in zip(tf.range(n), x):
            if tf.reduce_sum(row) > 10.0:
                break
            total = total + tf.cast(i, x.dtype)
        else:
            total = total + 1000.0
        for row in x:
            total = total - tf.reduce_max(row)
        return total
    x = tf.constant(np.arange(12.0).reshape(4, 3))
    for n in (1, 3, 10):
        same_as_eager(f, x, tf.constant(n))
    assert ops_of(tf.function(f), x, tf.constant(3)).count("While") == 3


def test_for_over_a_python_list_with_break_and_else_keeps_python_semantics():
    def f(x):
        seen = []
        for w in [1.0, 2.0, 3.0, 4.0]:
            if w > 2.5:
                break
            seen.append(w)
            x = x * w
        else:
            x = x * 0.0
        for a, b in [(1, 2), (3, 4)]:
            x = x + a * b
        return x, len(seen)
    x = tf.constant([1.5])
    got, n = tf.function(f)(x)
    assert float(got[0]) == 1.5 * 2.0 + 14 and n == 2


def test_gradient_of_a_for_loop_matches_the_eager_loop_second_order_too():
    def f(x, w):
        h = x
        for t in tf.range(6):
            h = tf.tanh(h * w + tf.cast(t, x.dtype) * 0.1)
        return tf.reduce_sum(h * h)
    x, w = tf.constant([0.3, -0.2]), tf.constant([0.9, 1.1])

    def grads(fn):
        with tf.GradientTape(persistent=True) as outer:
            outer.watch([x, w])
            with tf.GradientTape() as inner:
                inner.watch([x, w])
                y = fn(x, w)
            g = inner.gradient(y, [x, w])
            s = tf.reduce_sum(g[0]) + tf.reduce_sum(g[1])
        return g + outer.gradient(s, [x, w])
    for got, want in zip(grads(tf.function(f)), grads(f), strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
