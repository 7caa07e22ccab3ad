"""Gradient-check cases of LRN (see ops/cases.py). First order only: TensorFlow registers no
gradient for LRNGrad, so LRN's second derivative is its LookupError (tests/vocab/test_lrn_isotonic.py)."""
import numpy as np

import tapeflow as tf

from ops.cases import Case

R = np.random.default_rng(31)


def u(*shape):
    return R.uniform(-2, 2, shape)


IMAGE, GRADS = u(1, 2, 1, 4), u(1, 2, 1, 4)


def _lrn_grad(x):
    """LRNGrad on constants (it has no gradient), scaled by ``x``: the codegen test compiles
    it on these inputs."""
    c = tf.constant(IMAGE)
    with tf.GradientTape() as t:
        t.watch(c)
        y = tf.nn.lrn(c, depth_radius=1, bias=1.5, alpha=0.3, beta=0.75)
    return t.gradient(y, c, output_gradients=tf.constant(GRADS)) * x


CASES = {
    "LRN": [Case(lambda x: tf.nn.lrn(x, depth_radius=2, bias=1.5, alpha=0.3, beta=0.75),
                 [u(2, 2, 1, 5)], order=1),
            Case(lambda x: tf.nn.lrn(x, depth_radius=7, bias=2.0, alpha=1.0, beta=1.0),
                 [u(1, 2, 2, 4)], order=1, note="window wider than the depth")],
    "LRNGrad": [Case(_lrn_grad, [u(1, 2, 1, 4)], note="on constants")],
}
NOT_DIFFERENTIABLE = []
