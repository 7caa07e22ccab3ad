"""Cases from TensorFlow's guide notebooks where tapeflow differed: TensorFlow 2.21's results,
quoted. tools/guide_cells.py runs the whole guides; these keep the fixes."""
import numpy as np
import pytest

import tapeflow as tf


# -- isinstance(x, tf.Tensor) ---------------------------------------------------------

def test_traced_tensors_are_tf_tensors():
    # TensorFlow 2.21 gives [True, True]: graph tensors inside tf.function are tf.Tensor
    seen = []

    @tf.function
    def f(x):
        y = x * 2.0
        seen.extend([isinstance(x, tf.Tensor), isinstance(y, tf.Tensor)])
        return y

    f(tf.constant([1.0, 2.0]))
    assert seen == [True, True]


def test_what_is_not_a_tf_tensor():
    # TensorFlow 2.21 gives True for an eager tensor, False for a Variable, a NumPy array,
    # a float; issubclass(type(eager), tf.Tensor) is True
    t = tf.constant(1.0)
    assert isinstance(t, tf.Tensor)
    assert not isinstance(tf.Variable(1.0), tf.Tensor)
    assert not isinstance(tf.Variable(1.0).assign(2.0), tf.Tensor)
    assert not isinstance(np.ones(2), tf.Tensor)
    assert not isinstance(1.0, tf.Tensor)
    assert issubclass(type(t), tf.Tensor)
    assert not issubclass(tf.Variable, tf.Tensor)
    assert tf.Tensor.__name__ == "Tensor"


def test_internal_tensor_class_still_means_eager():
    # tapeflow's own checks: the runtime class keeps plain isinstance (no traced tensors)
    from tapeflow.runtime.tensor import Tensor as EagerTensor
    seen = []

    @tf.function
    def f(x):
        seen.append(isinstance(x, EagerTensor))
        return x + 1.0

    f(tf.constant(1.0))
    assert seen == [False]
    assert type(EagerTensor) is type
