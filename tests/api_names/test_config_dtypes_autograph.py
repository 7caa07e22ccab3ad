"""tf.config's device queries, tf.dtypes' unsigned ints and saturate_cast, tf.autograph's
to_graph/trace/set_verbosity, tf.test.compute_gradient: TensorFlow 2.21's answers."""
import numpy as np
import pytest

import tapeflow as tf



def test_config_switches():
    assert tf.config.get_soft_device_placement() is True
    tf.config.set_soft_device_placement(0)
    try:
        assert tf.config.get_soft_device_placement() is False
    finally:
        tf.config.set_soft_device_placement(True)
    assert tf.config.experimental_functions_run_eagerly() is False
    tf.config.experimental_run_functions_eagerly(True)
    try:
        assert tf.config.functions_run_eagerly() is True
    finally:
        tf.config.experimental_run_functions_eagerly(False)


# TF 2.21: tf.saturate_cast
SATURATE = [
    (np.array([1.5, 300.0, -300.0], np.float32), "uint8", [1, 255, 0]),
    (np.array([1.5, 300.0, -300.0], np.float32), "int8", [1, 127, -128]),
    (np.array([70000, -5], np.int32), "int16", [32767, -5]),
    (np.array([300, -5], np.int32), "uint8", [255, 0]),
    (np.array([1e300, -1e300], np.float64), "float32", [3.4028235e+38, -3.4028235e+38]),
    (np.array([3e9, -1.0], np.float64), "int32", [2147483647, -1]),
    (np.array([3e9, -1.0], np.float32), "int32", [2147483520, -1]),
    (np.array([5000000000, -3], np.int64), "uint32", [4294967295, 0]),
    (np.array([70000.0, -70000.0], np.float32), "float16", [65504.0, -65504.0]),
    (np.array([200, 255], np.uint8), "int8", [127, 127]),
]


def test_saturate_cast_eager_and_compiled():
    for x, dt, want in SATURATE:
        got = tf.saturate_cast(tf.constant(x), dt)
        assert got.dtype == tf.as_dtype(dt) and got.numpy().tolist() == \
            np.array(want, dtype=dt).tolist(), (x, dt)

    @tf.function
    def f(a, b):
        return tf.saturate_cast(a, tf.uint8), tf.dtypes.saturate_cast(b, tf.int32)

    a, b = f(tf.constant(SATURATE[0][0]), tf.constant(SATURATE[6][0]))
    assert a.numpy().tolist() == [1, 255, 0] and b.numpy().tolist() == [2147483520, -1]

