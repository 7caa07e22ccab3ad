"""Forward mode at any nesting, read whenever (issue 25): each case states TensorFlow 2.21's result.

Tangents are computed as ops run (autodiff/forward.py), so jvps read after the ``with`` blocks
closed, nested accumulators and tapes, a variable made in a function's first trace and
``custom_gradient`` all give TF's values: eagerly, inside a compiled function (compiled ==
eager) and through one.
"""
import gc
import weakref

import numpy as np
import pytest

import tapeflow as tf

X11_35 = 3.5 * 2.5 * 1.1 ** 1.5       # TF 2.21: 10.094786 (d²/dx² x**3.5 at 1.1)
X11_35_3 = 3.5 * 2.5 * 1.5 * 1.1 ** 0.5   # TF 2.21: 13.765615


def _close(t, expected, rtol=2e-6):
    np.testing.assert_allclose(np.asarray(t), np.float32(expected), rtol=rtol, atol=1e-6)


def _acc(x, t=1.0):
    return tf.autodiff.ForwardAccumulator(x, tf.constant(t))


def _nested_read_after(x):
    with _acc(x) as outer:
        with _acc(x) as inner:
            y = x ** 3.5
    return outer.jvp(inner.jvp(y))


def _triple(x):
    with _acc(x) as a1:
        with _acc(x) as a2:
            with _acc(x) as a3:
                y = x ** 3.5
    return a1.jvp(a2.jvp(a3.jvp(y)))


def _back_over_forward_read_after(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        with _acc(x) as acc:
            y = x ** 3.5
    return tape.gradient(acc.jvp(y), x)


def _mixed(x):
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.5])) as outer:
        with tf.GradientTape() as tape:
            tape.watch(x)
            with tf.autodiff.ForwardAccumulator(x, tf.constant([0.25, 1.0])) as inner:
                y = tf.reduce_sum(tf.sin(x) * x ** 2)
    ij = inner.jvp(y)
    return outer.jvp(ij), tape.gradient(ij, x)


@tf.custom_gradient
def _square_grad3(x):
    def grad(dy):
        return dy * 3
    return x * x, grad


def _custom(x):
    with _acc(x) as acc:
        y = _square_grad3(x)
    return acc.jvp(y)


def _all(x, v):
    return (_nested_read_after(x), _triple(x), _back_over_forward_read_after(x),
            *_mixed(v), _custom(x * 0 + 2.0))


# TF 2.21, eagerly and in a function alike
WANT = [X11_35, X11_35_3, X11_35, -0.45165056, [0.42771184, -1.7587248], 4.0]


def test_nested_accumulators_and_tapes_read_after_their_blocks_eager_and_compiled():
    x, v = tf.constant(1.1), tf.constant([0.3, 1.7])
    eager = _all(x, v)
    compiled = tf.function(_all)(x, v)
    for got, want in zip(eager, WANT, strict=True):
        _close(got, want, rtol=1e-5)
    for e, c in zip(eager, compiled, strict=True):
        _close(c, e.numpy(), rtol=1e-5)


def test_nested_accumulators_through_a_function():
    f = tf.function(lambda x: x ** 3.5)
    x = tf.constant(1.1)
    with _acc(x) as outer:
        with _acc(x) as inner:
            y = f(x)
    _close(outer.jvp(inner.jvp(y)), X11_35, rtol=1e-5)     # TF 2.21: 10.094786


def test_a_variable_made_on_the_first_trace_and_watched():
    made = []

    @tf.function
    def f():
        if not made:
            made.append(tf.Variable([1., 2., 3.]))
        v = made[0]
        with tf.autodiff.ForwardAccumulator(v, tf.constant([0.1, -0.2, 0.3])) as acc:
            z = v * 2
        return acc.jvp(v), acc.jvp(z)

    for _ in range(2):   # TF 2.21: [0.1, -0.2, 0.3] and [0.2, -0.4, 0.6], every call
        tv, tz = f()
        _close(tv, [0.1, -0.2, 0.3])
        _close(tz, [0.2, -0.4, 0.6])
    w = tf.Variable([1., 2., 3.])
    with tf.autodiff.ForwardAccumulator(w, tf.constant([0.1, -0.2, 0.3])) as acc:
        z = w * 2
    _close(acc.jvp(w), [0.1, -0.2, 0.3])
    _close(acc.jvp(z), [0.2, -0.4, 0.6])


