"""Where TensorFlow gives TensorShape(None): a TensorSpec of any rank, a loop variable whose
shape invariant is TensorShape(None), a TensorArray's element shape before anything fixes it.

Expected values are TensorFlow 2.21's, asked of TensorFlow itself and written down as facts.
"""
import numpy as np
import pytest

import tapeflow as tf


def test_tensor_spec_of_any_rank_has_an_unknown_shape():
    """TF 2.21: TensorSpec(None).shape is TensorShape(None), printed "<unknown>" in the spec;
    a known spec's shape is a TensorShape of its dims."""
    spec = tf.TensorSpec(None)
    assert repr(spec.shape) == "TensorShape(None)" and spec.shape.rank is None
    assert repr(spec) == "TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)"
    assert repr(tf.TensorSpec([None, 2]).shape) == "TensorShape([None, 2])"
    assert tf.TensorSpec(tf.TensorShape(None)) == spec
    f = tf.function(lambda x: x * 2.0, input_signature=[spec])
    assert f(tf.ones([2])).numpy().tolist() == [2.0, 2.0] and f(tf.ones([2, 1])).shape == (2, 1)


def test_while_loop_invariant_of_unknown_rank_leaves_every_size_open():
    """TF 2.21: with shape_invariants TensorShape(None) a loop variable may change size; x
    doubled twice is [1, 2, 1, 2, 1, 2, 1, 2] (static shape <unknown> there; here the rank
    stays known, so it is (None,))."""
    @tf.function
    def f(x, n):
        i = tf.constant(0)
        _, y = tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, tf.concat([y, y], 0)),
                             [i, x], shape_invariants=[i.shape, tf.TensorShape(None)])
        assert y.shape == [None]
        return y
    assert f(tf.constant([1.0, 2.0]), tf.constant(2)).numpy().tolist() == [1.0, 2.0] * 4
