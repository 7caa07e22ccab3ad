"""Functions `tapeflow dump` is pointed at in tests/test_cli.py (line numbers are asserted)."""
import tapeflow as tf


def raises(x):
    raise ValueError("raised while tracing")


def bad_shapes(x):
    return tf.matmul(x, x)


def double(x):
    return x * 2


NOT_CALLABLE = 3


def many_ops(x):
    """Enough output to fill a pipe's buffer."""
    for _ in range(1500):
        x = tf.sin(x)
    return x


def shared_product(a, b):
    return tf.reduce_sum(a * b + b * a)


def loop_gradient(x, w):
    """A loop's gradient taken inside the function: a plain call runs one fused loop."""
    with tf.GradientTape() as tape:
        tape.watch(w)
        h = x
        for _ in tf.range(12):
            h = tf.tanh(h * w)
        loss = tf.reduce_sum(h * h)
    return tape.gradient(loss, w)


def scaled_exp(x):
    """One fused loop, parallel from about 25M work units (tests/codegen/test_size_classes.py)."""
    return tf.exp(x) * 2.0
