"""Segment max, min and product against TensorFlow 2.21's values, gradients and errors (every
literal below is TF 2.21's answer to the same call), eagerly, traced on the interpreter and
compiled (the compiled gradients of every op are also checked by tests/codegen)."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

M = tf.math
D = [[1., 5., 3.], [4., 2., 3.], [4., 6., -1.], [0., 0., 0.]]
IDS, UIDS = [0, 0, 2, 2], [0, 0, -1, 3]
L, H = -1.7976931348623157e+308, 1.7976931348623157e+308
LOW, HIGH = [L] * 3, [H] * 3
# (value, gradient of sum(y * [1, 2, 3, ...])) for D; sorted ids IDS, unsorted UIDS into 5
FACTS = {
    "segment_max": ([[4, 5, 3], [0, 0, 0], [4, 6, 0]],
                    [[0, 2, 1.5], [1, 0, 1.5], [7, 8, 0], [0, 0, 9]]),
    "segment_min": ([[1, 2, 3], [0, 0, 0], [0, 0, -1]],
                    [[1, 0, 1.5], [0, 2, 1.5], [0, 0, 9], [7, 8, 0]]),
    "segment_prod": ([[4, 10, 9], [1, 1, 1], [0, 0, -0.]],
                     [[4, 4, 9], [1, 10, 9], [0, 0, 0], [28, 48, -9]]),
    "unsorted_segment_max": ([[4, 5, 3], LOW, LOW, [0, 0, 0], LOW],
                             [[0, 2, 1.5], [1, 0, 1.5], [0, 0, 0], [10, 11, 12]]),
    "unsorted_segment_min": ([[1, 2, 3], HIGH, HIGH, [0, 0, 0], HIGH],
                             [[1, 0, 1.5], [0, 2, 1.5], [0, 0, 0], [10, 11, 12]]),
    "unsorted_segment_prod": ([[4, 10, 9], [1, 1, 1], [1, 1, 1], [0, 0, 0], [1, 1, 1]],
                              [[4, 4, 9], [1, 10, 9], [0, 0, 0], [10, 11, 12]]),
}


def _value_and_grad(name, d):
    f = getattr(M, name)
    with tf.GradientTape() as t:
        t.watch(d)
        y = f(d, IDS) if name.startswith("segment") else f(d, UIDS, 5)
        w = tf.reshape(tf.cast(tf.range(tf.size(y)) + 1, tf.float64), y.shape)
        s = tf.reduce_sum(y * w)
    return y, t.gradient(s, d)


def _all(d):
    return [v for name in FACTS for v in _value_and_grad(name, d)]


def _check(results):
    it = iter(results)
    for name, (want_y, want_g) in FACTS.items():
        y, g = next(it), next(it)
        assert y.dtype == tf.float64 and y.shape == np.shape(want_y), name
        np.testing.assert_array_equal(y, want_y, err_msg=name)
        np.testing.assert_array_equal(g, want_g, err_msg=name)


def test_values_and_gradients_eager():
    _check(_all(tf.constant(D, tf.float64)))


def test_values_and_gradients_traced(numpy_backend):
    _check(tf.function(_all)(tf.constant(D, tf.float64)))


@pytest.mark.slow
def test_values_and_gradients_compiled():
    _check(tf.function(_all)(tf.constant(D, tf.float64)))


# NaN, infinities and integer identities: TF folds rows in order with ``acc if x < acc else x``
# (max), so a NaN survives only until a later number; the sorted max starts from -inf, the
# unsorted from the lowest finite value, and an empty sorted max/min segment holds 0.
NAN, INF = np.nan, np.inf
F32 = [NAN, 1., 2., -INF, -INF, 3., NAN, INF, 0.5, NAN]
I32 = [7, -3, 2, 0, 5, 9, -1, 4, 4, 8]
SIDS = [0, 0, 0, 1, 1, 3, 3, 4, 4, 4]
USIDS = [0, 0, 0, 1, 1, 3, -1, 4, 4, 4]
F32L, F32H = -3.4028234663852886e+38, 3.4028234663852886e+38
I32L, I32H = -2147483648, 2147483647
EDGE_FACTS = {   # name: (float32 result, int32 result)
    "segment_max": ([2.0, -INF, 0.0, NAN, NAN], [7, 5, 0, 9, 8]),
    "segment_min": ([1.0, -INF, 0.0, NAN, NAN], [-3, 0, 0, -1, 4]),
    "segment_prod": ([NAN, INF, 1.0, NAN, NAN], [-42, 0, 1, -9, 128]),
    "unsorted_segment_max": ([2.0, F32L, F32L, 3.0, NAN, F32L], [7, 5, I32L, 9, 8, I32L]),
    "unsorted_segment_min": ([1.0, -INF, F32H, 3.0, NAN, F32H], [-3, 0, I32H, 9, 4, I32H]),
    "unsorted_segment_prod": ([NAN, INF, 1.0, 3.0, NAN, 1.0], [-42, 0, 1, 9, 128, 1]),
}


def _edges(x):
    return [getattr(M, name)(x, SIDS) if name.startswith("segment") else
            getattr(M, name)(x, USIDS, 6) for name in EDGE_FACTS]


def _check_edges(results, which):
    for (name, wants), got in zip(EDGE_FACTS.items(), results):
        want = wants[which]
        assert got.dtype == (tf.float32, tf.int32)[which]
        np.testing.assert_array_equal(got, np.asarray(want, got.dtype.as_numpy_dtype), err_msg=name)


def test_nan_inf_and_identities_eager():
    _check_edges(_edges(tf.constant(F32, tf.float32)), 0)
    _check_edges(_edges(tf.constant(I32)), 1)


COMPILED_EDGES = ["segment_max", "segment_min", "unsorted_segment_max"]


def test_nan_inf_and_identities_compiled():
    """One compiled program: the Numba templates fold NaN and infinities as the kernels do
    (the max and min rules, both identities, empty sorted segments; all six ops: slow)."""
    got = tf.function(lambda x: [getattr(M, n)(x, SIDS) if n.startswith("segment") else
                                 getattr(M, n)(x, USIDS, 6) for n in COMPILED_EDGES])(
        tf.constant(F32, tf.float32))
    for name, y in zip(COMPILED_EDGES, got):
        np.testing.assert_array_equal(y, np.float32(EDGE_FACTS[name][0]), err_msg=name)


@pytest.mark.slow
def test_nan_inf_and_identities_compiled_all():
    _check_edges(tf.function(_edges)(tf.constant(F32, tf.float32)), 0)


@pytest.mark.slow
def test_integer_identities_compiled():
    _check_edges(tf.function(_edges)(tf.constant(I32)), 1)


def test_identity_per_dtype():
    """TF 2.21: an empty unsorted segment holds the dtype's lowest/highest value (finite), 1."""
    x = [1, 2, 3]
    for dt, low, high in [(tf.uint8, 0, 255), (tf.int8, -128, 127), (tf.int64, -2**63, 2**63 - 1),
                          (tf.float16, -65504.0, 65504.0), (tf.uint16, 0, 65535)]:
        t = tf.constant(x, dt)
        assert M.unsorted_segment_max(t, [0, 2, 2], 4).numpy().tolist() == [1, low, 3, low]
        assert M.unsorted_segment_min(t, [0, 2, 2], 4).numpy().tolist() == [1, high, 2, high]
        assert M.unsorted_segment_prod(t, [0, 2, 2], 4).numpy().tolist() == [1, 1, 6, 1]
        assert M.segment_max(t, [0, 2, 2]).numpy().tolist() == [1, 0, 3]


