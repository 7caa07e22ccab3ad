"""`return` inside `if` and loops, converted as AutoGraph does (tracer/return_rewrite.py): a
flag and a value, so an `if` on a tensor whose branches return is one If node.

Values and gradients (zeros, not None, for an input the taken branch does not use) are
TensorFlow 2.21's. TensorFlow rejects a `return` inside a loop on a tensor and an `if` on a
tensor where only one side returns; tapeflow traces those per path, as before.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.testing import check_gradients
from tapeflow.tracer import convert
from tapeflow.tracer.context import DecisionLimitError


def ops_of(fn, *args):
    return [node.op for node in fn.get_concrete_function(*args).graph.nodes]


def early(x):
    if tf.reduce_sum(x) > 0:
        return x * 2.0
    return tf.ones_like(x)


def chain(x, y):
    if tf.reduce_sum(x) > 0:
        return x * 2.0
    elif tf.reduce_sum(x) > -5:
        return x * y
    else:
        return -x


def test_return_in_a_branch_is_one_if_node_with_tensorflows_values_and_gradients():
    f = tf.function(early)
    assert "1 of 1 `if`" in convert.status(early)
    for v, want, grad in (([1.0, 2.0], [2, 4], [2, 2]), ([-1.0, -2.0], [1, 1], [0, 0])):
        x = tf.constant(v)
        with tf.GradientTape() as t:
            t.watch(x)
            y = f(x)
        np.testing.assert_array_equal(y.numpy(), want)
        np.testing.assert_array_equal(t.gradient(y, x).numpy(), grad)    # zeros, not None
    assert ops_of(f, tf.constant([1.0, 2.0])).count("If") == 1
    assert f.experimental_get_tracing_count() == 1


def test_elif_chain_of_returns_is_nested_ifs():
    f = tf.function(chain)
    y0 = tf.constant(3.0)
    for v, want, gx, gy in (([1.0, 2.0], [2, 4], [2, 2], 0.0), ([-1.0, -2.0], [-3, -6], [3, 3], -3.0),
                            ([-4.0, -4.0], [4, 4], [-1, -1], 0.0)):
        x = tf.constant(v)
        with tf.GradientTape() as t:
            t.watch([x, y0])
            y = f(x, y0)
        dx, dy = t.gradient(y, [x, y0])
        np.testing.assert_array_equal(y.numpy(), want)
        np.testing.assert_array_equal(dx.numpy(), gx)
        assert float(dy) == gy
    assert ops_of(f, tf.constant([1.0, 2.0]), y0).count("If") == 1   # the elif's: in its else
    assert f.experimental_get_tracing_count() == 1
    check_gradients(tf.function(chain), np.array([-1.0, -2.0]), np.array(3.0))
    check_gradients(tf.function(chain), np.array([1.0, 0.5]), np.array(3.0))


def test_return_after_other_statements_in_a_branch_with_an_else():
    def g(x):
        if tf.reduce_sum(x) > 0:
            y = tf.sin(x) * 2.0
            return y * x
        else:
            z = 3.0
        w = x + z
        return w * w
    f = tf.function(g)
    for v in ([1.0, 2.0], [-1.0, -2.0]):
        np.testing.assert_allclose(f(tf.constant(v)).numpy(), g(tf.constant(v)).numpy())
        check_gradients(f, np.array(v))
    assert "If" in ops_of(f, tf.constant([1.0, 2.0]))


def test_return_in_a_python_loop_has_python_semantics():
    def g(x, n):
        for i in range(n):
            x = x * 2.0
            if i == 1:
                return x
        return -x
    f = tf.function(g)
    np.testing.assert_array_equal(f(tf.constant([1.0]), 3).numpy(), [4.0])
    np.testing.assert_array_equal(f(tf.constant([1.0]), 1).numpy(), [-2.0])


def test_return_in_nested_loops_and_a_nested_function():
    def g(x):
        def inner(v):
            if tf.reduce_sum(v) > 1:
                return v * 3.0
            return v
        for i in range(3):
            for j in range(3):
                if i * j == 2:
                    return inner(x) + float(i)
                x = x + 0.25
        return x
    f = tf.function(g)
    for v in ([0.1], [2.0]):
        np.testing.assert_allclose(f(tf.constant(v)).numpy(), g(tf.constant(v)).numpy())


def test_return_inside_a_loop_on_a_tensor_runs_per_path_and_says_tensorflow_rejects_it():
    def bounded(x):
        while x > 0:                       # returns after one step: two paths
            x = x * 2.0
            return x
        return x

    def unbounded(x):
        while x > 0:
            x = x - 1.0
            if x > 100.0:
                return x
        return x
    f = tf.function(bounded)
    for v in (1.5, -1.5):
        assert float(f(tf.constant(v))) == float(bounded(tf.constant(v)))
    with pytest.raises(DecisionLimitError, match="has a `return`.*cannot be placed inside this "
                                                 "TensorFlow loop"):
        tf.function(unbounded)(tf.constant(3.0))


def test_one_side_returning_falls_back_to_per_path_tracing():
    """TensorFlow raises "the else branch must also have a return statement"; per path, the
    returning path returns its value."""
    def g(x):
        if tf.reduce_sum(x) > 0:
            if tf.reduce_sum(x) > 2:
                return x * 5.0
            x = x + 1.0
        return x * x
    f = tf.function(g)
    for v in ([1.0, 2.0], [0.5, 0.2], [-1.0, -2.0]):
        np.testing.assert_allclose(f(tf.constant(v)).numpy(), g(tf.constant(v)).numpy())
    assert f.experimental_get_tracing_count() == 1
