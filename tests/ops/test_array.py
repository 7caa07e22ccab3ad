"""Shape ops: values, shapes and dtypes against NumPy, slicing with every key kind, errors
naming the op and shapes, and hypothesis sweeps with gradient checks (first and second order)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tapeflow.testing import check_gradients

SWEEP = settings(max_examples=15, deadline=None)
SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3)


def _values(data, shape):
    seed = data.draw(st.integers(0, 2**16))
    return np.random.default_rng(seed).uniform(-2, 2, shape)


def _same(got, want):
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got.numpy(), want)


# -- hypothesis sweeps ------------------------------------------------------------------

@SWEEP
@given(data=st.data(), shape=hnp.array_shapes(min_dims=2, max_dims=4, min_side=1, max_side=3))
def test_basic_indexing_sweep(data, shape):
    x = _values(data, shape)
    key = data.draw(hnp.basic_indices(shape, allow_newaxis=True))
    _same(tf.constant(x)[key], x[key])
    check_gradients(lambda t: (t * t)[key], x, order=2)


@SWEEP
@given(data=st.data(), shape=SHAPES)
def test_reshape_transpose_sweep(data, shape):
    x = _values(data, shape)
    perm = data.draw(st.permutations(range(len(shape))))
    new = data.draw(st.sampled_from([(-1,), (x.size, 1), (1, -1)]))
    _same(tf.transpose(x, perm), np.transpose(x, perm))
    _same(tf.reshape(x, new), np.reshape(x, new))
    check_gradients(lambda t: tf.reshape(tf.transpose(t * t, perm), new), x, order=2)


@SWEEP
@given(data=st.data(), shape=SHAPES)
def test_expand_dims_squeeze_sweep(data, shape):
    x = _values(data, shape)
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    _same(tf.expand_dims(x, axis), np.expand_dims(x, axis))
    _same(tf.squeeze(np.expand_dims(x, axis), axis), x)
    _same(tf.squeeze(x), np.squeeze(x))
    check_gradients(lambda t: tf.squeeze(tf.expand_dims(t * t, axis)), x, order=2)


@SWEEP
@given(data=st.data(), shape=SHAPES)
def test_concat_stack_unstack_split_sweep(data, shape):
    x, y = _values(data, shape), _values(data, shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    _same(tf.concat([x, y], axis), np.concatenate([x, y], axis))
    _same(tf.stack([x, y], axis), np.stack([x, y], axis))
    for got, want in zip(tf.unstack(x, axis=axis), np.moveaxis(x, axis, 0), strict=True):
        _same(got, want)
    for got, want in zip(tf.split(x, shape[axis], axis), np.split(x, shape[axis], axis), strict=True):
        _same(got, want)
    check_gradients(lambda a, b: tf.concat([a * b, b], axis), x, y, order=2)
    check_gradients(lambda a, b: tf.stack([a * b, b], axis), x, y, order=2)
    check_gradients(lambda a: tf.unstack(a * a, axis=axis)[-1], x, order=2)
    check_gradients(lambda a: tf.split(a * a, shape[axis], axis)[0], x, order=2)


@SWEEP
@given(data=st.data(), shape=SHAPES)
def test_tile_pad_sweep(data, shape):
    x = _values(data, shape)
    mult = data.draw(st.lists(st.integers(1, 3), min_size=len(shape), max_size=len(shape)))
    pads = data.draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)),
                              min_size=len(shape), max_size=len(shape)))
    _same(tf.tile(x, mult), np.tile(x, mult))
    _same(tf.pad(x, pads, constant_values=-1.0), np.pad(x, pads, constant_values=-1.0))
    check_gradients(lambda t: tf.tile(t * t, mult), x, order=2)
    check_gradients(lambda t: tf.pad(t * t, pads), x, order=2)


@SWEEP
@given(data=st.data(), shape=SHAPES)
def test_gather_sweep(data, shape):
    x = _values(data, shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    idx_shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    idx = data.draw(hnp.arrays(np.int32, idx_shape, elements=st.integers(0, shape[axis] - 1)))
    _same(tf.gather(x, idx, axis=axis), np.take(x, idx, axis=axis))
    check_gradients(lambda t: tf.gather(t * t, idx, axis=axis), x, order=2)


# -- concrete values, shapes and dtypes -------------------------------------------------

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("key", [
    0, -1, (1, 2), (slice(None), 0), slice(None, None, -1), (slice(-2, None), slice(None, None, 2)),
    (Ellipsis, 1), (Ellipsis, None, slice(1, 3)), (None, 0, Ellipsis), (0, slice(5, 1, -2), -4),
    (slice(10, -10, -1),), (slice(None), slice(None), slice(None)), Ellipsis, np.int64(1),
])
def test_getitem_matches_numpy(key):
    _same(tf.constant(X)[key], X[key])


def test_getitem_with_tensor_indices_and_variables():
    t = tf.constant(X)
    _same(t[tf.constant(1), :, tf.constant(-1, tf.int64)], X[1, :, -1])
    _same(t[tf.constant(0):tf.constant(2), ::tf.constant(2)], X[0:2, ::2])
    _same(tf.Variable(X)[1, tf.newaxis], X[1, None])
    _same(tf.constant([1, 2, 3])[1:], np.array([2, 3], np.int32))
    assert [float(v) for v in tf.constant([1.0, 2.0])] == [1.0, 2.0]


@pytest.mark.parametrize("key, err, match", [
    (2, InvalidArgumentError, r"StridedSlice: slice index 2 of dimension 0 out of bounds.*float32\[2, 3, 4\]"),
    ((0, 0, -5), InvalidArgumentError, "slice index -5 of dimension 2 out of bounds"),
    ((0, 0, 0, 0), InvalidArgumentError, "Index out of range using input dim 3"),
    ((Ellipsis, 0, Ellipsis), InvalidArgumentError, "Multiple ellipses"),
    (slice(None, None, 0), InvalidArgumentError, "must be non-zero"),
    ([0, 1], TypeError, "Only integers, slices"),
    (tf.constant([0]), TypeError, "Only integers, slices"),
    (tf.constant(0.0), TypeError, "Only integers, slices"),
    (1.5, TypeError, "Only integers, slices"),
])
def test_getitem_errors(key, err, match):
    with pytest.raises(err, match=match):
        tf.constant(X)[key]


def test_slice_gradient_is_dense_zeros_elsewhere():
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x[1, ::2, -1] * 2.0
    g = tape.gradient(y, x)
    want = np.zeros_like(X)
    want[1, ::2, -1] = 2.0
    _same(g, want)


def test_reshape_transpose_values():
    _same(tf.reshape(X, [4, -1]), X.reshape(4, -1))
    _same(tf.reshape(X, tf.constant([6, 4])), X.reshape(6, 4))
    _same(tf.transpose(X), X.T)
    _same(tf.transpose(X, [1, 0, 2]), X.transpose(1, 0, 2))


def test_stack_and_concat_convert_python_values():
    _same(tf.stack([tf.constant(1.0, tf.float64), 2.0]), np.array([1.0, 2.0]))
    _same(tf.stack([1.0, 2]), np.array([1.0, 2.0], np.float32))
    _same(tf.concat([[1, 2], tf.constant([3])], 0), np.array([1, 2, 3], np.int32))
    one = tf.constant([1.0])
    _same(tf.concat([one], axis=0), np.array([1.0], np.float32))


def test_split_sizes():
    parts = tf.split(X, [1, -1, 1], axis=2)
    assert [p.shape for p in parts] == [(2, 3, 1), (2, 3, 2), (2, 3, 1)]
    assert isinstance(parts, list)
    parts = tf.split(X, tf.constant([2, 1]), axis=1)
    _same(parts[1], X[:, 2:])


def test_unstack_and_split_gradients_fill_zeros():
    x = tf.constant(X)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a = tf.unstack(x, axis=1)[1]
        b = tf.split(x, 2, axis=2)[0]
    _same(tape.gradient(a, x), np.eye(3, dtype=np.float32)[1][None, :, None] * np.ones_like(X))
    _same(tape.gradient(b, x), np.concatenate([np.ones((2, 3, 2)), np.zeros((2, 3, 2))], 2).astype(np.float32))


def test_gather_values_and_duplicate_gradient():
    _same(tf.gather(X, [[1, 0]], axis=-1), np.take(X, [[1, 0]], axis=-1))
    _same(tf.gather(X, tf.constant(2, tf.int64), axis=1), X[:, 2])
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.gather(x, [2, 2, 0])
    g = tape.gradient(y, x)      # TF 2.21: an IndexedSlices (indices [2, 2, 0])
    assert isinstance(g, tf.IndexedSlices) and g.indices.numpy().tolist() == [2, 2, 0]
    _same(tf.convert_to_tensor(g), np.array([1.0, 0.0, 2.0], np.float32))


@pytest.mark.parametrize("indices", [[0, 3], [-1]])
def test_gather_out_of_range(indices):
    with pytest.raises(InvalidArgumentError, match=r"GatherV2: indices\[.*\] = -?\d is not in \[0, 3\)"):
        tf.gather(X, indices, axis=1)


def test_pad_and_slice():
    _same(tf.pad(X, [[0, 1], [1, 0], [0, 0]]), np.pad(X, [(0, 1), (1, 0), (0, 0)]))
    _same(tf.pad(tf.constant([1, 2]), [[1, 1]], constant_values=7), np.array([7, 1, 2, 7], np.int32))
    _same(tf.slice(X, [1, 0, 1], [1, -1, 2]), X[1:2, :, 1:3])
    with pytest.raises(InvalidArgumentError, match=r"Expected size\[2\] in \[0, 3\], but got 4"):
        tf.slice(X, [0, 0, 1], [1, 1, 4])
    with pytest.raises(NotImplementedError):
        tf.pad(X, [[1, 1]] * 3, mode="REFLECT")


def test_shape_size_rank():
    _same(tf.shape(X), np.array([2, 3, 4], np.int32))
    _same(tf.shape(X, out_type=tf.int64), np.array([2, 3, 4], np.int64))
    _same(tf.size(X), np.int32(24))
    _same(tf.rank(X), np.int32(3))


def test_one_hot():
    _same(tf.one_hot([0, 2, 5, -1], 3), np.array([[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]], np.float32))
    _same(tf.one_hot([1, 0], 2, axis=0, on_value=5, off_value=-1),
          np.array([[-1, 5], [5, -1]], np.int32))
    assert tf.one_hot([1], 2, dtype=tf.float64).dtype == tf.float64
    assert tf.one_hot([1], 2, on_value=1.0).dtype == tf.float32
    with pytest.raises(TypeError, match="does not match"):
        tf.one_hot([1], 2, on_value=1.5, dtype=tf.int32)
    with pytest.raises(InvalidArgumentError, match="OneHot.*indices"):
        tf.one_hot([1.0], 2)
    with pytest.raises(InvalidArgumentError, match="OneHot.*indices"):
        tf.one_hot(tf.constant([1.7]), 2)
    # TF 2.21 takes a float NumPy array, truncating: [[0, 1, 0], [1, 0, 0], [0, 0, 1]]
    _same(tf.one_hot(np.array([1.7, -0.5, 2.9], np.float32), 3),
          np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], np.float32))


def test_non_differentiable_ops_give_none():
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.cast(tf.shape(x), tf.float32) * tf.cast(tf.size(x), tf.float32)
    assert tape.gradient(y, x) is None


@pytest.mark.parametrize("fn, match", [
    (lambda: tf.reshape(X, [5, -1]), r"Reshape: Input to reshape is a tensor with 24 values.*float32\[2, 3, 4\]"),
    (lambda: tf.reshape(X, [5, 5]), "Reshape"),
    (lambda: tf.transpose(X, [0, 0, 1]), "Transpose: perm"),
    (lambda: tf.expand_dims(X, 4), "ExpandDims: Tried to expand dim index 4"),
    (lambda: tf.squeeze(X, 1), r"Squeeze: Can not squeeze dim\[1\]"),
    (lambda: tf.squeeze(X, 3), "Squeeze: Tried to squeeze dim index 3"),
    (lambda: tf.concat([X, X[:, :2]], 2), r"ConcatV2: .*Dimension mismatch.*\[2, 2, 4\]"),
    (lambda: tf.concat([X, X], 3), "ConcatV2: axis 3 is out of range"),
    (lambda: tf.concat([tf.constant(1.0), tf.constant(2.0)], 0), "Can't concatenate scalars"),
    (lambda: tf.stack([X, X[0]]), r"Pack: .*same shape.*\[3, 4\]"),
    (lambda: tf.stack([X, X], axis=4), "Pack: axis 4 is out of range"),
    (lambda: tf.unstack(X, axis=3), "Unpack: axis 3 is out of range"),
    (lambda: tf.split(X, 3, axis=2), "Split: Number of ways to split should evenly divide"),
    (lambda: tf.split(X, [1, 1], axis=1), "Split: Determined shape must"),
    (lambda: tf.tile(X, [1, 2]), "Tile: Expected multiples argument to be a vector of length 3"),
    (lambda: tf.pad(X, [[1, 1]]), r"Pad: paddings must be a matrix of shape \[3, 2\]"),
    (lambda: tf.pad(X, [[1, 1], [0, -1], [0, 0]]), "Pad: paddings must be non-negative"),
    (lambda: tf.gather(X, [0], axis=3), "GatherV2: axis 3 is out of range"),
    (lambda: tf.gather(X, [0.0]), "GatherV2: indices has dtype float32"),
    (lambda: tf.broadcast_to(X, [3, 3, 4]), r"BroadcastTo: .*float32\[2, 3, 4\]"),
])
def test_errors_name_the_op_and_shapes(fn, match):
    with pytest.raises(InvalidArgumentError, match=match):
        fn()