def test_infinite_ties_gradients():
    """All -inf in a segment: the unsorted max holds the lowest finite value, so nothing is
    selected (gradient 0); the sorted max holds -inf and the two share the gradient."""
    x = tf.constant([-INF, -INF, 1.0])
    for f, want_y, want_g in [(lambda x: M.unsorted_segment_max(x, [0, 0, 1], 2), [F32L, 1.0], [0, 0, 1]),
                              (lambda x: M.segment_max(x, [0, 0, 1]), [-INF, 1.0], [0.5, 0.5, 1])]:
        with tf.GradientTape() as t:
            t.watch(x)
            y = f(x)
        np.testing.assert_array_equal(y, np.float32(want_y))
        np.testing.assert_array_equal(t.gradient(y, x), want_g)


def test_multi_dimensional_ids_and_static_shapes():
    x = tf.reshape(tf.range(12.0), [2, 2, 3])
    got = M.unsorted_segment_max(x, [[1, 0], [1, 1]], 2)
    assert got.numpy().tolist() == [[3.0, 4.0, 5.0], [9.0, 10.0, 11.0]]     # TF 2.21's

    shapes = []

    @tf.function
    def f(x):
        a, b = M.unsorted_segment_min(x, [0, 2, 2, 0], 3), M.segment_prod(x, [0, 0, 1, 1])
        shapes.append((tuple(a.shape), tuple(b.shape)))
        return a

    f.get_concrete_function(tf.TensorSpec([None, 3]))
    # TF 2.21: (3, 3) and (None, 3); the sorted count is known here (the ids are known)
    assert shapes == [((3, 3), (2, 3))]


@pytest.mark.parametrize("call, message", [
    (lambda: M.unsorted_segment_max([1., 2.], [0, 5], 3), r"segment_ids\[1\] = 5 is out of range \[0, 3\)"),
    (lambda: M.unsorted_segment_min([1., 2.], [0], 3),
     r"data.shape = \[2\] does not start with segment_ids.shape = \[1\]"),
    (lambda: M.unsorted_segment_prod([1., 2.], [0, 1], -1), "Input num_segments == -1 must not be negative"),
    (lambda: M.unsorted_segment_max([1., 2.], [0., 1.], 3), "segment_ids has dtype float32"),
    (lambda: M.segment_max([1., 2.], [1, 0]), "segment ids are not increasing"),
    (lambda: M.segment_min([1., 2.], [0]), "segment_ids should be the same size as dimension 0 of input"),
    (lambda: M.segment_prod([1., 2.], [-1, 0]), r"Segment id -1 out of range \[0, 1\)"),
    (lambda: M.segment_max([[1., 2.]], [[0, 1]]), "segment_ids should be a vector"),
])
def test_errors_are_tensorflows(call, message):
    with pytest.raises(InvalidArgumentError, match=message):
        call()
