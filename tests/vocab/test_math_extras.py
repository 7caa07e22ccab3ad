"""approx_max_k/approx_min_k/approx_top_k, clip_by_global_norm, strided_slice,
batch_norm_with_global_normalization and matrix_square_root against TensorFlow 2.21 (every
literal is TF 2.21's answer to the same call), eagerly and traced."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

X = [[1., 5., 3., 5.], [4., 2., 8., 0.]]


def test_approx_top_k_values_indices_and_gradient():
    x = tf.constant(X)
    v, i = tf.math.approx_max_k(x, 2)
    assert v.numpy().tolist() == [[5., 5.], [8., 4.]] and i.numpy().tolist() == [[1, 3], [2, 0]]
    assert i.dtype == tf.int32
    # TF 2.21 under jit_compile=True (its CPU kernel takes only the max along the last axis)
    v, i = tf.math.approx_min_k(x, 2)
    assert v.numpy().tolist() == [[1., 3.], [0., 2.]] and i.numpy().tolist() == [[0, 2], [3, 1]]
    v, i = tf.nn.approx_max_k(x, 1, reduction_dimension=0)
    assert v.numpy().tolist() == [[4., 5., 8., 5.]] and i.numpy().tolist() == [[1, 0, 1, 0]]
    v, i = tf.approx_top_k(x, 3, aggregate_to_topk=False)
    assert v.numpy().tolist() == [[5., 5., 3.], [8., 4., 2.]]
    assert tf.approx_top_k(x, 2, is_max_k=False).indices.numpy().tolist() == [[0, 2], [3, 1]]
    v, i = tf.math.approx_max_k(tf.constant([[1., np.nan, 3.]]), 2)
    assert np.isnan(v[0, 0]) and v[0, 1] == 3.0 and i.numpy().tolist() == [[1, 2]]
    with tf.GradientTape() as t:
        t.watch(x)
        v, _ = tf.math.approx_max_k(x, 2)
        s = tf.reduce_sum(v * tf.constant([[1., 2.], [3., 4.]]))
    assert t.gradient(s, x).numpy().tolist() == [[0., 1., 0., 2.], [4., 0., 3., 0.]]
    assert tf.approx_top_k(x, 0).values.shape == (2, 0)


@pytest.mark.parametrize("call, error, message", [
    (lambda: tf.math.approx_max_k(tf.constant(X), 5), InvalidArgumentError,
     "input must have at least k columns. Had 4, needed 5"),
    (lambda: tf.math.approx_max_k(tf.constant(X), -1), InvalidArgumentError,
     "'k' of -1 must be at least minimum 0"),
    (lambda: tf.math.approx_max_k(tf.constant([1, 5]), 1), InvalidArgumentError,
     "'T' of int32 is not in the list of allowed values"),
    (lambda: tf.math.approx_max_k(tf.constant([1., 5.], tf.float64), 1), InvalidArgumentError,
     "'T' of float64 is not in the list"),
])
def test_approx_top_k_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_clip_by_global_norm_values_none_and_infinities():
    out, n = tf.clip_by_global_norm([tf.constant([3., 4.]), None, tf.constant([[1., 2.], [2., 4.]])], 2.0)
    np.testing.assert_allclose(out[0], [0.84852815, 1.1313709], rtol=1e-6)
    assert out[1] is None
    np.testing.assert_allclose(out[2], [[0.28284273, 0.56568545], [0.56568545, 1.1313709]], rtol=1e-6)
    np.testing.assert_allclose(n, 7.071068, rtol=1e-6)
    out, n = tf.clip_by_global_norm([tf.constant([np.inf, 1.]), tf.constant([1.])], 2.0)
    assert np.isnan(out[0]).all() and np.isnan(out[1]).all() and float(n) == np.inf
    out, n = tf.clip_by_global_norm([tf.constant([1., 1.])], 2.0, use_norm=tf.constant(1.0))
    assert out[0].numpy().tolist() == [1., 1.] and float(n) == 1.0
    out, n = tf.clip_by_global_norm([tf.constant([1., 1.])], np.inf)
    assert np.isnan(out[0]).all()
    out, n = tf.clip_by_global_norm([tf.constant([0., 0.])], 0.0)
    assert np.isnan(out[0]).all() and float(n) == 0.0
    out, n = tf.clip_by_global_norm([], 1.0)
    assert out == [] and float(n) == 0.0 and n.dtype == tf.float32
    out, n = tf.clip_by_global_norm([tf.constant([1., 1.], tf.float16)], 2.0)
    assert out[0].dtype == tf.float16 and n.dtype == tf.float16
    with pytest.raises(TypeError, match="should be a sequence of tensors"):
        tf.clip_by_global_norm(tf.constant([1., 2.]), 1.0)


def _clip_grads(x, c):
    with tf.GradientTape(persistent=True) as t:
        t.watch([x[0], x[1], c])
        out, n = tf.clip_by_global_norm(x, c)
        s = tf.reduce_sum(out[0] * tf.constant([1., 2.], tf.float64)) + tf.reduce_sum(out[1]) * 3 + n
        s2 = tf.reduce_sum(out[0])
    return out, n, t.gradient(s, x), t.gradient(s2, c)


@pytest.mark.parametrize("traced", [False, True])
def test_clip_by_global_norm_gradients(traced, numpy_backend):
    x = [tf.constant([3., 4.], tf.float64), tf.constant([1.], tf.float64)]
    f = tf.function(_clip_grads) if traced else _clip_grads
    out, n, g, gc = f(x, tf.constant(2.0, tf.float64))
    np.testing.assert_allclose(out[0], [1.17669681, 1.56892908], rtol=1e-8)
    np.testing.assert_allclose(out[1], [0.39223227], rtol=1e-7)
    np.testing.assert_allclose(n, 5.0990195135927845, rtol=1e-15)
    np.testing.assert_allclose(g[0], [0.3469747, 0.72412111], rtol=1e-7)
    np.testing.assert_allclose(g[1], [1.16161095], rtol=1e-8)
    np.testing.assert_allclose(gc, 1.3728129459672882, rtol=1e-15)


XS = np.arange(24).reshape(2, 3, 4)
# (begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)
# -> TF 2.21's shape and flattened values
STRIDED = [
    (([1, 0, 1], [2, 3, 4], [1, 1, 2], 0, 0, 0, 0, 0), [1, 3, 2], [13, 15, 17, 19, 21, 23]),
    (([1, -1, 0], [2, 0, 4], [1, -1, 1], 0, 0, 0, 0, 0), [1, 2, 4], [20, 21, 22, 23, 16, 17, 18, 19]),
    (([1, 0, 0], [0, 0, 0], [1, 1, 1], 0, 0, 0, 0, 1), [0, 0], []),
    (([1, 2], [0, 0], [1, 1], 0, 0, 0, 0, 3), [4], [20, 21, 22, 23]),
    (([0, 1], [0, 3], [1, 1], 1, 0, 1, 0, 0), [2, 3, 2], [1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22]),
    (([0, 1, 0], [0, 3, 0], [1, 1, 1], 0, 0, 1, 0, 4), [2, 2], [4, 8, 16, 20]),
    (([0, 0, 1], [0, 0, 2], [1, 1, 1], 0, 0, 1, 2, 0), [2, 3, 1, 1], [1, 5, 9, 13, 17, 21]),
    (([0, 0, 0], [1, 1, 1], [1, 1, 1], 7, 7, 0, 0, 0), [2, 3, 4], list(range(24))),
    (([5, 0, 0], [9, 3, 4], [1, 1, 1], 0, 0, 0, 0, 0), [0, 3, 4], []),
    (([-9, 0, 0], [9, 3, 4], [1, 1, 1], 0, 0, 0, 0, 0), [2, 3, 4], list(range(24))),
    (([1], [2], [1], 0, 0, 0, 1, 0), [1, 2, 3, 4], list(range(24))),
    (([0, 2, 0], [1, 0, 4], [1, -1, 1], 1, 0, 0, 0, 0), [1, 2, 4], [8, 9, 10, 11, 4, 5, 6, 7]),
    (([0, 0, 0], [0, 0, 0], [1, 1, 1], 1, 1, 0, 0, 1), [0, 0], []),
    (([0, 0, 0], [2, 1, 4], [1, 1, 1], 0, 0, 0, 2, 2), [2, 1, 3, 4], list(range(24))),
]


def _strided_all(x):
    return [tf.strided_slice(x, *args) for args, _, _ in STRIDED]


@pytest.mark.parametrize("traced", [False, True])
def test_strided_slice_masks(traced, numpy_backend):
    f = tf.function(_strided_all) if traced else _strided_all
    for (args, shape, values), got in zip(STRIDED, f(tf.constant(XS))):
        assert list(got.shape) == shape and got.numpy().ravel().tolist() == values, args


def test_strided_slice_gradient():
    x = tf.constant(XS, tf.float64)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.strided_slice(x, [1, -1, 0], [2, 0, 4], [1, -1, 2])
        s = tf.reduce_sum(y * tf.reshape(tf.range(1, 5, dtype=tf.float64), [1, 2, 2]))
    want = [0.0] * 16 + [3.0, 0.0, 4.0, 0.0, 1.0, 0.0, 2.0, 0.0]     # TF 2.21's
    assert t.gradient(s, x).numpy().ravel().tolist() == want


@pytest.mark.parametrize("args, message", [
    (([0, 1, 0], [1, 2, 4], [1, -1, 1], 0, 0, 0, 0, 2), "only stride 1 allowed on non-range indexing"),
    (([2, 0, 0], [0, 0, 0], [1, 1, 1], 0, 0, 0, 0, 1), "slice index 2 of dimension 0 out of bounds"),
    (([0, 0, 0], [2, 3, 4], [1, 0, 1], 0, 0, 0, 0, 0), r"strides\[1\] must be non-zero"),
    (([0, 0], [2, 3], [1, 1], 0, 0, 3, 0, 0), "Multiple ellipses in slice spec not allowed"),
    (([0, 0, 0, 0], [2, 3, 4, 1], [1, 1, 1, 1], 0, 0, 0, 0, 0),
     "Index out of range using input dim 3; input has only 3 dims"),
    (([0, 0], [2, 3, 4], [1, 1], 0, 0, 0, 0, 0),
     r"Expected begin, end, and strides to be 1D equal size tensors, but got shapes \[2\], \[3\], and \[2\]"),
])
def test_strided_slice_errors(args, message):
    with pytest.raises(InvalidArgumentError, match=message):
        tf.strided_slice(tf.constant(XS), *args)


def test_batch_norm_with_global_normalization_and_matrix_square_root():
    x = tf.constant([[1., 3.], [2., -1.]])
    args = (x, tf.constant([1., 2.]), tf.constant([0.25, 4.]), tf.constant([0.5, -1.]),
            tf.constant([2., 3.]), 0.01)
    np.testing.assert_allclose(tf.nn.batch_norm_with_global_normalization(*args, True),
                               [[0.5, 0.49812865257263184], [4.422322750091553, -5.494385719299316]], rtol=1e-6)
    np.testing.assert_allclose(tf.nn.batch_norm_with_global_normalization(*args, False),
                               [[0.5, -0.5006238222122192], [2.4611613750457764, -2.4981284141540527]], rtol=1e-6)
    assert tf.matrix_square_root is tf.linalg.sqrtm
