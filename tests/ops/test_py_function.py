"""``tf.py_function`` / ``tf.numpy_function``: TensorFlow 2.21's results, eagerly and in functions."""
import numpy as np
import pytest

import tapeflow as tf


def test_eager_call_with_several_outputs():
    calls = []

    def f(x, y):
        calls.append(x.numpy().tolist())
        return x * y.numpy() + 1., tf.cast(tf.shape(x)[0], tf.int32)

    a, n = tf.py_function(f, [tf.constant([1., 2.]), 3.], [tf.float32, tf.int32])
    assert a.numpy().tolist() == [4., 7.] and a.dtype == tf.float32        # TF: [4. 7.]
    assert int(n) == 2 and n.dtype == tf.int32                              # TF: 2 (int32)
    assert calls == [[1., 2.]]                                              # TF: called once


def test_eager_py_function_is_differentiable():
    x = tf.constant([1., 2.])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.py_function(lambda v: v * v, [x], tf.float32)
    assert tape.gradient(y, x).numpy().tolist() == [2., 4.]                 # TF: [2. 4.]


def test_in_a_function_python_runs_at_each_call(numpy_backend):
    seen = []

    @tf.function
    def g(x):
        r = tf.py_function(lambda v: np.sort(v.numpy())[::-1].copy(), [x], tf.float32)
        seen.append(str(r))
        return r * 2.

    assert g(tf.constant([3., 1., 2.])).numpy().tolist() == [6., 4., 2.]   # TF: [6. 4. 2.]
    assert g(tf.constant([5., 1., 2.])).numpy().tolist() == [10., 4., 2.]  # TF: [10. 4. 2.]
    # TF: Tensor("EagerPyFunc:0", dtype=float32, ...) (unknown shape); tapeflow knows the shape
    assert seen == ['Tensor("EagerPyFunc:0", shape=(3,), dtype=float32)']


def test_compiled_backend_runs_it_on_the_interpreter():
    @tf.function(jit_compile=True)
    def g(x):
        return tf.py_function(lambda v: v + 1., [x * 2.], tf.float32) * 3.

    assert g(tf.constant([1., 2.])).numpy().tolist() == [9., 15.]
    program = g.get_concrete_function(tf.constant([1., 2.])).program
    if tf.tracer.engine.get_backend() == "numba":   # the one-line report of the fallback
        assert program.fallback == "EagerPyFunc (tf.py_function) calls Python"


def test_a_result_of_another_shape_than_traced_is_an_error(numpy_backend):
    @tf.function
    def g(x):
        return tf.py_function(lambda v: v if float(tf.reduce_sum(v)) == 0 else v[:1], [x],
                              tf.float32)

    with pytest.raises(ValueError, match="returned shape"):
        g(tf.constant([1., 2.]))


def test_numpy_function():
    out = tf.numpy_function(lambda v: v + 1, [np.array([1., 2.], np.float32)], tf.float32)
    assert out.numpy().tolist() == [2., 3.]                                 # TF: [2. 3.]
