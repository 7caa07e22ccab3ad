"""bincount, confusion_matrix, invert_permutation, the sorted segment reductions, and
recompute_grad / grad_pass_through, against what TF 2.21 returns for the same calls."""
import numpy as np
import pytest

import tapeflow as tf


def test_counting_values_are_tensorflows():
    M = tf.math
    assert M.invert_permutation([2, 0, 1]).numpy().tolist() == [1, 2, 0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="0 is duplicated"):
        M.invert_permutation([0, 0])
    assert M.confusion_matrix([1, 2, 4], [2, 2, 4]).numpy().tolist() == [
        [0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1]]
    cm = M.confusion_matrix([1, 2], [2, 2], num_classes=3, weights=[0.5, 2.0], dtype=tf.float32)
    assert cm.numpy().tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.5], [0.0, 0.0, 2.0]]
    assert M.bincount([1, 1, 3, 0]).numpy().tolist() == [1, 2, 0, 1]
    assert M.bincount([1, 1, 3, 0], minlength=6, maxlength=3).numpy().tolist() == [1, 2, 0]
    assert M.bincount([1, 1, 3], weights=[0.5, 1.0, 2.0]).numpy().tolist() == [0.0, 1.5, 0.0, 2.0]
    assert M.bincount([1, 1, 3], binary_output=True).numpy().tolist() == [0, 1, 0, 1]
    assert M.bincount([[1, 2], [0, 0]], axis=-1).numpy().tolist() == [[0, 1, 1], [2, 0, 0]]
    data = tf.constant([1.0, 2.0, 3.0, 4.0])
    assert M.segment_sum(data, [0, 0, 2, 2]).numpy().tolist() == [3.0, 0.0, 7.0]
    assert M.segment_mean(data, [0, 0, 2, 2]).numpy().tolist() == [1.5, 0.0, 3.5]
    with pytest.raises(tf.errors.InvalidArgumentError):
        M.segment_sum(tf.constant([1.0, 2.0]), [1, 0])
    assert M.l2_normalize is tf.nn.l2_normalize and M.softmax is tf.nn.softmax


def test_gradient_wrappers():
    g = tf.recompute_grad(lambda x: tf.sin(x) * x)
    x = tf.constant(1.0, tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = g(x)
    np.testing.assert_allclose(tape.gradient(y, x), np.cos(1.0) + np.sin(1.0), rtol=1e-14)
    w = tf.Variable(3.0)
    h = tf.recompute_grad(lambda x: x * w)
    with tf.GradientTape() as tape:
        y = h(tf.constant(2.0))
    assert float(tape.gradient(y, w)) == 2.0
    v = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = tf.grad_pass_through(lambda t: tf.round(t * 1.3))(v)
    assert (float(y), float(tape.gradient(y, v))) == (3.0, 1.0)     # TF 2.21's
