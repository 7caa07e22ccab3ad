"""Scans, index-tuple gathers/scatters, reverse/roll and sorting against TensorFlow 2.21's values
and gradients (facts_scan_index_sort.py), eagerly and inside one compiled function."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

from vocab.facts_scan_index_sort import FACTS, X

F = {
    "cumsum_1": lambda x: tf.math.cumsum(x, axis=1),
    "cumsum_0_ex_rev": lambda x: tf.math.cumsum(x, axis=0, exclusive=True, reverse=True),
    "cumprod_1_ex": lambda x: tf.math.cumprod(x, axis=1, exclusive=True),
    "cumprod_1_rev": lambda x: tf.math.cumprod(x, axis=-1, reverse=True),
    "cumlse_1": lambda x: tf.math.cumulative_logsumexp(x, axis=1),
    "cumlse_1_rev": lambda x: tf.math.cumulative_logsumexp(x, axis=1, reverse=True),
    "reverse": lambda x: tf.reverse(x, [0, 1]),
    "roll": lambda x: tf.roll(x, [1, -1], [0, 1]),
    "gather_nd": lambda x: tf.gather_nd(x, [[[1, 0], [0, 2]], [[1, 0], [1, 1]]]),
    "gather_nd_rows": lambda x: tf.gather_nd(x, [[1], [0], [1]]),
    "scatter_update": lambda x: tf.tensor_scatter_nd_update(x, [[0, 1], [1, 2]], x[0, :2] * 3.0),
    "scatter_add": lambda x: tf.tensor_scatter_nd_add(x, [[0, 1], [0, 1]], x[1, :2]),
    "scatter_sub": lambda x: tf.tensor_scatter_nd_sub(x, [[1]], x[:1] * x[:1]),
    "scatter_max": lambda x: tf.tensor_scatter_nd_max(x, [[0, 0], [1, 1]], tf.constant([0.5, 1.0], tf.float64)),
    "scatter_min": lambda x: tf.tensor_scatter_nd_min(x, [[0, 0], [1, 2]], tf.constant([0.5, 0.0], tf.float64)),
    "sort_asc": lambda x: tf.sort(x, axis=1),
    "sort_desc0": lambda x: tf.sort(x, axis=0, direction="DESCENDING"),
    "top_k2": lambda x: tf.math.top_k(x, 2).values,
}


def _value_and_grad(f, x):
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
        weights = tf.reshape(tf.cast(tf.range(tf.size(y)) + 1, tf.float64), y.shape)
        s = tf.reduce_sum(y * weights)
    return y, t.gradient(s, x)


def _all(x):
    out = [v for f in F.values() for v in _value_and_grad(f, x)]
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.scatter_nd([[1, 2], [0, 0], [1, 2]], x[0], [2, 4])
        s = tf.reduce_sum(y * y)
    return out + [y, t.gradient(s, x)]


def _check(results, rtol):
    it = iter(results)
    for name in list(F) + ["scatter_nd"]:
        want_y, want_g = FACTS[name]
        np.testing.assert_allclose(next(it), want_y, rtol=rtol, err_msg=name)
        np.testing.assert_allclose(next(it), want_g, rtol=rtol, err_msg=name)


def test_values_and_gradients_eager():
    _check(_all(tf.constant(X, tf.float64)), 1e-12)


def test_values_and_gradients_traced_on_the_interpreter(numpy_backend):
    _check(tf.function(_all)(tf.constant(X, tf.float64)), 1e-12)


@pytest.mark.slow
def test_values_and_gradients_compiled():
    _check(tf.function(_all)(tf.constant(X, tf.float64)), 1e-12)


def test_integer_and_tie_rules():
    ti = tf.constant([[3, 1, 3, 2], [0, 5, 5, 5]])
    assert [v.numpy().tolist() for v in tf.math.top_k(ti, 3)] == FACTS["top_k_ties"]
    got = [tf.argsort(ti).numpy().tolist(), tf.argsort(ti, direction="DESCENDING").numpy().tolist(),
           tf.argsort(tf.constant([2, 1, 2, 1], tf.uint8)).numpy().tolist()]
    assert got == FACTS["argsort"]
    assert tf.sort(tf.constant([[5, -2147483648, 3, 2147483647]])).numpy().tolist() == FACTS["sort_int"]
    preds = tf.constant([[0.1, 0.9, 0.5], [0.2, 0.7, 0.6], [1.0, 1.0, 1.0], [0.3, np.inf, 0.3]])
    assert tf.math.in_top_k([1, 0, 2, 1], preds, 1).numpy().tolist() == FACTS["in_top_k"]
    assert tf.nn.in_top_k([1, 0, 2, 1], preds, 1).numpy().tolist() == FACTS["in_top_k"]
    cs = tf.math.cumsum(tf.constant([[1, 2, 3], [4, 5, 6]]), axis=1, exclusive=True)
    assert cs.numpy().tolist() == FACTS["cumsum_int"]
    assert tf.roll(tf.reshape(tf.range(6), [2, 3]), [1, 1], [1, 1]).numpy().tolist() == FACTS["roll_multi"]


def test_errors_are_tensorflows():
    assert FACTS["gather_nd_oob"] == FACTS["cumsum_axis"] == FACTS["top_k_big"] == "InvalidArgumentError"
    with pytest.raises(InvalidArgumentError):
        tf.gather_nd(tf.constant([1, 2]), [[2]])
    with pytest.raises(InvalidArgumentError, match="scan axis"):
        tf.math.cumsum(tf.constant([1.0]), axis=1)
    with pytest.raises(InvalidArgumentError, match="at least k columns"):
        tf.math.top_k(tf.constant([1.0, 2.0]), 3)
    with pytest.raises(ValueError, match="direction"):
        tf.sort(tf.constant([1.0]), direction="UP")


def test_gather_nd_batch_dims():
    params = tf.reshape(tf.range(24), [2, 3, 4])
    got = tf.gather_nd(params, [[[0, 1]], [[2, 3]]], batch_dims=1)   # TF 2.21: [[1], [23]]
    assert got.numpy().tolist() == [[1], [23]]


def test_reverse_sequence(numpy_backend):
    x = tf.reshape(tf.range(12), [3, 4])
    want = [[1, 0, 2, 3], [7, 6, 5, 4], [8, 9, 10, 11]]                 # TF 2.21's
    assert tf.reverse_sequence(x, [2, 4, 0], seq_axis=1, batch_axis=0).numpy().tolist() == want
    y = tf.reshape(tf.range(24), [4, 2, 3])
    got = tf.reverse_sequence(y, [1, 3], seq_axis=0, batch_axis=1).numpy().tolist()
    assert got == [[[0, 1, 2], [15, 16, 17]], [[6, 7, 8], [9, 10, 11]], [[12, 13, 14], [3, 4, 5]],
                   [[18, 19, 20], [21, 22, 23]]]
    with pytest.raises(InvalidArgumentError):
        tf.reverse_sequence(x, [5, 1, 1], seq_axis=1, batch_axis=0)
    f = tf.function(lambda x, n: tf.reverse_sequence(x, n, seq_axis=1, batch_axis=0))
    assert f(x, tf.constant([2, 4, 0])).numpy().tolist() == want
