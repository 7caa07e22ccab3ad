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


def test_bitcast_is_tensorflows():
    x = tf.constant([1.0, -2.5, 3.0])
    assert tf.bitcast(x, tf.int32).numpy().tolist() == [1065353216, -1071644672, 1077936128]
    u8 = tf.bitcast(x, tf.uint8)
    assert u8.shape == (3, 4) and u8.numpy().tolist() == [[0, 0, 128, 63], [0, 0, 32, 192], [0, 0, 64, 64]]
    assert tf.bitcast(tf.constant([[1, 2, 3, 4]], tf.uint8), tf.int32).numpy().tolist() == [67305985]
    got = tf.bitcast(tf.constant([[1, 2], [3, 4]], tf.int16), tf.float32).numpy().tolist()
    assert got == [1.8367239361444675e-40, 3.673461885273578e-40]
    assert tf.bitcast(tf.constant([1.5], tf.float64), tf.int64).numpy().tolist() == [4609434218613702656]
    assert int(tf.bitcast(tf.constant(1.5, tf.float16), tf.int16)) == 15872
    s = tf.bitcast(tf.constant([1, 0], tf.int32), tf.float64)
    assert s.shape == () and float(s) == 5e-324
    for x, t in [(tf.constant([1, 2, 3], tf.uint8), tf.int32), (tf.constant(1, tf.uint8), tf.int32)]:
        with pytest.raises(InvalidArgumentError, match="Cannot bitcast from 4 to 3"):
            tf.bitcast(x, t)
    with pytest.raises(InvalidArgumentError, match="attr 'T' of bool"):
        tf.bitcast(tf.constant([True]), tf.int8)
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.bitcast(tf.bitcast(x, tf.int32), tf.float32)
    assert t.gradient(y, x) is None        # TF 2.21: not differentiable

    @tf.function
    def f(x):
        shapes.append(tuple(tf.bitcast(x, tf.uint8).shape))
        return x
    shapes = []
    f.get_concrete_function(tf.TensorSpec([None, 2]))
    assert shapes == [(None, 2, 4)]


def test_sobol_sample_is_tensorflows():
    got = tf.math.sobol_sample(5, 8)
    assert got.dtype == tf.float32 and got.numpy().tolist() == [     # TF 2.21's
        [0.5, 0.5, 0.5, 0.5, 0.5], [0.75, 0.25, 0.25, 0.25, 0.75], [0.25, 0.75, 0.75, 0.75, 0.25],
        [0.375, 0.375, 0.625, 0.875, 0.375], [0.875, 0.875, 0.125, 0.375, 0.875],
        [0.625, 0.125, 0.875, 0.625, 0.625], [0.125, 0.625, 0.375, 0.125, 0.125],
        [0.1875, 0.3125, 0.9375, 0.4375, 0.5625]]
    got = tf.math.sobol_sample(4, 6, skip=2**20 + 3, dtype=tf.float64)
    assert got.numpy().tolist() == [
        [0.3750014305114746, 0.09375715255737305, 0.05457258224487305, 0.20844602584838867],
        [0.8750014305114746, 0.593757152557373, 0.554572582244873, 0.7084460258483887],
        [0.6250014305114746, 0.34375715255737305, 0.30457258224487305, 0.45844602584838867],
        [0.1250014305114746, 0.843757152557373, 0.804572582244873, 0.9584460258483887],
        [0.1875014305114746, 0.15625715255737305, 0.36707258224487305, 0.6459460258483887],
        [0.6875014305114746, 0.656257152557373, 0.867072582244873, 0.14594602584838867]]
    assert tf.function(lambda: tf.math.sobol_sample(3, 2, skip=5, dtype=tf.float64))().numpy().tolist() == [
        [0.625, 0.125, 0.875], [0.125, 0.625, 0.375]]
    assert tf.math.sobol_sample(21200, 1).shape == (1, 21200)
    for args, message in [((0, 3), "dim must be at least one"), ((21201, 1), "dim must be at most 21200"),
                          ((2, -1), "num_results must be at least one"), ((2, 2, -1), "skip must be non-negative"),
                          ((2, 2, 2**31 - 2), "num_results\\+skip must be less than 2147483647")]:
        with pytest.raises(InvalidArgumentError, match=message):
            tf.math.sobol_sample(*args)
    with pytest.raises(InvalidArgumentError, match="'dtype' of int32"):
        tf.math.sobol_sample(2, 2, dtype=tf.int32)


def test_parallel_stack_is_tensorflows(numpy_backend):
    a, b = tf.constant([1., 2.]), tf.constant([3., 4.])
    with pytest.raises(RuntimeError, match="not compatible with eager execution"):
        tf.parallel_stack([a, b])
    assert tf.function(lambda: tf.parallel_stack([1, 2]))().numpy().tolist() == [1, 2]
    got = tf.function(lambda a, b: tf.parallel_stack([a, b]))(a, b)
    assert got.numpy().tolist() == [[1., 2.], [3., 4.]]
    with pytest.raises(InvalidArgumentError, match="Dimension 1 in both shapes must be equal, but are 3 and 2"):
        tf.function(lambda a: tf.parallel_stack([a, tf.constant([1., 2., 3.])]))(a)
    with pytest.raises(ValueError, match="shape attr must be fully defined"):
        tf.function(lambda x: tf.parallel_stack([x, x])).get_concrete_function(tf.TensorSpec([None, 2]))

    @tf.function
    def grad(a, b):
        with tf.GradientTape() as t:
            t.watch([a, b])
            s = tf.reduce_sum(tf.parallel_stack([a, b]))
        return t.gradient(s, [a, b])
    with pytest.raises(LookupError, match="no entry for: ParallelConcat"):   # TF 2.21's
        grad(a, b)
