"""A function with a TensorArray loop (TensorListSetItem inside a While) saves and loads: the
loaded program gives the same values and gradients."""
import numpy as np

import tapeflow as tf


class Recurrence(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([4, 3], tf.float64), tf.TensorSpec([], tf.int32)])
    def __call__(self, x, n):
        ta = tf.TensorArray(tf.float64, size=4)
        h = tf.zeros([3], tf.float64)
        for i in tf.range(n):
            h = tf.tanh(0.5 * h + tf.gather(x, i))
            ta = ta.write(i, h)
        return ta.stack()


def test_tensor_array_loop_saves_and_loads(tmp_path):
    m = Recurrence()
    x = tf.constant(np.linspace(-1.0, 1.0, 12).reshape(4, 3))
    n = tf.constant(3)
    tf.saved_model.save(m, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    np.testing.assert_allclose(loaded(x, n).numpy(), m(x, n).numpy(), rtol=1e-12)
    grads = []
    for fn in (m, loaded):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(fn(x, n) ** 2)
        grads.append(t.gradient(y, x).numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)
