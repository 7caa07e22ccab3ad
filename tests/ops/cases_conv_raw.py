"""Gradient-check cases of TensorFlow's generic Conv op (see ops/cases.py): TensorFlow has
no gradient for it (LookupError, tests/conv/test_conv2_functions.py), so its cases only take
it through the forward and the compiled samples."""
import numpy as np

import tapeflow as tf

from ops.cases import Case

R = np.random.default_rng(2713)
X4, W4 = R.uniform(-1, 1, (2, 5, 4, 3)), R.uniform(-1, 1, (3, 2, 3, 4))
X5, W5 = R.uniform(-1, 1, (2, 1, 4, 5, 2)), R.uniform(-1, 1, (2, 2, 2, 3))


def _case(x, w, **kw):
    def fn(v):
        return tf.conv(tf.constant(x), tf.constant(w), **kw) * v
    fn.__name__ = "Conv"
    y = tf.conv(x, w, **kw)
    return Case(fn, [R.uniform(-1, 1, tuple(y.shape))], order=1, note="forward only")


CASES = {
    "Conv": [_case(X4, W4, strides=[1, 2, 1, 1], padding="SAME"),
             _case(X5, W5, strides=[1, 1, 1, 1], padding="EXPLICIT",
                   explicit_paddings=[0, 0, 1, 0, 0, 1, 0, 0], batch_dims=2),
             _case(R.uniform(-1, 1, (1, 4, 5, 4, 2)), R.uniform(-1, 1, (2, 2, 2, 2, 3)),
                   strides=[1, 1, 1, 1, 1], padding="VALID", dilations=[1, 1, 2, 1, 1])],
}
