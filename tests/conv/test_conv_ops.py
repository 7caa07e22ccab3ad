"""Convolutions and pooling against TensorFlow 2.21's facts (tf_facts.py), eagerly, traced in a
function, and compiled; TF's errors; one compiled program for several batch and image sizes."""
import logging

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

from conv import conv_table
from conv.tf_facts import FACTS

CASES = [pytest.param(c, id=conv_table.name(c)) for c in conv_table.CASES]


def _tol(case):
    return dict(rtol=2e-4, atol=2e-3) if conv_table.dtype(case) == "float32" else \
        dict(rtol=1e-9, atol=1e-8)


def _check(got, case):
    want = FACTS[conv_table.name(case)]
    np.testing.assert_allclose(got[:len(want)], want, **_tol(case))


@pytest.mark.parametrize("case", CASES)
def test_eager_matches_tensorflow(case):
    _check(_facts_in(case, float), case)


def _facts_in(case, num):
    want = FACTS[conv_table.name(case)]
    fn = conv_table.facts if len(want) > 5 else conv_table.forward_facts
    return fn(tf, case, num)


def test_traced_matches_tensorflow(numpy_backend):
    """Every case inside one function (the traced graph, run on the interpreter)."""
    num = lambda v: tf.cast(v, tf.float64)   # noqa: E731

    @tf.function
    def all_facts():
        return [tf.stack([v if hasattr(v, "dtype") else tf.constant(v, tf.float64)
                          for v in _facts_in(c, num)]) for c in conv_table.CASES]

    for case, got in zip(conv_table.CASES, all_facts()):
        _check(got.numpy().tolist(), case)


# one compiled program: a small CNN's loss, gradients and a second-order term, at three
# batch and image sizes
W1 = np.cos(0.3 * np.arange(3 * 3 * 2 * 4)).reshape(3, 3, 2, 4)
W2 = np.sin(0.2 * np.arange(2 * 2 * 4 * 3)).reshape(2, 2, 4, 3)


def _cnn(x, w1, w2):
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([w1, w2])
        with tf.GradientTape() as tape:
            tape.watch([x, w1, w2])
            h = tf.nn.relu(tf.nn.conv2d(x, w1, 2, "SAME"))
            h = tf.nn.max_pool2d(h, 2, 1, "SAME")
            h = tf.nn.depthwise_conv2d(h, tf.ones([2, 2, 4, 1], x.dtype), [1, 1, 1, 1], "VALID")
            h = tf.nn.avg_pool2d(tf.nn.conv2d(h, w2, 1, "VALID", dilations=1), 2, 2, "SAME")
            loss = tf.reduce_sum(h * h)
        gx, g1, g2 = tape.gradient(loss, [x, w1, w2])
        pen = tf.reduce_sum(gx * gx)
    return loss, g1, g2, outer.gradient(pen, w1)


def test_compiled_equals_eager_at_three_sizes(caplog):
    """Compiled (not the interpreter) and == eager; the three traces' programs are one source,
    so the second and third share the first's machine code."""
    caplog.set_level(logging.INFO, logger="tapeflow")
    f = tf.function(_cnn, jit_compile=True)
    for shape in [(2, 9, 8, 2), (1, 11, 7, 2), (3, 8, 10, 2)]:
        x = np.sin(np.arange(np.prod(shape)) * 0.21).reshape(shape)
        args = [tf.constant(x), tf.constant(W1), tf.constant(W2)]
        want = _cnn(*args)
        got = f(*args)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-9)
    compiles = [r.tapeflow for r in caplog.records
                if getattr(r, "tapeflow", {}).get("event") == "compile"]
    assert [c["tier"] for c in compiles] == ["numba"] * 3
    assert [c["cache"] for c in compiles[1:]] == ["hit (in memory)"] * 2


