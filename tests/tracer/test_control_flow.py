"""Control flow inside tapeflow.function: Python `if` on tensors, tf.cond, tf.while_loop.

Every traced result is checked against the same Python code run eagerly (the reference),
gradients also against central finite differences in float64.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.tracer import TracingError

HERE = __file__


def grads(fn, *xs, order=1):
    """fn(*xs) and its gradients w.r.t. every x (second order: gradients of the gradients' sum)."""
    xs = [tf.constant(x) for x in xs]
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([x for x in xs if x.dtype.is_floating])
        with tf.GradientTape() as inner:
            inner.watch([x for x in xs if x.dtype.is_floating])
            y = fn(*xs)
        g = inner.gradient(y, xs)
    if order == 1:
        return y, g
    total = tf.add_n([a for a in g if a is not None])
    return y, outer.gradient(total, xs)


def numeric(fn, xs, eps=1e-6):
    out = []
    for i, x in enumerate(xs):
        d = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            hi, lo = [a.copy() for a in xs], [a.copy() for a in xs]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            d[idx] = (float(fn(*map(tf.constant, hi))) - float(fn(*map(tf.constant, lo)))) / (2 * eps)
        out.append(d)
    return out


def nested_ifs(x, y):
    if tf.reduce_sum(x) > 0:
        if y > 1.0:
            return tf.reduce_sum(x * y)            # early return on one path only
        z = tf.reduce_sum(tf.sin(x)) * y
    else:
        z = y * y + tf.reduce_sum(x)
    return z + 1.0


@pytest.mark.parametrize("x, y", [([1.0, 2.0], 3.0), ([1.0, 2.0], 0.5), ([-1.0, -2.0], 2.0)])
def test_python_if_follows_the_value_at_every_call_with_one_trace(x, y):
    f = tf.function(nested_ifs)
    for xs, ys in [(x, y), ([-a for a in x], y), (x, -y)]:
        a, b = np.array(xs), np.float64(ys)
        got_y, got_g = grads(f, a, b)
        want_y, want_g = grads(nested_ifs, a, b)
        assert float(got_y) == pytest.approx(float(want_y))
        for g, w, n in zip(got_g, want_g, numeric(nested_ifs, [a, np.array(b)])):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)
            np.testing.assert_allclose(g.numpy(), n, rtol=1e-6, atol=1e-8)
    assert f.experimental_get_tracing_count() == 1


def test_python_if_second_order_matches_eager():
    def h(x):
        if x > 0:
            return x * x * x
        return tf.sin(x)
    f = tf.function(h)
    for v in (2.0, -0.5):
        got = grads(f, np.float64(v), order=2)[1][0]
        want = grads(h, np.float64(v), order=2)[1][0]
        assert float(got) == pytest.approx(float(want))


def test_untaken_branch_runs_nothing_so_its_gradient_is_not_nan():
    """tf.where evaluates both sides and gives NaN here; an `if` runs only the taken side."""
    @tf.function
    def f(x):
        if x > 0:
            return tf.sqrt(x)
        return 0.0 * x
    y, (g,) = grads(f, np.float64(-1.0))
    assert float(y) == 0.0 and float(g) == 0.0


def test_if_assigning_a_variable_in_one_branch_writes_back_only_when_taken():
    v = tf.Variable(1.0)

    @tf.function
    def f(x):
        if x > 0:
            v.assign_add(x)
        return v * 2.0

    assert float(f(tf.constant(2.0))) == 6.0 and float(v) == 3.0
    assert float(f(tf.constant(-5.0))) == 6.0 and float(v) == 3.0
    assert float(f(tf.constant(1.0))) == 8.0 and float(v) == 4.0


def test_branches_returning_different_shapes_raise_naming_the_if():
    def body(x):
        if x[0] > 0:
            return x
        return x[:1]
    with pytest.raises(TracingError) as e:
        tf.function(body)(tf.constant([1.0, 2.0]))
    assert "if x[0] > 0" in str(e.value) and "float32[1], float32[2]" in str(e.value)


def test_truth_value_of_a_vector_raises_naming_the_line():
    def body(x):
        if x > 0:
            return x
        return -x
    with pytest.raises(TracingError) as e:
        tf.function(body)(tf.constant([1.0, 2.0]))
    assert f"{HERE}:{body.__code__.co_firstlineno + 1}" in str(e.value) and "scalar" in str(e.value)


# -- tf.cond ------------------------------------------------------------------------------------

def cond_fn(x, w):
    return tf.cond(tf.reduce_sum(x) > 1.0,
                   lambda: tf.reduce_sum(tf.tanh(x * w)),
                   lambda: tf.reduce_sum(x * x) * 3.0)


