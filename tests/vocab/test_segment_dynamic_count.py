"""unsorted_segment_max/min/prod (and mean/sqrt_n) with ``num_segments`` a tensor known only when the program runs
(ops/segment.py's composite): TensorFlow 2.21's values, gradients, static shape and error
(every literal is TF 2.21's answer to the same call inside a tf.function with a tensor
num_segments), traced on the interpreter and compiled, equal to the eager op."""
import numpy as np
import pytest

import tapeflow as tf

M = tf.math
L, H = -1.7976931348623157e+308, 1.7976931348623157e+308
D = [[1., 2.], [5., -1.], [3., 0.], [3., 9.]]
IDS = [1, -1, 1, 1]
W = [[1., 2.], [3., 4.], [5., 6.]]          # the upstream gradient
OPS = [("max", M.unsorted_segment_max), ("min", M.unsorted_segment_min),
       ("prod", M.unsorted_segment_prod)]
# TF 2.21, num_segments = tf.constant(3) through an input_signature: (value, gradient)
FACTS = {
    "max": ([[L, L], [3., 9.], [L, L]], [[0., 0.], [0., 0.], [1.5, 0.], [1.5, 4.]]),
    "min": ([[H, H], [1., 0.], [H, H]], [[3., 0.], [0., 0.], [0., 4.], [0., 0.]]),
    "prod": ([[1., 1.], [9., 0.], [1., 1.]], [[27., 0.], [0., -0.], [9., 72.], [9., 0.]]),
}


def _all(d, i, n):
    out = []
    for _, op in OPS:
        with tf.GradientTape() as tape:
            tape.watch(d)
            y = op(d, i, n)
        out.append((y, tape.gradient(y, d, output_gradients=tf.constant(W, tf.float64))))
    return out


def _check(results):
    for (name, _), (y, g) in zip(OPS, results):
        np.testing.assert_array_equal(y.numpy(), FACTS[name][0], err_msg=name)
        np.testing.assert_array_equal(g.numpy(), FACTS[name][1], err_msg=name)


def _args(n=3):
    return tf.constant(D, tf.float64), tf.constant(IDS), tf.constant(n)


def test_eager_ops_agree_with_the_facts():
    d, i, _ = _args()
    _check(_all(d, i, 3))


def test_traced_with_a_run_time_count(numpy_backend):
    f = tf.function(_all)
    _check(f(*_args()))
    # TF 2.21: the static shape is (None, 2)
    c = tf.function(M.unsorted_segment_max).get_concrete_function(
        tf.TensorSpec([4, 2], tf.float64), tf.TensorSpec([4], tf.int32), tf.TensorSpec([], tf.int32))
    assert c.graph.outputs[0].aval.shape == (None, 2)
    # TF 2.21's other answers: ids of rank 2, int32 data, an int64 count, -inf data
    seg_min = tf.function(M.unsorted_segment_min)
    assert seg_min(tf.constant(np.arange(8.).reshape(2, 2, 2)), tf.constant([[0, 2], [2, -1]]),
                   tf.constant(3)).numpy().tolist() == [[0.0, 1.0], [H, H], [2.0, 3.0]]
    seg_max = tf.function(M.unsorted_segment_max)
    assert seg_max(tf.constant([4, 7, 1]), tf.constant([0, 0, 2]),
                   tf.constant(3)).numpy().tolist() == [7, -2147483648, 1]
    assert seg_max(tf.constant([-np.inf, 1.0]), tf.constant([0, 1]),
                   tf.constant(2)).numpy().tolist() == [-3.4028234663852886e+38, 1.0]
    seg_prod = tf.function(M.unsorted_segment_prod)
    assert seg_prod(tf.constant([4., 7., 1.]), tf.constant([0, 0, 2]),
                    tf.constant(4, tf.int64)).numpy().tolist() == [28.0, 1.0, 1.0, 1.0]
    # TF 2.21: InvalidArgumentError "segment_ids[1] = 5 is out of range [0, 3)" when it runs
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"segment_ids\[1\] = 5 is out of range \[0, 3\)"):
        seg_max(tf.constant(D, tf.float64), tf.constant([1, 5, 0, 0]), tf.constant(3))


def _compiled_program(c):
    """The Numba program ``c`` ran for its one call shape (the graph has a run-time dim)."""
    (program,) = c._specialized.values()
    return program


@tf.function(jit_compile=True)
def _forward_max(d, i, n):
    return M.unsorted_segment_max(d, i, n)


def test_mean_and_sqrt_n_with_a_run_time_count(numpy_backend):
    # TF 2.21, num_segments = tf.constant(3) through an input_signature: (value, gradient)
    facts = [(M.unsorted_segment_mean, [[3.0, 9.0], [2.0, 1.0], [0.0, 0.0]],
              [[1.5, 2.0], [0.0, 0.0], [1.5, 2.0], [1.0, 2.0]]),
             (M.unsorted_segment_sqrt_n, [[3.0, 9.0], [2.82842712474619, 1.414213562373095], [0.0, 0.0]],
              [[2.1213203435596424, 2.82842712474619], [0.0, 0.0],
               [2.1213203435596424, 2.82842712474619], [1.0, 2.0]])]

    @tf.function
    def f(d, i, n):
        out = []
        for op, _, _ in facts:
            with tf.GradientTape() as tape:
                tape.watch(d)
                y = op(d, i, n)
            out.append((y, tape.gradient(y, d, output_gradients=tf.constant(W, tf.float64))))
        return out

    results = f(tf.constant(D, tf.float64), tf.constant([1, -1, 1, 0]), tf.constant(3))
    for (y, g), (_, value, grad) in zip(results, facts):
        np.testing.assert_allclose(y.numpy(), value, rtol=1e-15)
        np.testing.assert_allclose(g.numpy(), grad, rtol=1e-15)


def test_compiled_with_a_run_time_count_equals_eager():
    # one op in the default run (a cold compile costs seconds); all three, with their
    # gradients, in the slow test below
    d, i, n = _args()
    np.testing.assert_array_equal(_forward_max(d, i, n).numpy(), FACTS["max"][0])
    assert _compiled_program(_forward_max.get_concrete_function(d, i, n)).fallback is None
    d5 = tf.constant(np.arange(10.).reshape(5, 2) - 4.0)
    i5 = tf.constant([2, 0, 2, -1, 0])
    np.testing.assert_array_equal(_forward_max(d5, i5, tf.constant(3)).numpy(),   # another shape
                                  M.unsorted_segment_max(d5, i5, 3).numpy())


@pytest.mark.slow   # a cold compile of the three ops and their gradients: tens of seconds
def test_compiled_gradients_with_a_run_time_count_equal_eager():
    f = tf.function(_all, jit_compile=True)
    d, i, n = _args()
    _check(f(d, i, n))
    assert _compiled_program(f.get_concrete_function(d, i, n)).fallback is None
    d5 = tf.constant(np.arange(10.).reshape(5, 2) - 4.0)
    i5 = tf.constant([2, 0, 2, -1, 0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(d5)
        eager = [op(d5, i5, 3) for _, op in OPS]
    expected = [(y, tape.gradient(y, d5, output_gradients=tf.constant(W, tf.float64)))
                for y in eager]
    for (y, g), (ye, ge) in zip(f(d5, i5, tf.constant(3)), expected):   # another shape
        np.testing.assert_array_equal(y.numpy(), ye.numpy())
        np.testing.assert_allclose(g.numpy(), ge.numpy(), rtol=1e-15)
