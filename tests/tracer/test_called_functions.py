"""User functions called from a converted function are converted too, recursively (AutoGraph's
``converted_call``; tracer/call_rewrite.py, convert.call); library functions are called as
they are; ``tf.autograph.to_code`` shows the converted source. Each function is checked
against the same code run eagerly, gradients against finite differences."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.testing import check_gradients
from tapeflow.tracer import convert


def ops_of(fn, *args):
    return [node.op for node in fn.get_concrete_function(*args).graph.nodes]


def halve(x):
    while tf.reduce_sum(x) > 1.0:
        x = x * 0.5
    return x


def helper(x):
    if tf.reduce_sum(x) > 0:
        return halve(x)
    return -x


def top(x):
    return helper(x) * 2.0 + 1.0


class Model:
    def __init__(self, scale):
        self.scale = scale

    def step(self, x):
        for i in tf.range(3):
            x = self.squash(x) + tf.cast(i, x.dtype)
        return x

    def squash(self, x):
        if tf.reduce_sum(x) > 2.0:
            x = x * self.scale
        return tf.tanh(x)


def test_called_functions_are_converted_recursively_into_one_trace():
    f = tf.function(top)
    for v in ([4.0, 8.0], [-4.0, 8.0], [-4.0, -8.0], [0.25, 0.5]):
        x = tf.constant(v, tf.float64)
        np.testing.assert_allclose(f(x).numpy(), top(x).numpy(), rtol=1e-12)
    assert f.experimental_get_tracing_count() == 1
    assert ops_of(f, tf.constant([4.0, 8.0], tf.float64)).count("If") == 1   # the While inside


def test_gradients_through_converted_callees():
    f = tf.function(top)
    check_gradients(f, np.array([3.0, 0.5]))
    check_gradients(f, np.array([-3.0, 0.5]))


def test_methods_called_are_converted():
    m = Model(0.5)
    f = tf.function(m.step)
    for v in ([0.1, 0.2], [3.0, 2.0]):
        x = tf.constant(v, tf.float64)
        np.testing.assert_allclose(f(x).numpy(), m.step(x).numpy(), rtol=1e-12)
    assert "While" in ops_of(f, tf.constant([0.1, 0.2], tf.float64))
    check_gradients(f, np.array([0.3, 1.5]))


def test_recursive_user_function():
    def power(x, n):
        if n == 0:
            return tf.ones_like(x)
        return x * power(x, n - 1)
    f = tf.function(lambda x: power(x, 3))
    np.testing.assert_allclose(f(tf.constant([2.0])).numpy(), [8.0])
    g = tf.function(power)
    np.testing.assert_allclose(g(tf.constant([2.0]), 4).numpy(), [16.0])


def test_do_not_convert_keeps_a_callee_as_written():
    @tf.autograph.experimental.do_not_convert
    def python_only(x):
        while tf.reduce_sum(x) > 1.0:     # per path: a loop on a tensor hits the decision limit
            x = x * 0.5
        return x

    def caller(x):
        return python_only(x)
    with pytest.raises(tf.tracer.context.DecisionLimitError):
        tf.function(caller)(tf.constant([4.0, 8.0]))


def test_library_functions_are_not_converted():
    import json
    def g(x):
        s = json.dumps({"a": 1})                 # stdlib: called as it is
        return tf.reduce_sum(x) + float(np.sqrt(4.0)) + len(s)
    f = tf.function(g)
    assert float(f(tf.constant([1.0, 2.0]))) == 3.0 + 2.0 + 8
    assert not convert._user_function(json.dumps) and not convert._user_function(tf.reduce_sum)
    assert not convert._user_function(np.sqrt) and convert._user_function(halve)


def test_to_code_shows_the_converted_source():
    code = tf.autograph.to_code(tf.function(helper))
    assert code.startswith("def helper(x):")
    assert "_tfw_rt.if_stmt(" in code and "_tfw_rt.call(halve, x)" in code
    assert "_tfw_retval" in code and code.rstrip().endswith("return _tfw_retval")
    assert "_tfw_rt.while_stmt(" in tf.autograph.to_code(halve)
