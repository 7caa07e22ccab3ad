"""``tf.autograph.experimental.set_loop_options(maximum_iterations=...)`` in a converted
loop's body bounds the While as ``tf.while_loop``'s ``maximum_iterations`` does. The expected
values are TensorFlow 2.21's (asked of it, written here as facts)."""
import pytest

import tapeflow as tf


@tf.function
def squares(n):
    i = tf.constant(0)
    s = tf.constant(0.0)
    while i < n:
        tf.autograph.experimental.set_loop_options(maximum_iterations=3)
        s += tf.cast(i, tf.float32) ** 2
        i += 1
    return i, s


@pytest.mark.parametrize("n, want", [(10, (3, 5.0)), (2, (2, 1.0)), (0, (0, 0.0))])
def test_a_while_stops_at_the_bound_or_its_test(n, want):
    i, s = squares(tf.constant(n))
    assert (int(i), float(s)) == want            # TF 2.21: (3, 5.0), (2, 1.0)


@tf.function
def power(n, x):
    s = x
    for _ in tf.range(n):
        tf.autograph.experimental.set_loop_options(maximum_iterations=4)
        s = s * x
    return s


def test_a_for_over_a_range_is_bounded_and_its_gradient_too():
    x = tf.constant(1.5)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = power(tf.constant(10), x)
    # TF 2.21: 7.59375 (1.5 ** 5) and 25.3125 (5 * 1.5 ** 4)
    assert float(y) == 7.59375
    assert float(tape.gradient(y, x)) == 25.3125


def test_a_tensor_bound_from_before_the_loop():
    @tf.function
    def count(n, m):
        i = tf.constant(0)
        while i < n:
            tf.autograph.experimental.set_loop_options(maximum_iterations=m)
            i += 1
        return i
    assert int(count(tf.constant(10), tf.constant(6))) == 6      # TF 2.21: 6
    assert int(count(tf.constant(4), tf.constant(6))) == 4


def test_eagerly_it_does_nothing():
    i = 0
    while i < 5:
        tf.autograph.experimental.set_loop_options(maximum_iterations=2)
        i += 1
    assert i == 5
