"""The rules that pass an IndexedSlices gradient on are facts of the op tables
(``registry.SLICES_GRADS``, registered beside each op's gradient in ``autodiff/grads/``), not a
list of op names in backprop.py (issue 24); TensorFlow 2.21's answers."""
import numpy as np

import tapeflow as tf
from tapeflow.runtime.registry import SLICES_GRADS


def test_the_ops_whose_rule_passes_indexed_slices_on():
    # TensorFlow's _IdentityGrad, _CastGrad and _EnsureShapeGrad
    assert set(SLICES_GRADS) == {"Identity", "Cast", "EnsureShape"}


def test_ensure_shape_passes_indexed_slices_on():
    v = tf.Variable([[1., 2.], [3., 4.], [5., 6.]])
    with tf.GradientTape() as t:
        y = tf.reduce_sum(tf.gather(tf.ensure_shape(v, [3, 2]), [1, 1]))
    g = t.gradient(y, v)
    # TF 2.21: IndexedSlices values [[1, 1], [1, 1]], indices [1, 1], dense_shape [3, 2]
    assert isinstance(g, tf.IndexedSlices)
    np.testing.assert_array_equal(g.values.numpy(), [[1., 1.], [1., 1.]])
    assert g.indices.numpy().tolist() == [1, 1] and g.dense_shape.numpy().tolist() == [3, 2]
