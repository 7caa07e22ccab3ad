"""A loop whose intermediate values change size each iteration (``tf.ones([i + 1])``), under
a tape outside the function: the call's forward program keeps no stacks of such rows
(WhileStacks), so its backward recomputes them (WhileGradStacks runs WhileGrad's plan).

Expected values are TensorFlow 2.21's, asked of TensorFlow itself and written as facts.
"""
import tapeflow as tf


def growing(x, n):
    s = tf.constant(0.0)
    for i in tf.range(n):
        s += tf.reduce_sum(tf.ones([i + 1]) * x * x)
    return s


def test_first_and_second_order_through_the_call():
    """TF 2.21, x = 2, n = 3: y 24, dy/dx 24, d2y/dx2 12."""
    f = tf.function(growing)
    x = tf.constant(2.0)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = f(x, tf.constant(3))
        g = t1.gradient(y, x)
    assert [float(y), float(g), float(t2.gradient(g, x))] == [24.0, 24.0, 12.0]
