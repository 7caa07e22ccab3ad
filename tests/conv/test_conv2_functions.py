"""Dilated pooling and with_space_to_batch, tf.conv, the V2 conv backprops, volume patches,
dilation2d and erosion2d (ops/dilated.py, ops/conv_raw.py, ops/morphology.py) against TensorFlow 2.21's facts (conv2_facts.py), eagerly
and compiled, with their gradients; and their argument errors."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.testing import check_gradients

from conv import conv2_functions as F
from conv.conv2_facts import FACTS


@pytest.fixture(autouse=True)
def _no_global_seed():
    """The facts were taken without a global seed (fractional pooling's seed pair uses it)."""
    tf.random.set_seed(None)
    yield
    tf.random.set_seed(None)


def _close(got, want, name):
    tol = dict(rtol=2e-5, atol=1e-4) if name in F.FLOAT32 else dict(rtol=1e-9, atol=1e-9)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w is None:      # TensorFlow has no gradient (its Conv op): ours is Conv2D's
            continue
        np.testing.assert_allclose(g, w, **tol, err_msg=name)


ALL = {**F.FUNCS, **F.MORPH_FUNCS, **F.FRACTIONAL_FUNCS, **{k: (v[0], v[2]) for k, v in F.V2_FUNCS.items()}}


@pytest.mark.parametrize("name", sorted(ALL))
def test_matches_tensorflow(name, numpy_backend):
    fn, x = ALL[name]
    _close(F.facts(tf, fn, x), FACTS[name], name)


# Compiled == eager, a function and its gradient per program: one in the default run (a
# program's cold compile is seconds), the rest under -m slow.
COMPILED = ["pool_max_dilated"]
COMPILED_SLOW = ["fractional_max_random", "fractional_avg_random_overlapping",
                 "pool_avg_dilated", "space_to_batch_nd", "volume_patches_same",
                 "with_s2b_conv_same"]


def test_compiled_matches_eager():
    _compiled_matches_eager(COMPILED)


@pytest.mark.slow
def test_compiled_matches_eager_more():
    _compiled_matches_eager(COMPILED_SLOW)


def _compiled_matches_eager(names):
    @tf.function
    def run(*xs):
        out = []
        for name, x in zip(names, xs):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = ALL[name][0](tf, x)
                loss = tf.reduce_sum(y * y)
            out += [y, tape.gradient(loss, x)]
        return out

    xs = [tf.constant(ALL[name][1]) for name in names]
    got = run(*xs)
    for i, name in enumerate(names):
        x = tf.constant(ALL[name][1])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = ALL[name][0](tf, x)
            loss = tf.reduce_sum(y * y)
        g = tape.gradient(loss, x)
        np.testing.assert_allclose(got[2 * i].numpy(), y.numpy(), rtol=1e-12, atol=1e-12,
                                   err_msg=name)
        np.testing.assert_allclose(got[2 * i + 1].numpy(), g.numpy(), rtol=1e-12, atol=1e-12,
                                   err_msg=name)


def test_second_order(numpy_backend):
    """Composites of differentiable ops: their second derivatives are finite differences'."""
    x4 = F.X4[:1, :5, :4, :2]
    check_gradients(lambda v: tf.nn.pool(v, [2, 2], "AVG", dilations=[2, 1]) ** 2, x4, order=2)
    check_gradients(lambda v: tf.extract_volume_patches(v, [1, 2, 1, 2, 1], [1, 1, 1, 2, 1],
                                                        "SAME") ** 2, F.X5, order=2)


def test_conv_has_no_gradient(numpy_backend):
    """TensorFlow registers no gradient for its generic Conv op (tf.conv)."""
    x = tf.constant(F.X4)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.conv(x, F.W4, [1, 1, 1, 1], "SAME")
    with pytest.raises(LookupError, match="Conv"):
        tape.gradient(y, x)


def test_morphology_second_order_is_lookup_error(numpy_backend):
    """TensorFlow registers no gradient for Dilation2DBackpropInput/Filter."""
    x = tf.constant(F.D_IN)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.nn.erosion2d(x, F.D_FILTER, [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1])
        g = inner.gradient(y, x)
    with pytest.raises(LookupError, match="Dilation2DBackpropInput"):
        outer.gradient(g, x)


def test_fractional_pooling_sequences_and_seeds(numpy_backend):
    """TensorFlow 2.21's cells for seeds 1, 7 and 12345 (its Philox stream, bit for bit), the
    same on every call; seed 0 draws new cells per call; no gradient of the gradient."""
    x = np.zeros([1, 10, 9, 1])
    want = {(False, 1): ([0, 2, 3, 5, 6, 8, 10], [0, 1, 3, 5, 7, 9]),
            (False, 12345): ([0, 1, 3, 4, 6, 8, 10], [0, 2, 3, 5, 7, 9]),
            (True, 1): ([0, 2, 4, 6, 7, 9, 10], [0, 2, 4, 6, 8, 9]),
            (True, 12345): ([0, 2, 3, 5, 7, 8, 10], [0, 2, 4, 6, 8, 9])}
    for (pseudo, seed), (rows, cols) in want.items():
        for _ in range(2):
            _, r, c = tf.nn.fractional_max_pool(x, [1.0, 1.44, 1.73, 1.0], pseudo, seed=seed)
            assert (r.numpy().tolist(), c.numpy().tolist()) == (rows, cols)
            assert r.dtype == tf.int64
    draws = {tuple(tf.nn.fractional_avg_pool(np.zeros([1, 60, 60, 1]), 1.44)[1].numpy())
             for _ in range(4)}
    assert len(draws) > 1
    v = tf.constant(F.F_IN)
    with tf.GradientTape() as outer:
        outer.watch(v)
        with tf.GradientTape() as inner:
            inner.watch(v)
            y = tf.nn.fractional_max_pool(v, 1.5, seed=2)[0]
        g = inner.gradient(y, v)
    with pytest.raises(LookupError, match="FractionalMaxPoolGrad"):
        outer.gradient(g, v)
    with pytest.raises(ValueError, match="first and last elements with value 1.0"):
        tf.nn.fractional_max_pool(x, [1.44, 1.73])
    with pytest.raises(ValueError, match="should be >= 1.0"):
        tf.nn.fractional_avg_pool(x, 0.5)


def test_morphology_ties_and_empty_windows(numpy_backend):
    """Ties go to the window's first maximum; a window with no input position (SAME with a
    large rate) is the dtype's lowest value and routes its gradient to its clamped corner.
    TensorFlow 2.21's values."""
    x = tf.constant(np.ones([1, 1, 3, 1]))
    f = tf.constant(np.zeros([2, 2, 1]))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, f])
        y = tf.nn.dilation2d(x, f, [1, 1, 1, 1], "SAME", "NHWC", [1, 3, 1, 1])
    low = np.finfo(np.float64).min
    assert y.numpy().ravel().tolist() == [low, low, low]
    assert tape.gradient(y, x).numpy().ravel().tolist() == [1.0, 1.0, 1.0]
    assert tape.gradient(y, f).numpy().ravel().tolist() == [3.0, 0.0, 0.0, 0.0]
    y = tf.nn.dilation2d(tf.ones([1, 1, 1, 1]), tf.zeros([2, 1, 1]), [1, 1, 1, 1], "SAME",
                         "NHWC", [1, 3, 1, 1])
    assert y.numpy().ravel().tolist() == [float(np.finfo(np.float32).min)]
    xi = tf.constant(np.arange(6, dtype=np.int32).reshape(1, 2, 3, 1))
    yi = tf.nn.erosion2d(xi, tf.constant(np.ones([2, 2, 1], np.int32)), [1, 1, 1, 1], "VALID",
                         "NHWC", [1, 1, 1, 1])
    assert yi.dtype == tf.int32 and yi.numpy().ravel().tolist() == [-1, 0]


