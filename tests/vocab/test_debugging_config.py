"""tf.debugging's checks (eager, and as run-time checks in traced code), tf.config's CPU
device queries, tf.autograph's to_graph/set_verbosity/trace and tf.dtypes.saturate_cast;
the expected values and error types are what TF 2.21 gives for the same calls."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

D = tf.debugging


def test_value_checks_pass_and_fail_like_tensorflow():
    D.assert_equal(tf.constant([1, 2]), tf.constant([1, 2]))
    D.assert_positive(tf.constant([1.0]))
    D.assert_near(tf.constant([1.0]), tf.constant([1.0 + 1e-7]))
    fails = [lambda: D.assert_less(tf.constant([1, 5]), 3, message="too big"),
             lambda: D.assert_equal(tf.constant([1, 2]), tf.constant([1, 3])),
             lambda: D.assert_none_equal(tf.constant([1, 2]), 2),
             lambda: D.assert_greater_equal(tf.constant([1]), 2),
             lambda: D.assert_non_negative(tf.constant([-1.0])),
             lambda: D.assert_near(tf.constant([1.0]), tf.constant([1.1])),
             lambda: D.Assert(False, ["msg", tf.constant([1, 2])]),
             lambda: D.check_numerics(tf.constant([float("inf")]), "m"),
             lambda: D.assert_all_finite(tf.constant([float("nan")]), "m")]
    for f in fails:
        with pytest.raises(InvalidArgumentError):
            f()
    with pytest.raises(InvalidArgumentError, match="too big"):
        fails[0]()
    with pytest.raises(InvalidArgumentError, match="Summarized data: b'msg'\n1, 2"):   # TF 2.21's
        fails[6]()
    with pytest.raises(InvalidArgumentError, match="m : Tensor had Inf values"):
        fails[7]()


def test_static_checks_raise_tensorflows_errors():
    with pytest.raises(ValueError, match="must have rank 2"):
        D.assert_rank(tf.zeros([2]), 2)
    D.assert_rank_at_least(tf.zeros([2, 3]), 2)
    D.assert_rank_in(tf.zeros([2]), [1, 2])
    with pytest.raises(TypeError):
        D.assert_integer(tf.constant(1.0))
    with pytest.raises(TypeError):
        D.assert_type(tf.constant(1), tf.float32)
    with pytest.raises(ValueError, match=r"Expected scalar shape, saw shape: \(2,\)"):
        D.assert_scalar(tf.zeros([2]))
    with pytest.raises(TypeError, match="proper"):
        D.assert_proper_iterable("ab")
    assert D.assert_same_float_dtype([tf.constant(1.0, tf.float64)]) == tf.float64
    with pytest.raises(ValueError):
        D.assert_same_float_dtype([tf.constant(1.0), tf.constant(1.0, tf.float64)])
    assert (D.is_numeric_tensor(tf.constant([True])), D.is_numeric_tensor(tf.constant([1.0]))) == (False, True)
    D.assert_shapes([(tf.zeros([2, 3]), ("N", 3)), (tf.zeros([5, 2]), ("...", "N"))])
    with pytest.raises(ValueError):
        D.assert_shapes([(tf.zeros([2, 3]), ("N", 3)), (tf.zeros([4]), ("N",))])


def test_checks_run_inside_functions(numpy_backend):
    f = tf.function(lambda x: D.check_numerics(x, "in fn") * 2)
    g = tf.function(lambda x: (D.assert_positive(x), x + 1)[1])   # an assert returns None, as TF's
    assert f(tf.constant([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    assert g(tf.constant([1.0])).numpy().tolist() == [2.0]
    with pytest.raises(InvalidArgumentError, match="in fn"):
        f(tf.constant([1.0, np.inf]))
    with pytest.raises(InvalidArgumentError, match="x > 0 did not hold"):
        g(tf.constant([-1.0]))


def test_config_cpu_queries():
    cpu = tf.config.list_physical_devices("CPU")
    assert tf.config.get_visible_devices() == cpu and tf.config.get_visible_devices("GPU") == []
    tf.config.set_visible_devices(cpu)
    assert tf.config.get_soft_device_placement() is True
    conf = tf.config.LogicalDeviceConfiguration(memory_limit=10)
    assert (conf.memory_limit, conf.experimental_priority, conf.experimental_device_ordinal) == (10, None, None)
    assert tf.config.experimental_functions_run_eagerly() is tf.config.functions_run_eagerly()


def test_autograph_and_saturate_cast(capsys):
    assert tf.autograph.to_graph(lambda x: x * 2)(tf.constant(3)).numpy() == 6
    tf.autograph.set_verbosity(1)
    tf.autograph.trace("x is", 3)
    assert capsys.readouterr().out == "x is 3\n"
    sc = tf.dtypes.saturate_cast
    assert sc(tf.constant([300.0, -5.0, 3.7]), tf.uint8).numpy().tolist() == [255, 0, 3]
    assert sc(tf.constant([3e9, -3e9]), tf.int32).numpy().tolist() == [2147483520, -2147483648]
    assert sc(tf.constant([70000, -5]), tf.int16).numpy().tolist() == [32767, -5]
    assert sc(tf.constant([1e10, -1e10, 2.5], tf.float64), tf.int64).numpy().tolist() == [10000000000, -10000000000, 2]
    assert tf.saturate_cast(tf.constant([1e40], tf.float64), tf.float32).numpy()[0] == np.float32(3.4028235e38)