def test_custom_gradient_forward_pass_is_differentiated_where_it_can_be():
    _close(_custom(tf.constant(2.0)), 4.0)       # TF 2.21: 4.0 (not the gradient function's 3.0)

    @tf.custom_gradient
    def numpy_sin(x):     # a forward pass outside tapeflow: the gradient function is used
        def grad(dy):
            return dy * tf.cos(x)
        return np.sin(x.numpy()), grad

    x = tf.constant([1., 2.])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1., 1.])) as acc:
        y = numpy_sin(x)
    _close(acc.jvp(y), [0.5403023, -0.41614684])  # TF 2.21


def test_the_accumulator_holds_primals_weakly():
    x = tf.ones([100])
    t = tf.zeros([100])
    x_weak = weakref.ref(x)
    with tf.autodiff.ForwardAccumulator(x, t) as acc:
        derived = tf.constant(2.) * x
        _close(acc.jvp(x), np.zeros(100))
        del x
        gc.collect()
        assert x_weak() is None                   # TF 2.21: None (testDeadTensorsJVPCleared)
    _close(acc.jvp(derived), np.zeros(100))


def test_reentering_and_its_messages():
    x = tf.constant(-2.)
    acc = tf.autodiff.ForwardAccumulator(x, 1.5)
    with acc:
        _close(acc.jvp(x), 1.5)
        y = 4. * x
        _close(acc.jvp(y), 6.)
        with pytest.raises(ValueError, match=r"^Accumulator is already recording\.$"):
            with acc:
                pass
    assert acc.jvp(4. * x) is None                # TF 2.21: None (computed outside)
    with acc:
        yy = y * y
    _close(acc.jvp(yy), -96.)                     # TF 2.21: -96.0
    with pytest.raises(ValueError, match="was specified as a primal multiple times"):
        tf.autodiff.ForwardAccumulator([x, x], [1., 2.])


def test_unconnected_gradients_nonsense_messages():
    x = tf.constant([[1.0]])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([[1.0]])) as acc:
        y = x * 2
    with pytest.raises(ValueError, match=r"^'nonsense' is not a valid UnconnectedGradients$"):
        acc.jvp(y, unconnected_gradients="nonsense")
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 2
    unknown = r"^Unknown value for unconnected_gradients: 'nonsense'$"
    with pytest.raises(ValueError, match=unknown):
        tape.gradient(y, x, unconnected_gradients="nonsense")
    for method in ("jacobian", "batch_jacobian"):     # TF 2.21: pfor wraps it; the loop does not
        with pytest.raises(ValueError, match=f"^Encountered an exception while vectorizing the "
                                             f"{method} computation"):
            getattr(tape, method)(y, x, unconnected_gradients="nonsense")
        with pytest.raises(ValueError, match=unknown):
            getattr(tape, method)(y, x, unconnected_gradients="nonsense",
                                  experimental_use_pfor=False)


def test_batch_jacobian_parallel_iterations_on_a_non_persistent_tape(numpy_backend):
    def bj(x, **kw):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        return tape.batch_jacobian(y, x, parallel_iterations=8, **kw)

    want = np.broadcast_to(np.eye(3, dtype=np.float32) * 2, (2, 3, 3))
    x = tf.ones((2, 3))
    # TF 2.21: inside a function both ways compute it; eagerly only pfor does, the loop raises
    _close(tf.function(lambda x: bj(x, experimental_use_pfor=False))(x), want)
    _close(tf.function(bj)(x), want)
    _close(bj(x), want)
    with pytest.raises(RuntimeError, match="GradientTape must be created with persistent=True"):
        bj(x, experimental_use_pfor=False)
