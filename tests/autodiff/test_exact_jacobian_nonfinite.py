"""Vectorized jacobians where the per-row gradient meets inf (issue 17 item 6b).

TensorFlow's jacobian is its per-row gradient, vectorized: a zero seed meets an inf as
0 * inf = NaN, and its SqrtGrad gives 0 for a zero seed. tapeflow keeps one-hot seeds
diagonal, which assumes the reverse sweep maps a zero seed to zero; where a fast result
holds an inf or NaN it runs the program again on dense seeds (``tracer/jacobian.py``,
``exact_where_not_finite``). Every expected value is TensorFlow 2.21's output, eagerly and
in ``tf.function`` alike.
"""
import math

import numpy as np
import pytest

import tapeflow as tf

INF, NAN = math.inf, math.nan
X = [-1.0, 0.0, 0.25, 4.0]

PROGRAMS = {
    "clip": lambda x: tf.sqrt(tf.clip_by_value(x, 0.0, 10.0)),
    "maximum": lambda x: tf.sqrt(tf.maximum(x, 0.0)),
    "relu": lambda x: tf.sqrt(tf.nn.relu(x)),
    "plus_sum": lambda x: tf.sqrt(tf.clip_by_value(x, 0.0, 10.0)) + tf.reduce_sum(x),
    "times_x": lambda x: tf.sqrt(tf.clip_by_value(x, 0.0, 10.0)) * x,
    "sum_times_x": lambda x: tf.reduce_sum(tf.sqrt(tf.clip_by_value(x, 0.0, 10.0))) * x,
    "tall": lambda x: tf.concat([tf.sqrt(tf.clip_by_value(x, 0.0, 10.0)),
                                 tf.sqrt(tf.clip_by_value(x, 0.0, 10.0)) * x], 0),
}

# TensorFlow 2.21 gives:
JACOBIAN = {
    "clip": [[0, 0, 0, 0], [0, INF, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0.25]],
    "maximum": [[0, 0, 0, 0], [0, INF, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0.25]],
    "relu": [[NAN, 0, 0, 0], [0, NAN, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0.25]],
    "plus_sum": [[1, 1, 1, 1], [1, INF, 1, 1], [1, 1, 2, 1], [1, 1, 1, 1.25]],
    "times_x": [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0.75, 0], [0, 0, 0, 3]],
    "sum_times_x": [[2.5, -INF, -1, -0.25], [0, 2.5, 0, 0], [0, INF, 2.75, 0.0625],
                    [0, INF, 4, 3.5]],
    "tall": [[0, 0, 0, 0], [0, INF, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0.25], [0, 0, 0, 0],
             [0, 0, 0, 0], [0, 0, 0.75, 0], [0, 0, 0, 3]],
}
BATCH_JACOBIAN = {      # x reshaped to [2, 2]
    "clip": [[[0, 0], [0, INF]], [[1, 0], [0, 0.25]]],
    "maximum": [[[0, 0], [0, INF]], [[1, 0], [0, 0.25]]],
    "relu": [[[NAN, 0], [0, NAN]], [[1, 0], [0, 0.25]]],
    "plus_sum": [[[2, 2], [2, INF]], [[3, 2], [2, 2.25]]],
    "times_x": [[[0, 0], [0, 0]], [[0.75, 0], [0, 3]]],
    "sum_times_x": [[[2.5, -INF], [0, INF]], [[1.75, -0.1875], [4, 3.5]]],
}
TALL_BATCH = [[[0, 0], [0, INF], [0, 0], [0, 0], [0, 0], [0, INF]],       # concat of s, s * x,
              [[1, 0], [0, 0.25], [0.75, 0], [0, 3], [1, 0], [0, 0.25]]]  # s + 1 on axis 1


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want, dtype=np.float32)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got, want)


def _jacobian(name):
    x = tf.constant(X)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = PROGRAMS[name](x)
    return t.jacobian(y, x)