@pytest.mark.parametrize("x", [[0.5, 1.0], [0.1, 0.2]])
def test_cond_matches_eager_and_finite_differences(x):
    a, w = np.array(x), np.array([2.0, -1.0])
    got_y, got_g = grads(tf.function(cond_fn), a, w)
    want_y, want_g = grads(cond_fn, a, w)
    assert float(got_y) == pytest.approx(float(want_y))
    num = numeric(cond_fn, [a, w])
    for k, (g, n) in enumerate(zip(got_g, num)):
        if want_g[k] is None:
            # eagerly only the taken branch ran: w unconnected is None; through the If it is zeros
            assert np.all(g.numpy() == 0) and np.all(n == 0)
        else:
            np.testing.assert_allclose(g.numpy(), want_g[k].numpy(), rtol=1e-12)
            np.testing.assert_allclose(g.numpy(), n, rtol=1e-6, atol=1e-8)


def test_cond_with_mismatched_branches_raises():
    f = tf.function(lambda x: tf.cond(x > 0, lambda: x, lambda: (x, x)))
    with pytest.raises(TracingError, match="different structures"):
        f(tf.constant(1.0))


def test_cond_eagerly_calls_only_the_taken_branch():
    calls = []
    out = tf.cond(tf.constant(True), lambda: calls.append("t") or 1, lambda: calls.append("f") or 2)
    assert out == 1 and calls == ["t"]


# -- tf.while_loop ------------------------------------------------------------------------------

def power_loop(x, n):
    return tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * x), (0, tf.ones_like(x)))[1]


@pytest.mark.parametrize("n", [0, 1, 4])
def test_while_loop_values_and_gradients_to_second_order(n):
    f = tf.function(power_loop)
    x = np.array([1.5, -2.0])
    y, (g1, _) = grads(f, x, np.int32(n))
    np.testing.assert_allclose(y.numpy(), x ** n)
    np.testing.assert_allclose(g1.numpy(), n * x ** (n - 1) if n else 0 * x)
    _, (g2, _) = grads(f, x, np.int32(n), order=2)
    np.testing.assert_allclose(g2.numpy(), n * (n - 1) * x ** (n - 2) if n > 1 else 0 * x)
    eager_y = power_loop(tf.constant(x), n)
    np.testing.assert_allclose(eager_y.numpy(), y.numpy())


def test_while_loop_with_a_captured_weight_and_maximum_iterations():
    def f(x, w):
        return tf.while_loop(lambda s: tf.reduce_sum(s) < 100.0, lambda s: tf.tanh(s) * w + s,
                             [x], maximum_iterations=3)[0]
    x, w = np.array([0.3, 0.7]), np.array([1.2, 0.9])
    y, g = grads(lambda a, b: tf.reduce_sum(tf.function(f)(a, b)), x, w)
    want_y, want_g = grads(lambda a, b: tf.reduce_sum(f(a, b)), x, w)
    assert float(y) == pytest.approx(float(want_y))
    num = numeric(lambda a, b: tf.reduce_sum(f(a, b)), [x, w])
    for got, want, n in zip(g, want_g, num):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
        np.testing.assert_allclose(got.numpy(), n, rtol=1e-6)


def test_while_loop_body_changing_a_shape_raises_naming_the_line():
    f = tf.function(lambda x: tf.while_loop(lambda s: tf.reduce_sum(s) < 10.0,
                                            lambda s: tf.concat([s, s], 0), [x]))
    with pytest.raises(TracingError, match="changes loop variable 0 from float32\\[2\\]"):
        f(tf.constant([1.0, 2.0]))


def test_python_while_loop_over_python_values_still_unrolls():
    @tf.function
    def f(x):
        i = 0
        while i < 3:
            x = x * 2.0
            i += 1
        return x
    assert float(f(tf.constant(1.5))) == 12.0


def test_while_loop_assigning_variables_carries_them_as_loop_variables():
    total, steps = tf.Variable(0.0), tf.Variable(0)

    def f(x):
        def body(s):
            total.assign_add(s)
            steps.assign_add(1)
            return [s * 2.0]
        return tf.while_loop(lambda s: total < 10.0, body, [x])[0]

    out = tf.function(f)(tf.constant(1.0))     # total: 1, 3, 7, 15 -> four steps
    assert float(out) == 16.0 and float(total) == 15.0 and int(steps) == 4
    total.assign(0.0)
    steps.assign(0)
    assert float(f(tf.constant(1.0))) == 16.0 and float(total) == 15.0 and int(steps) == 4


def test_while_loop_condition_assigning_a_variable_raises_instead_of_looping_forever():
    counter = tf.Variable(0.0)
    f = tf.function(lambda x: tf.while_loop(lambda s: counter.assign_add(1.0) < 3.0,
                                            lambda s: [s * 2.0], [x])[0])
    with pytest.raises(TracingError, match="condition of a while loop assigns a variable"):
        f(tf.constant(1.0))
