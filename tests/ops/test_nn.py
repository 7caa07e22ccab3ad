"""Neural-network ops: values against NumPy/SciPy, numerical stability in float32, TF's
second-order structure (zeros, not None, through ReLU), composites, and sweeps of
softmax/log_softmax over shapes and axes."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp
from scipy import special

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tapeflow.runtime.registry import GRADS
from tapeflow.testing import check_gradients

SWEEP = settings(max_examples=15, deadline=None)
R = np.random.default_rng(11)


# -- hypothesis sweeps ----------------------------------------------------------------

@pytest.mark.parametrize("op, ref", [(tf.nn.softmax, special.softmax), (tf.nn.log_softmax, special.log_softmax)],
                         ids=["softmax", "log_softmax"])
@SWEEP
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=3))
def test_softmax_axes(op, ref, data, shape):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    x = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-3, 3)))
    got = op(x, axis=axis)
    np.testing.assert_allclose(got.numpy(), ref(x, axis=axis), rtol=1e-12, atol=1e-12)
    check_gradients(lambda t: op(t, axis=axis) * t, x, order=2)


# TF's gelu builds its constants with tf.cast(python float, dtype), via float32 even for
# float64 inputs (3.7e-9 off); tapeflow's keep float64 exact (issue 18 N1).
SQRT2 = 1.4142135623730951
COEFF = 0.044715
ACTIVATIONS = {
    "relu": (tf.nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (tf.nn.relu6, lambda x: np.clip(x, 0, 6)),
    "elu": (tf.nn.elu, lambda x: np.where(x < 0, np.expm1(x), x)),
    "selu": (tf.nn.selu, lambda x: 1.0507009873554805 * np.where(x < 0, 1.6732632423543772 * np.expm1(x), x)),
    "leaky_relu": (tf.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x)),
    "softplus": (tf.nn.softplus, lambda x: np.logaddexp(0, x)),
    "softsign": (tf.nn.softsign, lambda x: x / (1 + np.abs(x))),
    "gelu": (tf.nn.gelu, lambda x: 0.5 * x * (1 + special.erf(x / SQRT2))),
    "gelu_tanh": (lambda x: tf.nn.gelu(x, approximate=True),
                  lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + COEFF * x ** 3)))),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@SWEEP
@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
                    elements=st.floats(0.2, 7.5).flatmap(lambda v: st.sampled_from([v, -v]))))
def test_activation_values_and_gradients(name, x):
    """|x| in [0.2, 7.5] and never 6: away from every kink (0 for all, 6 for relu6)."""
    op, ref = ACTIVATIONS[name]
    x = np.where(np.abs(np.abs(x) - 6) < 0.2, 5.5, x)
    got = op(x)
    assert got.shape == x.shape and got.dtype == tf.float64
    np.testing.assert_allclose(got.numpy(), ref(x), rtol=1e-12, atol=1e-14)
    check_gradients(lambda t: op(t) * t, x, order=2)


# -- dtypes and TF's conventions --------------------------------------------------------

def test_dtypes_follow_the_input():
    x32 = tf.constant([-1.5, 2.0])
    for fn in (tf.nn.relu, tf.nn.elu, tf.nn.selu, tf.nn.softplus, tf.nn.softsign, tf.nn.softmax, tf.nn.gelu):
        assert fn(x32).dtype == tf.float32
    ints = tf.nn.relu(tf.constant([-1, 2]))
    assert ints.dtype == tf.int32 and ints.numpy().tolist() == [0, 2]
    assert tf.nn.relu6(tf.constant([-1, 9])).numpy().tolist() == [0, 6]
    leaky = tf.nn.leaky_relu(tf.constant([-2, 3]))
    assert leaky.dtype == tf.float32 and np.allclose(leaky.numpy(), [-0.4, 3.0])
    assert tf.nn.sigmoid is tf.math.sigmoid and tf.nn.tanh is tf.math.tanh


def test_leaky_relu_with_alpha_above_one_is_not_a_max():
    np.testing.assert_allclose(tf.nn.leaky_relu([-1.0, 2.0], alpha=3.0).numpy(), [-3.0, 2.0])


def test_softmax_errors_name_the_op():
    with pytest.raises(InvalidArgumentError, match="Softmax"):
        tf.nn.softmax(tf.constant(1.0))
    with pytest.raises(InvalidArgumentError, match="LogSoftmax.*int32"):
        tf.nn.log_softmax(tf.constant([1, 2]))
    with pytest.raises(InvalidArgumentError, match="Softmax"):
        tf.nn.softmax(tf.constant([1.0, 2.0]), axis=1)
    with pytest.raises(InvalidArgumentError, match="ReluGrad.*\\[2\\].*\\[3\\]"):
        from tapeflow.runtime.dispatch import apply
        apply("ReluGrad", [tf.ones([2]), tf.ones([3])])


# -- numerical stability (float32) ---------------------------------------------------

def test_softplus_is_stable_at_large_magnitudes():
    x = tf.constant([-100.0, -20.0, 0.0, 20.0, 100.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.nn.softplus(x)
        g = tape.gradient(y, x).numpy()
    assert y.dtype == tf.float32
    np.testing.assert_allclose(y.numpy(), np.logaddexp(0, np.array([-100, -20, 0, 20, 100.0])), rtol=1e-6,
                               atol=1e-44)
    assert y.numpy()[-1] == 100.0 and np.isfinite(y.numpy()).all()
    np.testing.assert_allclose(g, [0.0, 2.0611537e-09, 0.5, 1.0, 1.0], rtol=1e-6, atol=1e-30)


@pytest.mark.parametrize("values", [[-100.0, 0.0, 100.0], [1000.0, 1000.0, 999.0], [-1000.0, -1001.0, -1000.5]])
def test_softmax_and_log_softmax_are_stable(values):
    x = tf.constant(values)
    ref = np.array(values, np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            s = tf.nn.softmax(x)
            ls = tf.nn.log_softmax(x)
            loss = ls[0] + s[1]
        g = tape.gradient(loss, x)
    assert s.dtype == ls.dtype == tf.float32
    np.testing.assert_allclose(s.numpy(), special.softmax(ref), rtol=1e-6, atol=1e-30)
    np.testing.assert_allclose(ls.numpy(), special.log_softmax(ref), rtol=1e-6)
    assert np.isfinite(g.numpy()).all()


# -- second-order structure ----------------------------------------------------------

@pytest.mark.parametrize("fn", [tf.nn.relu, tf.nn.relu6, tf.nn.leaky_relu], ids=["relu", "relu6", "leaky_relu"])
def test_second_derivative_through_piecewise_linear_is_zeros_not_none(fn):
    x = tf.constant([-1.5, 0.5, 2.0])
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
        g = inner.gradient(y, x)
    h = outer.gradient(g, x)
    assert h is not None and np.array_equal(h.numpy(), np.zeros(3))


def test_relu_saves_only_its_output():
    assert GRADS["Relu"].inputs == () and GRADS["Relu"].outputs == (0,)
    assert GRADS["Softmax"].inputs == () and GRADS["Elu"].inputs == ()
    assert GRADS["Softplus"].inputs == (0,) and GRADS["Softplus"].outputs == ()


def test_elu_second_derivative_matches_exp():
    x = tf.constant([-1.0, 0.5], tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.nn.elu(x)
        g = inner.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), [np.exp(-1.0), 1.0])
    np.testing.assert_allclose(outer.gradient(g, x).numpy(), [np.exp(-1.0), 0.0])


# -- composites -----------------------------------------------------------------------

def test_softmax_cross_entropy_matches_reference_and_tf_gradients():
    logits = R.uniform(-2, 2, (3, 4))
    labels = special.softmax(R.uniform(-1, 1, (3, 4)), axis=-1)
    lt, yt = tf.constant(logits), tf.constant(labels)
    with tf.GradientTape() as tape:
        tape.watch([lt, yt])
        loss = tf.nn.softmax_cross_entropy_with_logits(labels=yt, logits=lt)
    np.testing.assert_allclose(loss.numpy(), -(labels * special.log_softmax(logits, -1)).sum(-1), rtol=1e-12)
    g_logits, g_labels = tape.gradient(loss, [lt, yt])
    np.testing.assert_allclose(g_logits.numpy(), special.softmax(logits, -1) - labels, atol=1e-12)
    np.testing.assert_allclose(g_labels.numpy(), -special.log_softmax(logits, -1), atol=1e-12)
    check_gradients(lambda a: tf.nn.softmax_cross_entropy_with_logits(labels, a, axis=0), logits, order=2)


def test_sparse_softmax_cross_entropy():
    logits = R.uniform(-2, 2, (3, 4))
    labels = np.array([0, 3, 1])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    want = -special.log_softmax(logits, -1)[np.arange(3), labels]
    np.testing.assert_allclose(loss.numpy(), want, rtol=1e-12)
    lt = tf.constant(logits)
    with tf.GradientTape() as tape:
        tape.watch(lt)
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, lt)
    np.testing.assert_allclose(tape.gradient(loss, lt).numpy(),
                               special.softmax(logits, -1) - np.eye(4)[labels], atol=1e-12)
    check_gradients(lambda a: tf.nn.sparse_softmax_cross_entropy_with_logits(labels, a), logits, order=2)
    masked = tf.nn.sparse_softmax_cross_entropy_with_logits([0], [[0.0, -np.inf]])
    assert np.isfinite(masked.numpy()).all()
    with pytest.raises(InvalidArgumentError, match="outside the valid range"):
        tf.nn.sparse_softmax_cross_entropy_with_logits([4, 0, 0], logits)
    with pytest.raises(ValueError, match="Rank mismatch"):
        tf.nn.sparse_softmax_cross_entropy_with_logits([[0]], [1.0, 2.0])


def test_sigmoid_cross_entropy_and_l2_normalize():
    logits = np.array([[-200.0, -1.0, 0.5], [3.0, 200.0, -0.2]])
    labels = R.uniform(0, 1, (2, 3))
    got = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    want = np.logaddexp(0, logits) - logits * labels
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    small = logits / 100.0
    check_gradients(lambda a, b: tf.nn.sigmoid_cross_entropy_with_logits(a, b), labels, small, order=2)
    with pytest.raises(ValueError, match="same shape"):
        tf.nn.sigmoid_cross_entropy_with_logits(labels=labels[0], logits=logits)
    x = R.uniform(-2, 2, (2, 3))
    np.testing.assert_allclose(tf.nn.l2_normalize(x, axis=1).numpy(),
                               x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-12)
    assert np.array_equal(tf.nn.l2_normalize(np.zeros(3)).numpy(), np.zeros(3))
    check_gradients(lambda t: tf.nn.l2_normalize(t, axis=0), x, order=2)


def test_l2_loss_and_bias_add():
    x = R.uniform(-2, 2, (2, 3))
    np.testing.assert_allclose(tf.nn.l2_loss(x).numpy(), (x ** 2).sum() / 2)
    check_gradients(tf.nn.l2_loss, x, order=2)
    b = R.uniform(-1, 1, (3,))
    np.testing.assert_allclose(tf.nn.bias_add(x, b).numpy(), x + b)
    check_gradients(lambda v, c: tf.nn.bias_add(v, c) * v, x, b, order=2)
    nchw = R.uniform(size=(2, 3, 2, 2))
    np.testing.assert_allclose(tf.nn.bias_add(nchw, b, data_format="NCHW").numpy(), nchw + b[:, None, None])
    with pytest.raises(InvalidArgumentError, match="BiasAdd"):
        tf.nn.bias_add(x, tf.ones([4], tf.float64))


def test_dropout_scales_kept_values_and_repeats_with_a_seed():
    x = tf.ones([50, 40])
    tf.random.set_seed(5)
    a = tf.nn.dropout(x, rate=0.25, seed=3).numpy()
    tf.random.set_seed(5)
    b = tf.nn.dropout(x, rate=0.25, seed=3).numpy()
    assert np.array_equal(a, b)
    assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.15 < (a == 0).mean() < 0.35
    assert tf.nn.dropout(x, rate=0.0) is x
    cols = tf.nn.dropout(x, rate=0.5, noise_shape=[1, 40], seed=1).numpy()
    assert (cols == cols[0]).all()
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.dropout(x, rate=0.5, seed=2)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), y.numpy())
    with pytest.raises(ValueError):
        tf.nn.dropout(x, rate=1.0)
