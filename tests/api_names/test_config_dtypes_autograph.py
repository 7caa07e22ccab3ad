"""tf.config's device queries, tf.dtypes' unsigned ints and saturate_cast, tf.autograph's
to_graph/trace/set_verbosity, tf.test.compute_gradient: TensorFlow 2.21's answers."""
import numpy as np
import pytest

import tapeflow as tf


def test_config_device_queries():
    cpu = tf.config.list_physical_devices("CPU")[0]
    assert tf.config.get_visible_devices() == [cpu] and tf.config.get_visible_devices("GPU") == []
    assert tf.config.get_logical_device_configuration(cpu) is None
    assert repr(tf.config.LogicalDeviceConfiguration(memory_limit=5)) == (
        "LogicalDeviceConfiguration(memory_limit=5, experimental_priority=None, "
        "experimental_device_ordinal=None)")
    c = tf.config.LogicalDeviceConfiguration()
    tf.config.set_logical_device_configuration(cpu, [c, c])
    try:
        assert tf.config.get_logical_device_configuration(cpu) == [c, c]
        assert [d.name for d in tf.config.list_logical_devices()] == ["/device:CPU:0",
                                                                      "/device:CPU:1"]
    finally:
        tf.config.set_logical_device_configuration(cpu, None)
    assert len(tf.config.list_logical_devices()) == 1
    with pytest.raises(ValueError, match="Unrecognized device: 'x'"):
        tf.config.get_logical_device_configuration("x")
    tf.config.set_visible_devices([], "CPU")          # the CPU cannot be hidden (as TF)
    tf.config.set_visible_devices(cpu)
    assert tf.config.get_visible_devices("CPU") == [cpu]


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


def test_unsigned_dtypes():
    assert (tf.uint16.max, tf.uint32.min, tf.uint64.max) == (65535, 0, 18446744073709551615)
    assert tf.dtypes.uint32 is tf.uint32 and tf.double is tf.float64 and tf.half is tf.float16
    assert str(tf.uint16) == "<dtype: 'uint16'>"

    @tf.function
    def f(x, y):
        return x + y, tf.cast(x, tf.uint64) * 3, x / y

    s, p, q = f(tf.constant([1, 2], tf.uint32), tf.constant([3, 4], tf.uint32))
    assert (s.dtype, s.numpy().tolist()) == (tf.uint32, [4, 6])
    assert (p.dtype, p.numpy().tolist()) == (tf.uint64, [3, 6])
    assert q.dtype == tf.float64       # TF: uint32 / uint32 is float64


def test_autograph_to_graph_trace_and_verbosity(capsys):
    def absolute(x):
        if x > 0:
            return x
        return -x

    g = tf.autograph.to_graph(absolute)
    assert float(g(tf.constant(-2.0))) == 2.0
    assert float(tf.function(g)(tf.constant(-3.0))) == 3.0
    assert float(tf.autograph.to_graph(tf.function(absolute))(tf.constant(-4.0))) == 4.0
    tf.autograph.trace("hello", 3)
    assert capsys.readouterr().out == "hello 3\n"

    def fresh(x):
        while x < 10:
            x = x * 2
        return x

    tf.autograph.set_verbosity(1)
    try:
        tf.autograph.to_graph(fresh)
    finally:
        tf.autograph.set_verbosity(0)
    err = capsys.readouterr().err
    assert "fresh" in err and "converted: 1 of 1 `while`" in err


def test_compute_gradient_is_tensorflows():
    th, nu = tf.test.compute_gradient(lambda x, y: x * y + tf.sin(x),
                                      [tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])])
    assert isinstance(th, tuple) and len(th) == 2 and th[0].dtype == np.float32
    # TF 2.21's answers
    np.testing.assert_allclose(th[0], [[3.5403023, 0.0], [0.0, 3.5838532]], rtol=1e-6)
    np.testing.assert_array_equal(th[1], [[1.0, 0.0], [0.0, 2.0]])
    np.testing.assert_allclose(nu[0], [[3.5402832, 0.0], [0.0, 3.5839844]], rtol=1e-6)
    th, nu = tf.test.compute_gradient(lambda x, y: x * y, [np.array([1.0, 2.0]),
                                                           np.array([[3.0], [4.0]])])
    assert th[0].shape == (4, 2) and th[1].shape == (4, 2)
    np.testing.assert_array_equal(th[1], [[1., 0.], [2., 0.], [0., 1.], [0., 2.]])
    np.testing.assert_allclose(nu[1], th[1])
    th, _ = tf.test.compute_gradient(lambda x: tf.zeros([2]), [tf.constant([1.0, 2.0, 3.0])])
    np.testing.assert_array_equal(th[0], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="must be a list or tuple"):
        tf.test.compute_gradient(lambda x: x, tf.constant([1.0]))
    with pytest.raises(AssertionError, match="unsupported type int32 of y"):
        tf.test.compute_gradient(lambda x: tf.cast(x, tf.int32), [tf.constant([1.0, 2.0])])