def test_gradient_through_a_function():
    """A tape outside a compiled call differentiates through it, to second order."""
    f = tf.function(lambda x, w: tf.reduce_sum(tf.nn.max_pool2d(
        tf.nn.conv2d(x, w, 2, "SAME") ** 2, 2, 1, "VALID")), jit_compile=True)
    x = tf.constant(np.sin(np.arange(2 * 9 * 8 * 2) * 0.21).reshape(2, 9, 8, 2))
    w = tf.constant(W1)
    results = []
    for fn in (f, f.python_function):
        with tf.GradientTape() as outer:
            outer.watch(w)
            with tf.GradientTape() as tape:
                tape.watch([x, w])
                y = fn(x, w)
            gx = tape.gradient(y, x)
            pen = tf.reduce_sum(gx * gx)
        results.append([y, gx, outer.gradient(pen, w)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-9)


def test_errors_name_what_is_wrong():
    x = tf.ones([1, 5, 5, 4])
    with pytest.raises(InvalidArgumentError, match="evenly divisible by filter depth: 4 vs 3"):
        tf.nn.conv2d(x, tf.ones([3, 3, 3, 2]), 1, "SAME")
    with pytest.raises(InvalidArgumentError, match="must be 4-dimensional"):
        tf.nn.conv2d(tf.ones([5, 5, 4]), tf.ones([3, 3, 4, 2]), 1, "VALID")
    with pytest.raises(InvalidArgumentError, match="Computed output size would be negative"):
        tf.nn.conv2d(tf.ones([1, 1, 1, 4]), tf.ones([3, 3, 4, 2]), 1, "VALID")
    with pytest.raises(InvalidArgumentError, match="strides should be larger than 0"):
        tf.nn.conv2d(x, tf.ones([3, 3, 4, 2]), 0, "VALID")
    with pytest.raises(InvalidArgumentError, match="strides in the batch and depth"):
        tf.nn.conv2d(x, tf.ones([3, 3, 4, 2]), [2, 1, 1, 1], "VALID")
    with pytest.raises(InvalidArgumentError, match="must be nonnegative"):
        tf.nn.conv2d(x, tf.ones([3, 3, 4, 2]), 1, [[0, 0], [1, 2], [0, -1], [0, 0]])
    with pytest.raises(InvalidArgumentError, match="Pooling is not yet supported on the batch"):
        tf.nn.max_pool(x, [2, 2, 2, 1], 1, "VALID")
    with pytest.raises(ValueError, match="Left padding 2 needs to be smaller than the window"):
        tf.nn.max_pool2d(x, 2, 1, [[0, 0], [2, 0], [0, 0], [0, 0]])
    with pytest.raises(InvalidArgumentError, match="dtype int32"):
        tf.nn.avg_pool2d(tf.ones([1, 4, 4, 1], tf.int32), 2, 2, "VALID")
    with pytest.raises(InvalidArgumentError, match="float64"):
        tf.nn.conv2d(x, tf.ones([3, 3, 4, 2], tf.float64), 1, "VALID")
    # VALID with a window one larger than the input: an empty output, as TensorFlow's
    assert tf.nn.conv2d(tf.ones([1, 2, 2, 4]), tf.ones([3, 3, 4, 2]), 1, "VALID").shape == \
        (1, 0, 0, 2)


def test_max_pool_with_argmax_and_int_convolution():
    # TF 2.21's values
    x = tf.reshape(tf.constant([(-1.0) ** (k // 3) * k for k in range(32)]), [1, 4, 4, 2])
    y, am = tf.nn.max_pool_with_argmax(x, 2, 2, "VALID")
    assert am.dtype == tf.int64
    assert am.numpy().ravel().tolist() == [8, 1, 14, 13, 26, 25, 30, 31]
    assert y.numpy().ravel().tolist() == [8.0, 1.0, 14.0, 13.0, 26.0, 25.0, 30.0, 31.0]
    _, am = tf.nn.max_pool_with_argmax(tf.concat([x, x], 0), 2, 2, "VALID",
                                       include_batch_in_index=True)
    assert am.numpy()[1].ravel().tolist() == [40, 33, 46, 45, 58, 57, 62, 63]
    _, am = tf.nn.max_pool_with_argmax(x, 3, 2, "SAME", output_dtype=tf.int32)
    assert am.dtype == tf.int32
    assert am.numpy().ravel().tolist() == [20, 19, 20, 13, 26, 25, 30, 31]
    yi = tf.nn.conv2d(tf.ones([1, 3, 3, 1], tf.int32), tf.ones([2, 2, 1, 1], tf.int32), 1, "VALID")
    assert yi.dtype == tf.int32 and yi.numpy().ravel().tolist() == [4, 4, 4, 4]


def test_vectorized_jacobians_match_the_loop(recwarn):
    """The batching rules (seeds folded into N, or into channel groups for filters, depthwise
    ones too) give the jacobians a loop over the seeds gives, without falling back to loops."""
    r = np.random.default_rng(0)
    x = tf.constant(r.standard_normal((2, 5, 4, 2)))
    w = tf.constant(r.standard_normal((3, 2, 2, 3)))
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, w])
        y = tf.nn.max_pool2d(tf.nn.conv2d(x, w, 2, "SAME") ** 2, 2, 1, "SAME")
        z = tf.nn.avg_pool2d(tf.nn.depthwise_conv2d(x, w[..., :1] ** 2, [1, 1, 1, 1], "VALID"),
                             2, 1, "VALID")
    for out, src in [(y, x), (y, w), (z, x), (z, w)]:
        fast = t.jacobian(out, src)
        slow = t.jacobian(out, src, experimental_use_pfor=False)
        np.testing.assert_allclose(fast.numpy(), slow.numpy(), rtol=1e-10, atol=1e-12)
    assert not [w for w in recwarn if "no batching rule" in str(w.message)]
