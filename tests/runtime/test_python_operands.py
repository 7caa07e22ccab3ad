"""Ops whose inputs share a dtype, called with Python (or NumPy) values only: TensorFlow's
``args_to_matching_eager`` takes the first tensor's dtype, or with no tensor the first
value's as converted alone, and converts the others to it. Expected values are TensorFlow
2.21's answers."""
import numpy as np
import pytest

import tapeflow as tf


@pytest.mark.parametrize("call, dtype, values", [
    (lambda: tf.maximum(0., [1, -1]), tf.float32, [1., 0.]),       # TF: float32 [1., 0.]
    (lambda: tf.maximum(0., 1), tf.float32, 1.),                   # TF: float32 1.0
    (lambda: tf.add(0.5, [1, -1]), tf.float32, [1.5, -0.5]),       # TF: float32 [1.5, -0.5]
    (lambda: tf.add(1, 2), tf.int32, 3),                           # TF: int32 3
    (lambda: tf.add([], 1.), tf.float32, []),                      # TF: float32 []
    (lambda: tf.add(np.float64(1.), 0.5), tf.float64, 1.5),        # TF: float64 1.5
    (lambda: tf.add(0.5, np.float64(1.)), tf.float32, 1.5),        # TF: float32 1.5
    (lambda: tf.add(0.5, np.array([1, 2])), tf.float32, [1.5, 2.5]),  # TF: float32
    (lambda: tf.maximum(1, np.array([1.5])), tf.int32, [1]),       # TF: int32 [1] (NumPy cast)
    (lambda: tf.maximum(tf.constant(0.5), np.array([1, 2])), tf.float32, [1., 2.]),
    (lambda: tf.where(True, 1., [1, 2]), tf.float32, [1., 1.]),    # TF: float32 [1., 1.]
    (lambda: tf.matmul([[1.]], [[2]]), tf.float32, [[2.]]),        # TF: float32 [[2.]]
])
def test_first_value_sets_the_dtype(call, dtype, values):
    t = call()
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), np.asarray(values, dtype=t.numpy().dtype))


@pytest.mark.parametrize("call", [
    lambda: tf.maximum(1, 0.5),            # TF: TypeError Cannot convert 0.5 to EagerTensor of dtype int32
    lambda: tf.multiply(2, [0.5]),         # TF: TypeError
    lambda: tf.pow(2, 0.5),                # TF: TypeError
    lambda: tf.maximum(np.array([1, 2]), 0.5),  # TF: TypeError (int64)
    lambda: tf.maximum(True, 1),           # TF: TypeError (bool)
])
def test_later_value_not_convertible_is_a_type_error(call):
    with pytest.raises(TypeError, match="Cannot convert"):
        call()


def test_function_called_with_a_python_list(numpy_backend):
    @tf.function
    def f(x):
        return tf.maximum(0., x)

    t = f([1, -1])  # TF: float32 [1., 0.]
    assert t.dtype == tf.float32
    np.testing.assert_array_equal(t.numpy(), np.float32([1., 0.]))


def test_python_operands_inside_a_function(numpy_backend):
    @tf.function
    def f():
        return tf.add(0.5, [1, -1]), tf.maximum(0., 1)

    a, b = f()  # TF: float32 [1.5, -0.5], float32 1.0
    assert a.dtype == b.dtype == tf.float32
    np.testing.assert_array_equal(a.numpy(), np.float32([1.5, -0.5]))
    assert b.numpy() == np.float32(1.)
