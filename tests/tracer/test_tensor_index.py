"""``x[t]`` with a scalar int tensor known only when the program runs (a loop counter).

Values, static shapes and error types are TensorFlow 2.21's (asked of it for x =
reshape(range(24), [2, 3, 4]) inside ``tf.function``). One difference is kept on purpose:
TensorFlow's static shape of ``x[1:, t]`` is ``(None, 4)`` (its one strided slice with a
tensor begin loses the sliced size); tapeflow's gather after the static slice keeps ``(1, 4)``.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def _keys(x, t):
    return x[t], x[1:, t], x[..., t], x[t, None, ::2], x[0, t, t], x[-1, t]


@pytest.mark.parametrize("t", [1, -1])
def test_tensor_indices_match_tensorflow(t):
    shapes = []

    def body(t):
        out = _keys(tf.constant(X), t)
        shapes.append([tuple(v.shape) for v in out])      # static shapes, while tracing
        return out
    got = tf.function(body)(tf.constant(t))
    want = _keys(X, t)                      # NumPy's indexing: TensorFlow's values here
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.numpy(), w)
    assert shapes == [[(3, 4), (1, 4), (2, 3), (1, 2, 4), (), (4,)]]


@pytest.mark.parametrize("t", [2, -3, 5])
def test_an_index_out_of_range_raises_invalid_argument(t):
    f = tf.function(lambda t: tf.constant(X)[t])
    with pytest.raises(InvalidArgumentError):
        f(tf.constant(t))


def test_gradient_of_a_tensor_index_is_tensorflows():
    @tf.function
    def h(t):
        x = tf.constant(X)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(x[t] * 2.0)
        return tape.gradient(y, x)
    assert h(tf.constant(-1)).numpy().sum(axis=(1, 2)).tolist() == [0.0, 24.0]


def test_a_loop_reads_its_rows_by_index():
    """The TensorFlow guides' recurrence: ``x[t]`` in ``for t in tf.range(n)``, with a
    TensorArray collecting every step; compared with the same Python loop run eagerly."""
    def run(x, w):
        h = tf.zeros([x.shape[1]])
        hs = tf.TensorArray(tf.float32, size=tf.shape(x)[0])
        for t in tf.range(tf.shape(x)[0]):
            h = tf.tanh(h * w + x[t])
            hs = hs.write(t, h)
        return hs.stack()
    x = tf.constant(np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3))
    w = tf.constant(0.7)
    with tf.GradientTape() as tape:
        tape.watch(w)
        want = run(x, w)
    dw_eager = tape.gradient(want, w)
    with tf.GradientTape() as tape:
        tape.watch(w)
        got = tf.function(run)(x, w)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(got, w).numpy(), dw_eager.numpy(), rtol=1e-5)
