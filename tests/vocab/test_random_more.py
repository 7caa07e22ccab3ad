"""tf.random.categorical, shuffle, gamma and poisson: TF's shapes, dtypes and distributions
(moments within sampling error; TF's own stateful streams are not reproduced, see the report)."""
import numpy as np
import pytest

import tapeflow as tf


def test_shapes_dtypes_and_moments():
    c = tf.random.categorical(tf.math.log([[0.2, 0.8], [0.9, 0.1]]), 20000, seed=3)
    assert c.dtype == tf.int64 and c.shape == (2, 20000)
    np.testing.assert_allclose(c.numpy().mean(axis=1), [0.8, 0.1], atol=0.01)
    assert tf.random.categorical([[0.0, 0.0]], 2, dtype=tf.int32, seed=1).dtype == tf.int32
    g = tf.random.gamma([20000], alpha=[1.0, 3.0], beta=2.0, seed=1)
    assert g.shape == (20000, 2) and g.dtype == tf.float32
    np.testing.assert_allclose(g.numpy().mean(axis=0), [0.5, 1.5], rtol=0.03)
    p = tf.random.poisson([20000], [2.0, 5.0], seed=1)
    assert p.shape == (20000, 2) and p.dtype == tf.float32
    np.testing.assert_allclose(p.numpy().mean(axis=0), [2.0, 5.0], rtol=0.03)
    s = tf.random.shuffle(tf.constant([[1, 2], [3, 4], [5, 6]]), seed=2).numpy().tolist()
    assert sorted(s) == [[1, 2], [3, 4], [5, 6]]
    a = tf.random.shuffle(tf.range(50), seed=5).numpy()
    b = tf.random.shuffle(tf.range(50), seed=5).numpy()
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError):
        tf.random.categorical([0.0, 1.0], 2)