def test_required_space_to_batch_paddings():
    # TensorFlow 2.21: ([[1, 0], [2, 3]], [[0, 0], [0, 2]]) and int32; no base: zeros + extra
    p, c = tf.required_space_to_batch_paddings([5, 4], [2, 3], [[1, 0], [2, 1]])
    assert p.dtype == tf.int32 and c.dtype == tf.int32
    assert p.numpy().tolist() == [[1, 0], [2, 3]] and c.numpy().tolist() == [[0, 0], [0, 2]]
    p, c = tf.required_space_to_batch_paddings(tf.constant([7]), [4])
    assert p.numpy().tolist() == [[0, 1]] and c.numpy().tolist() == [[0, 1]]
    p, c = tf.required_space_to_batch_paddings([], np.zeros([0], np.int32))
    assert p.shape == (0, 2) and c.shape == (0, 2)


def test_argument_errors():
    x = tf.ones([1, 6, 6, 2])
    with pytest.raises(ValueError, match="'SAME' padding is not implemented for `dilation_rate`"):
        tf.nn.pool(x, [2, 2], "MAX", padding="SAME", dilations=[2, 2])
    with pytest.raises(ValueError, match="`strides > 1` not supported in conjunction"):
        tf.nn.pool(x, [2, 2], "MAX", strides=[2, 2], dilations=[2, 1])
    with pytest.raises(ValueError, match="`strides` > `window_shape` not supported"):
        tf.nn.pool(x, [2, 2], "MAX", strides=[3, 1])
    with pytest.raises(ValueError, match="`len\\(window_shape\\)` must be 1, 2, or 3"):
        tf.nn.pool(x, [], "MAX")
    with pytest.raises(ValueError, match="`filter_shape` must be specified"):
        tf.nn.with_space_to_batch(x, [2, 2], "SAME", lambda v, n, p: v)
    with pytest.raises(ValueError, match="`spatial_dims` must be a monotonically increasing"):
        tf.nn.with_space_to_batch(x, [2, 2], "VALID", lambda v, n, p: v, spatial_dims=[2, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="2 or 3 spatial dimensions"):
        tf.conv(tf.ones([1, 5, 2]), tf.ones([2, 2, 1]), [1, 1, 1], "VALID")
    with pytest.raises(tf.errors.UnimplementedError, match="Grouped/Depthwise"):
        tf.conv(tf.ones([1, 5, 5, 4]), tf.ones([2, 2, 2, 2]), [1, 1, 1, 1], "VALID", groups=2)
    with pytest.raises(tf.errors.UnimplementedError, match="NHWC tensor format"):
        tf.conv(x, tf.ones([2, 2, 2, 1]), [1, 1, 1, 1], "VALID", data_format="CHANNELS_FIRST")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Only support ksizes across space"):
        tf.extract_volume_patches(tf.ones([1, 2, 2, 2, 2]), [1, 1, 1, 1, 2], [1, 1, 1, 1, 1],
                                  "VALID")
    with pytest.raises(ValueError, match="data_format"):
        tf.nn.dilation2d(x, tf.zeros([2, 2, 2]), [1, 1, 1, 1], "SAME", "NCHW", [1, 1, 1, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="same depth"):
        tf.nn.dilation2d(x, tf.zeros([2, 2, 3]), [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Length for attr 'strides' of 3"):
        tf.nn.dilation2d(x, tf.zeros([2, 2, 2]), [1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1])
