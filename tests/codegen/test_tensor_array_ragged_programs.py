"""A TensorArray of elements of different shapes under the Numba backend: written at Python
indices with static shapes it is slices and pads, compiled; written in a loop on a tensor (the
padded list, sizes known at run time) its program runs on the interpreter, with the same values
and gradients as the eager loop."""
import numpy as np

import tapeflow as tf
from tapeflow.codegen import compile_graph
from tapeflow.runtime.interpret import run_graph

X = np.array([1.0, 2.0, 3.0, 4.0])


def static_ragged(x):
    with tf.GradientTape() as t:
        t.watch(x)
        ta = tf.TensorArray(tf.float64, 2, infer_shape=False)
        ta = ta.write(0, x[:1] * 2.0).write(1, x[1:] ** 2)
        y = tf.reduce_sum(ta.concat() * tf.constant([1.0, 2.0, 3.0, 4.0], tf.float64))
        y = y + tf.reduce_sum(ta.read(1))
    return y, t.gradient(y, x)


def test_static_shapes_at_python_indices_compile():
    """TensorFlow 2.21's gradient of this program is [2, 12, 24, 40]."""
    graph = tf.function(static_ragged).get_concrete_function(tf.constant(X)).graph
    assert not {n.op for n in graph.nodes} & {"CropOrPad", "RaggedListConcat",
                                              "RaggedListGetItem"}
    prog = compile_graph(graph, "ragged_static")
    assert prog.fallback is None
    (y, g), (yi, gi) = prog(X), run_graph(graph, X)
    np.testing.assert_allclose(g, [2.0, 12.0, 24.0, 40.0], rtol=1e-12)
    np.testing.assert_allclose([y, *g], [yi, *gi], rtol=1e-12)


def ragged_loop(x, n):
    ta = tf.TensorArray(tf.float64, size=0, dynamic_size=True, infer_shape=False)
    for i in tf.range(n):
        ta = ta.write(i, tf.sin(x * tf.cast(i + 1, tf.float64)) * tf.ones([i + 1], tf.float64))
    return tf.reduce_sum(ta.concat() ** 2)


def test_a_loop_of_ragged_elements_runs_interpreted():
    f = tf.function(ragged_loop)
    graph = f.get_concrete_function(tf.constant(0.5, tf.float64), tf.constant(3)).graph
    prog = compile_graph(graph, "ragged_loop")      # made concrete per call's shapes
    (y,) = prog(np.float64(0.5), np.int32(3))
    assert "CropOrPad gives a size only the run knows" in prog.fallback
    np.testing.assert_allclose(y, sum(k * np.sin(k * 0.5) ** 2 for k in (1, 2, 3)), rtol=1e-12)
    x = tf.constant(0.5, tf.float64)
    for n in (1, 3):       # n = 0: concat of an empty list is TensorFlow's error
        with tf.GradientTape() as t:
            t.watch(x)
            y = f(x, tf.constant(n))
        with tf.GradientTape() as e:
            e.watch(x)
            ye = ragged_loop(x, tf.constant(n))
        np.testing.assert_allclose(y.numpy(), ye.numpy(), rtol=1e-12)
        g, ge = t.gradient(y, x), e.gradient(ye, x)
        np.testing.assert_allclose(g.numpy(), ge.numpy(), rtol=1e-12)
