"""tf.nn and tf.math composites against TensorFlow 2.21's values and gradients
(facts_composites.py), eagerly and inside one function."""
import numpy as np
import pytest

import tapeflow as tf

from vocab.facts_composites import FACTS, W, X

x_ = None
w = tf.constant(W, tf.float64)
F = {
 "moments0": lambda x: tf.nn.moments(x, [0]),
 "moments01k": lambda x: tf.nn.moments(x, [0, 1], keepdims=True),
 "weighted_moments1": lambda x: tf.nn.weighted_moments(x, [1], w),
 "suff_norm": lambda x: tf.nn.normalize_moments(*tf.nn.sufficient_statistics(x, [1], shift=tf.constant(0.5, tf.float64))),
 "batch_norm": lambda x: tf.nn.batch_normalization(x, tf.constant([0.1, 0.2, -0.3], tf.float64), tf.constant([1.0, 0.5, 2.0], tf.float64), tf.constant(0.25, tf.float64), x[0], 1e-3),
 "silu": lambda x: tf.nn.silu(x, beta=1.5),
 "crelu": lambda x: tf.nn.crelu(x, axis=0),
 "log_poisson": lambda x: tf.nn.log_poisson_loss(tf.constant([[0.0, 0.5, 2.0], [3.0, 1.0, 4.5]], tf.float64), x, compute_full_loss=True),
 "wce": lambda x: tf.nn.weighted_cross_entropy_with_logits(tf.constant([[0.0, 1.0, 0.3], [1.0, 0.0, 0.7]], tf.float64), x, 2.5),
 "avg_loss": lambda x: tf.nn.compute_average_loss(x, sample_weight=tf.constant([2.0, 0.5], tf.float64)[:, None]),
 "reg_loss": lambda x: tf.nn.scale_regularization_loss([tf.reduce_sum(x), tf.reduce_sum(x * x)]),
 "embedding": lambda x: tf.nn.embedding_lookup(x, [[1, 0], [1, 1]]),
 "embedding_max_norm": lambda x: tf.nn.embedding_lookup([x], [1, 0], max_norm=1.0),
 "euclid": lambda x: tf.math.reduce_euclidean_norm(x, axis=1),
 "seg_mean": lambda x: tf.math.unsorted_segment_mean(x, [2, 0], 3),
 "seg_sqrt_n": lambda x: tf.math.unsorted_segment_sqrt_n(x, [1, 1], 2),
 "log_sigmoid": lambda x: tf.math.log_sigmoid(x),
}


def _value_and_grad(f, x):
    with tf.GradientTape() as t:
        t.watch(x)
        ys = f(x)
        ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
        s = tf.add_n([tf.reduce_sum(y * tf.reshape(tf.cast(tf.range(tf.size(y)) + 1, tf.float64), y.shape))
                      for y in ys])
    g = t.gradient(s, x)
    # TF's gradient of embedding_lookup is an IndexedSlices; the facts hold its dense form
    return ys, tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g


def _all(x):
    out = []
    for f in F.values():
        ys, g = _value_and_grad(f, x)
        out.append((ys, g))
    return out


def _check(results):
    for name, (ys, g) in zip(F, results):
        want_ys, want_g = FACTS[name]
        assert len(ys) == len(want_ys), name
        for y, want in zip(ys, want_ys):
            np.testing.assert_allclose(np.asarray(y), want, rtol=1e-12, atol=1e-15, err_msg=name)
        np.testing.assert_allclose(np.asarray(g), want_g, rtol=1e-12, atol=1e-15, err_msg=name)


def test_values_and_gradients_eager():
    _check(_all(tf.constant(X, tf.float64)))


def test_values_and_gradients_traced_on_the_interpreter(numpy_backend):
    _check(tf.function(_all)(tf.constant(X, tf.float64)))


@pytest.mark.slow
def test_values_and_gradients_compiled():
    _check(tf.function(_all)(tf.constant(X, tf.float64)))


def test_counts_and_predicates():
    got = tf.math.count_nonzero(tf.constant([[0, 1], [2, 0], [3, 4]]), axis=0, keepdims=True)
    assert got.numpy().tolist() == FACTS["count_nonzero"] and got.dtype == tf.int64
    assert int(tf.math.count_nonzero([True, False, True])) == FACTS["count_nonzero_bool"]
    euclid = tf.math.reduce_euclidean_norm(tf.constant([[3, 4], [1, 1]]), axis=1)
    assert euclid.numpy().tolist() == FACTS["euclid_int"]
    assert [bool(tf.math.is_non_decreasing(v)) for v in ([1, 2, 2], [[1, 3], [2, 4]], [5], [])] == FACTS["nondec"]
    assert [bool(tf.math.is_strictly_increasing(v)) for v in ([1, 2, 2], [[1, 3], [4, 5]], [5])] == FACTS["strict"]
    assert float(tf.math.zero_fraction(tf.constant([[0, 1], [0, 0]]))) == FACTS["zero_fraction"]
    assert float(tf.nn.zero_fraction(tf.constant([[0, 1], [0, 0]]))) == FACTS["zero_fraction"]
    acc = tf.math.accumulate_n([tf.constant([1, 2]), tf.constant([3, 4]), tf.constant([5, 6])])
    assert acc.numpy().tolist() == FACTS["accumulate_n"]
    m, v = tf.nn.moments(tf.constant([1.0, 2.0, 4.0], tf.float16), [0])
    assert [float(m), float(v), m.dtype.name] == FACTS["moments_f16"]
    assert tf.nn.swish is tf.nn.silu
