"""boolean_mask, one-argument where, unique(_with_counts), dynamic_partition/stitch and
searchsorted against what TF 2.21 returns for the same calls; searchsorted traced too."""
import numpy as np
import pytest

import tapeflow as tf


def test_values_are_tensorflows():
    assert tf.searchsorted([[1, 3, 5, 7]], [[3, 6, 9, 0]]).numpy().tolist() == [[1, 3, 4, 0]]
    assert tf.searchsorted([1, 3, 3, 7], [3, 4], side="right").numpy().tolist() == [3, 3]
    t = tf.constant([[1, 2], [3, 4], [5, 6]])
    assert tf.boolean_mask(t, [True, False, True]).numpy().tolist() == [[1, 2], [5, 6]]
    assert tf.boolean_mask(t[:2], [[True, False], [False, True]]).numpy().tolist() == [1, 4]
    assert tf.boolean_mask(t[:2], [False, True], axis=1).numpy().tolist() == [[2], [4]]
    w = tf.where([[True, False], [False, True]])
    assert w.numpy().tolist() == [[0, 0], [1, 1]] and w.dtype == tf.int64
    u = tf.unique([1, 1, 2, 4, 4, 4, 7, 8, 8])
    assert (u.y.numpy().tolist(), u.idx.numpy().tolist()) == ([1, 2, 4, 7, 8], [0, 0, 1, 2, 2, 2, 3, 4, 4])
    u = tf.unique_with_counts([3, 1, 3])
    assert (u.y.numpy().tolist(), u.idx.numpy().tolist(), u.count.numpy().tolist()) == ([3, 1], [0, 1, 0], [2, 1])
    parts = tf.dynamic_partition([10, 20, 30, 40], [0, 1, 0, 2], 3)
    assert [p.numpy().tolist() for p in parts] == [[10, 30], [20], [40]]
    assert tf.dynamic_stitch([[0, 2], [1, 2]], [[1.0, 2.0], [3.0, 4.0]]).numpy().tolist() == [1.0, 3.0, 4.0]
    assert tf.where([True, False], [1, 2], [10, 20]).numpy().tolist() == [1, 20]


def test_gradients_flow_to_the_data():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.boolean_mask(x, [[True, False], [True, True]]) * tf.constant([1.0, 2.0, 3.0]))
    assert tape.gradient(y, x).numpy().tolist() == [[1.0, 0.0], [2.0, 3.0]]


def test_searchsorted_traced_and_refusals(numpy_backend):
    f = tf.function(lambda s, v: tf.searchsorted(s, v))
    assert f(tf.constant([1.0, 3.0, 5.0]), tf.constant([4.0, 0.0])).numpy().tolist() == [2, 0]
    g = tf.function(lambda x, m: tf.boolean_mask(x, m))
    with pytest.raises(ValueError, match="known while tracing"):
        g(tf.constant([1.0, 2.0]), tf.constant([True, False]))