def _batch_jacobian(name):
    x = tf.reshape(tf.constant(X), [2, 2])
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        if name == "tall":
            s = tf.sqrt(tf.clip_by_value(x, 0.0, 10.0))
            y = tf.concat([s, s * x, s + 1.0], 1)
        else:
            y = PROGRAMS[name](x)
    return t.batch_jacobian(y, x)


@pytest.mark.parametrize("in_function", [False, True])
@pytest.mark.parametrize("name", sorted(JACOBIAN))
def test_jacobian_nan_pattern_is_tensorflows(numpy_backend, name, in_function):
    fn = tf.function(lambda: _jacobian(name)) if in_function else (lambda: _jacobian(name))
    _same(fn(), JACOBIAN[name])


@pytest.mark.parametrize("in_function", [False, True])
@pytest.mark.parametrize("name", sorted(BATCH_JACOBIAN) + ["tall"])
def test_batch_jacobian_nan_pattern_is_tensorflows(numpy_backend, name, in_function):
    fn = tf.function(lambda: _batch_jacobian(name)) if in_function \
        else (lambda: _batch_jacobian(name))
    _same(fn(), TALL_BATCH if name == "tall" else BATCH_JACOBIAN[name])


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_every_mode_gives_tensorflows_pattern(numpy_backend, monkeypatch, mode):
    monkeypatch.setenv("TAPEFLOW_JACOBIAN_MODE", mode)
    _same(_jacobian("relu"), JACOBIAN["relu"])
    _same(_jacobian("tall"), JACOBIAN["tall"])
    _same(_batch_jacobian("clip"), BATCH_JACOBIAN["clip"])


def test_compiled_in_function():
    """Numba: the dense program sits in the untaken branch of a cond until a value is not
    finite."""
    f = tf.function(lambda x: _jacobian_of(x))
    _same(f(tf.constant(X)), JACOBIAN["clip"])
    want = np.diag(0.5 / np.sqrt(np.array([1.0, 2.0, 0.25, 4.0], np.float32)))
    np.testing.assert_allclose(f(tf.constant([1.0, 2.0, 0.25, 4.0])).numpy(), want, rtol=1e-6)


def _jacobian_of(x):
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = PROGRAMS["clip"](x)
    return t.jacobian(y, x)


def test_finite_programs_keep_the_fast_program(numpy_backend):
    """No op that makes inf from finite values: no check, no second program."""
    from tapeflow.tracer import jacobian as J

    def dense():
        return sum(1 for k in J._PROGRAMS if k is not None and k[-1] == "dense")
    before = dense()
    x = tf.constant([0.5, 1.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = tf.tanh(x) * x
    t.jacobian(y, x)
    assert dense() == before


@pytest.mark.parametrize("in_function", [False, True])
def test_whole_powers_keep_the_fast_program(numpy_backend, monkeypatch, in_function):
    """W5's Hessian of sum(tanh(A @ w) ** 2): its gradient raises to 2 - 1, a saved exponent
    known at trace time, so no check and no second program (it cost W5 in a function)."""
    from tapeflow.tracer import jacobian as J
    seen = []
    original = J._may_not_be_finite

    def spy(graph, known=None):
        seen.append(original(graph, known))
        return seen[-1]
    monkeypatch.setattr(J, "_may_not_be_finite", spy)
    a = tf.constant(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3))

    def hessian(w):
        with tf.GradientTape(persistent=True) as outer:
            outer.watch(w)
            with tf.GradientTape() as inner:
                inner.watch(w)
                y = tf.reduce_sum(tf.tanh(tf.linalg.matvec(a, w)) ** 2)
            g = inner.gradient(y, w)
        return outer.jacobian(g, w)
    fn = tf.function(hessian) if in_function else hessian
    assert fn(tf.constant([0.5, -0.25, 1.0])).shape == (3, 3)
    assert seen == [False]
