"""A function whose TensorArray holds elements of different shapes (the padded list: CropOrPad
and the RaggedList ops in a While) saves and loads: the loaded program gives the original's
values and gradients to second order, and TensorFlow's run-time error for stack."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError


def ragged(x, n):
    ta = tf.TensorArray(tf.float64, size=0, dynamic_size=True, infer_shape=False)
    for i in tf.range(n):
        ta = ta.write(i, tf.sin(x * tf.cast(i + 1, tf.float64)) * tf.ones([i + 1], tf.float64))
    return ta


class Ragged(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([], tf.float64), tf.TensorSpec([], tf.int32)])
    def __call__(self, x, n):
        ta = ragged(x, n)
        return tf.reduce_sum(ta.concat() ** 2) + tf.reduce_sum(ta.read(0)) * x

    @tf.function(input_signature=[tf.TensorSpec([], tf.float64), tf.TensorSpec([], tf.int32)])
    def stacked(self, x, n):
        return ragged(x, n).stack()


def test_a_ragged_tensor_array_loop_saves_and_loads_to_second_order(tmp_path):
    m = Ragged()
    tf.saved_model.save(m, str(tmp_path))
    graphs = "".join(p.read_text() for p in (tmp_path / "graphs").glob("*.json"))
    assert "RaggedListConcat" in graphs and "CropOrPad" in graphs
    loaded = tf.saved_model.load(str(tmp_path))
    x = tf.constant(0.7, tf.float64)
    results = []
    for fn in (m, loaded):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = fn(x, tf.constant(3))
            g = t1.gradient(y, x)
        results.append([float(y), float(g), float(t2.gradient(g, x))])
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)
    # the same sum written out: sin(x)^2 + 2 sin(2x)^2 + 3 sin(3x)^2 + x sin(x)
    want = sum(k * np.sin(k * 0.7) ** 2 for k in (1, 2, 3)) + 0.7 * np.sin(0.7)
    np.testing.assert_allclose(results[0][0], want, rtol=1e-12)
    assert loaded.stacked(x, tf.constant(1)).numpy().tolist() == [[np.sin(0.7)]]
    with pytest.raises(InvalidArgumentError, match=r"Incompatible shapes during merge: \[1\] "
                                                   r"vs\. \[2\]"):
        loaded.stacked(x, tf.constant(3))
