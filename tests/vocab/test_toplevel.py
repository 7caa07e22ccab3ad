"""Top-level tf.* helpers against what TF 2.21 returns for the same calls, eagerly and traced."""
import numpy as np
import pytest

import tapeflow as tf


def test_values_are_tensorflows():
    assert tf.repeat(tf.constant([[1, 2], [3, 4]]), [1, 2], axis=0).numpy().tolist() == [[1, 2], [3, 4], [3, 4]]
    assert tf.repeat([1, 2], 2).numpy().tolist() == [1, 1, 2, 2]
    assert tf.sequence_mask([1, 3], 4).numpy().tolist() == [[True, False, False, False], [True, True, True, False]]
    assert tf.sequence_mask([[1], [2]]).numpy().tolist() == [[[True, False]], [[True, True]]]
    assert tf.unravel_index([5, 7], [3, 4]).numpy().tolist() == [[1, 1], [1, 3]]
    v = tf.constant([-1.0, 0.0, 1.5, 2.0, 5.0])
    assert tf.histogram_fixed_width(v, [0.0, 5.0], nbins=5).numpy().tolist() == [2, 1, 1, 0, 1]
    bins = tf.histogram_fixed_width_bins(tf.constant([[-1.0, 0.0, 1.5], [2.0, 5.0, 4.99]]), [0.0, 5.0], nbins=5)
    assert bins.numpy().tolist() == [[0, 0, 1], [2, 4, 4]]
    assert tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3])).as_list() == [2, 3]
    assert tf.broadcast_dynamic_shape([2, 1], [3]).numpy().tolist() == [2, 3]
    with tf.name_scope("outer"):
        assert tf.get_current_name_scope() == "outer"
    assert tf.get_static_value(tf.constant([1, 2])).tolist() == [1, 2] and tf.get_static_value(3) == 3
    assert tf.is_tensor(tf.Variable(1.0)) and not tf.is_tensor(1.0) and not tf.inside_function()
    assert (tf.half, tf.double) == (tf.float16, tf.float64)
    assert [s.numpy().tolist() for s in tf.shape_n([tf.zeros([2, 3]), tf.zeros([4])])] == [[2, 3], [4]]
    with pytest.raises(ValueError):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.unravel_index([12], [3, 4])


def test_repeat_gradient_and_traced(numpy_backend):
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(tf.repeat(x, [3, 1]) * tf.constant([1.0, 2.0, 3.0, 4.0]))
    assert t.gradient(y, x).numpy().tolist() == [6.0, 4.0]     # TF 2.21's
    f = tf.function(lambda x: (tf.inside_function(), tf.is_symbolic_tensor(x),
                               tf.get_static_value(x), tf.sequence_mask(x, 3)))
    inside, symbolic, static, mask = f(tf.constant([1, 2]))
    assert inside and symbolic and static is None
    np.testing.assert_array_equal(mask, [[True, False, False], [True, True, False]])
