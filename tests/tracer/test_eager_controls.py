"""run_functions_eagerly, init_scope, executing_eagerly, tf.device, tf.config, tf.dtypes:
TensorFlow 2.21's results, as facts (asked of TensorFlow itself)."""
import numpy as np
import pytest

import tapeflow as tf


@pytest.fixture
def eager_functions():
    tf.config.run_functions_eagerly(True)
    yield
    tf.config.run_functions_eagerly(False)


def test_run_functions_eagerly_runs_the_python_body_each_call(eager_functions):
    calls = []

    @tf.function
    def f(x):
        calls.append(type(x).__name__)
        return x * 2

    assert tf.config.functions_run_eagerly()
    # TF: f(1.0), f(2.0) -> 2.0, 4.0; the body ran twice on EagerTensors; executing_eagerly True
    assert float(f(tf.constant(1.0))) == 2.0 and float(f(tf.constant(2.0))) == 4.0
    assert calls == ["Tensor", "Tensor"]
    assert f.experimental_get_tracing_count() == 0


def test_turning_it_off_traces_again_and_turning_it_on_undoes_the_fast_path():
    calls = []

    @tf.function
    def f(x):
        calls.append(type(x).__name__)
        return x * 2

    x = tf.constant(1.0)
    assert float(f(x)) == 2.0 and float(f(x)) == 2.0        # traced once, then the fast path
    assert calls == ["SymbolicTensor"]
    tf.config.run_functions_eagerly(True)
    try:
        assert float(f(x)) == 2.0
        assert calls == ["SymbolicTensor", "Tensor"]
    finally:
        tf.config.run_functions_eagerly(False)
    assert not tf.config.functions_run_eagerly()
    assert float(f(x)) == 2.0 and calls == ["SymbolicTensor", "Tensor"]   # the old trace again


def test_init_scope_runs_eagerly_inside_a_function():
    seen = []

    @tf.function
    def g(x):
        seen.append(tf.executing_eagerly())
        with tf.init_scope():
            seen.append(tf.executing_eagerly())
            c = tf.constant(3.0) * 1.0
        return x * c

    # TF: 6.0; executing_eagerly is False while tracing and True inside init_scope
    assert float(g(tf.constant(2.0))) == 6.0
    assert seen == [False, True]
    assert tf.executing_eagerly()


def test_init_scope_pauses_tapes():
    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.init_scope():
            y = x * x
    assert tape.gradient(y, x) is None      # TF: None


def test_device_places_everything_on_the_cpu():
    for name in ("/CPU:0", "/GPU:0", None):
        with tf.device(name):
            t = tf.constant(1.0)
        assert t.device == "/job:localhost/replica:0/task:0/device:CPU:0"   # TF, soft placement


def test_config_lists_the_cpu_only():
    assert [tuple(d) for d in tf.config.list_physical_devices()] == [("/physical_device:CPU:0", "CPU")]
    assert tf.config.list_physical_devices("GPU") == []
    assert repr(tf.config.list_physical_devices("CPU")) == \
        "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]"
    assert [tuple(d) for d in tf.config.list_logical_devices("CPU")] == [("/device:CPU:0", "CPU")]


def test_dtypes_namespace():
    assert tf.dtypes.float32 is tf.float32 and tf.dtypes.double is tf.float64
    assert tf.dtypes.as_dtype(np.int16) is tf.int16
    assert tf.dtypes.cast(tf.constant([1.7]), tf.dtypes.int32).numpy().tolist() == [1]
    assert isinstance(tf.float32, tf.dtypes.DType)
