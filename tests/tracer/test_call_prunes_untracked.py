"""A function called under one tape differentiates only the inputs that tape tracks.

The data a recurrence reads by index (``x[t]`` in a loop) is an input of the call the tape does
not watch: its gradient would be dropped, and computing it costs a dense scatter of x's size
in every iteration of the backward loop, quadratic in the trip count. With two tapes (or a
persistent one) the backward program may be differentiated again, and then TensorFlow's
None-or-zeros rule at second order depends on every input's gradient being there, so the
full backward program runs (the TF oracle's "through" programs check that).
"""
import numpy as np

import tapeflow as tf


def recurrence(x, w):
    h = tf.zeros([x.shape[1]], dtype=x.dtype)
    for t in tf.range(tf.shape(x)[0]):
        h = tf.tanh(h * w + x[t])
    return tf.reduce_sum(h * h)


X = np.linspace(-1, 1, 12).reshape(4, 3)
W = np.array([0.5, -0.3, 0.8])


def _grads(f, watch_x):
    x, w = tf.constant(X), tf.constant(W)
    with tf.GradientTape() as tape:
        tape.watch([x, w] if watch_x else [w])
        y = f(x, w)
    return tape.gradient(y, [x, w])


def test_the_backward_program_leaves_out_inputs_the_tape_does_not_track():
    f = tf.function(recurrence)
    gx, gw = _grads(f, watch_x=False)
    eager_gx, eager_gw = _grads(recurrence, watch_x=True)
    assert gx is None
    np.testing.assert_allclose(gw.numpy(), eager_gw.numpy(), rtol=1e-12)
    concrete = f.get_concrete_function(tf.constant(X), tf.constant(W))
    (mask,) = [k for k in concrete._tape_pair if k is not None]
    assert mask == (False, True)
    bwd = concrete._tape_pair[mask][1]
    assert len(bwd.graph.outputs) == 1                 # dw only
    assert "UnsortedSegmentSum" not in {n.op for n in bwd.graph.nodes}

    gx, gw = _grads(f, watch_x=True)                   # now x is tracked: the full program
    np.testing.assert_allclose(gx.numpy(), eager_gx.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), eager_gw.numpy(), rtol=1e-12)
    assert None in concrete._tape_pair
