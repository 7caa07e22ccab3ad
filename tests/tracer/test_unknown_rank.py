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


def _element_shapes():
    """(case, element_shape repr) for TensorArrays made and written in these ways."""
    out = []
    out.append(("infer_shape=False", tf.TensorArray(tf.float32, size=3, infer_shape=False)))
    out.append(("no element_shape", tf.TensorArray(tf.float32, size=3)))
    out.append(("dynamic", tf.TensorArray(tf.float32, size=0, dynamic_size=True)))
    out.append(("after a write", tf.TensorArray(tf.float32, size=3).write(0, tf.ones([2]))))
    out.append(("infer_shape=False, written",
                tf.TensorArray(tf.float32, size=3, infer_shape=False).write(0, tf.ones([2]))))
    out.append(("given, infer_shape=False",
                tf.TensorArray(tf.float32, size=3, infer_shape=False, element_shape=[2])))
    out.append(("given [None]", tf.TensorArray(tf.float32, size=3, element_shape=[None])))
    out.append(("given [None], written", tf.TensorArray(
        tf.float32, size=3, element_shape=[None]).write(0, tf.ones([2]))))
    out.append(("split", tf.TensorArray(tf.float32, size=2).split(tf.ones([5]), [2, 3])))
    out.append(("unstack", tf.TensorArray(tf.float32, size=2).unstack(tf.ones([2, 3]))))
    out.append(("scatter", tf.TensorArray(tf.float32, size=2).scatter([0, 1], tf.ones([2, 3]))))
    return [(case, repr(ta.element_shape)) for case, ta in out]


# TensorFlow 2.21's answers, eagerly and inside tf.function (they differ for unstack only:
# TensorFlow's eager unstack replaces the list without looking at shapes)
ELEMENT_SHAPES = {
    "infer_shape=False": "TensorShape(None)", "no element_shape": "TensorShape(None)",
    "dynamic": "TensorShape(None)", "after a write": "TensorShape([2])",
    "infer_shape=False, written": "TensorShape(None)",
    "given, infer_shape=False": "TensorShape([2])", "given [None]": "TensorShape([None])",
    "given [None], written": "TensorShape([2])", "split": "TensorShape(None)",
    "scatter": "TensorShape([3])"}


def test_tensor_array_element_shape_eagerly_and_in_a_function():
    eager = dict(_element_shapes())
    assert eager == {**ELEMENT_SHAPES, "unstack": "TensorShape(None)"}
    traced = []
    tf.function(lambda: traced.extend(_element_shapes()) or 0)()
    assert dict(traced) == {**ELEMENT_SHAPES, "unstack": "TensorShape([3])"}


def test_tensor_array_element_shape_after_a_loop():
    """TF 2.21: a dynamic-size TensorArray written with ones([2]) in a loop on a tensor has
    element shape [2] after it; with infer_shape=False it stays TensorShape(None)."""
    seen = []

    def f(n, infer_shape):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, infer_shape=infer_shape)
        for i in tf.range(n):
            ta = ta.write(i, tf.ones([2]))
        seen.append(repr(ta.element_shape))
        return ta.stack()
    f = tf.function(f)
    assert f(tf.constant(3), True).shape == [3, 2] and f(tf.constant(3), False).shape == [3, 2]
    assert seen == ["TensorShape([2])", "TensorShape(None)"]
