"""Beyond TensorFlow: the tape names why a gradient is None (the seeds' four causes)."""
import warnings

import numpy as np
import pytest

import tapeflow as tf


def test_cause_replaced_variable_with_tensor():
    x = tf.Variable(2.0)
    x = x + 1  # should have been x.assign_add(1)
    with tf.GradientTape() as tape:
        y = x + 1
    assert tape.gradient(y, x) is None
    why = tape.explain(y, x)
    assert "is a Tensor, not a Variable" in why and "assign_add" in why


def test_cause_calculation_left_tapeflow_names_the_line():
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        x2 = x ** 2
        y = np.mean(x2, axis=0)  # the line the explanation must name
        y = tf.reduce_mean(y, axis=0)
    assert tape.gradient(y, x) is None
    why = tape.explain(y, x)
    assert "NumPy" in why and "test_explain.py" in why and "np.mean(x2, axis=0)" in why


def test_cause_integer_dtype():
    x = tf.Variable([[2, 2], [2, 2]])
    with tf.GradientTape() as tape:
        y = tf.cast(x, tf.float32)
        y = tf.reduce_sum(y)
    assert tape.gradient(y, x) is None
    assert "dtype int32" in tape.explain(y, x)


def test_cause_integer_cast_on_the_path_names_the_op():
    f = tf.constant(1.5)
    with tf.GradientTape() as tape:
        tape.watch(f)
        i = tf.cast(f, tf.int32)
        y = tf.cast(i, tf.float32) * 2.0
    assert tape.gradient(y, f) is None
    why = tape.explain(y, f)
    assert "integer" in why and "Cast" in why and "tf.cast(f, tf.int32)" in why


def test_cause_no_path():
    x, y = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        z = y * y
    assert tape.gradient(z, x) is None
    assert "not read inside the tape" in tape.explain(z, x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        z = y * y
    assert "does not depend on" in tape.explain(z, x)


def test_non_trainable_and_stop_gradient_and_connected():
    x = tf.Variable(2.0, trainable=False)
    w = tf.Variable(1.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * w
        z = tf.stop_gradient(w * 2.0) + x
    assert "not trainable" in tape.explain(y, x)
    assert "stop_gradient" in tape.explain(z, w)
    assert "connected" in tape.explain(y, w)


def test_debugging_switch_warns_with_the_cause():
    x = tf.Variable(2.0)
    x = x + 1
    tf.debugging.explain_none_gradients(True)
    try:
        with tf.GradientTape() as tape:
            y = x * 2.0
        with pytest.warns(tf.debugging.NoneGradientWarning, match="not a Variable"):
            assert tape.gradient(y, x) is None
    finally:
        tf.debugging.explain_none_gradients(False)
    with tf.GradientTape() as tape:
        y = x * 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tape.gradient(y, x) is None
