"""How tensors, variables and dtypes print: TensorFlow 2.21's text, quoted."""
import numpy as np

import tapeflow as tf


def test_multi_line_tensor_starts_its_value_on_a_new_line():
    t = tf.constant(np.arange(12.).reshape(3, 4))
    assert str(t) == ("tf.Tensor(\n"
                      "[[ 0.  1.  2.  3.]\n"
                      " [ 4.  5.  6.  7.]\n"
                      " [ 8.  9. 10. 11.]], shape=(3, 4), dtype=float64)")
    assert repr(t) == ("<tf.Tensor: shape=(3, 4), dtype=float64, numpy=\n"
                       "array([[ 0.,  1.,  2.,  3.],\n"
                       "       [ 4.,  5.,  6.,  7.],\n"
                       "       [ 8.,  9., 10., 11.]])>")


def test_one_line_tensor_stays_on_one_line():
    t = tf.constant([1., 2.])
    assert str(t) == "tf.Tensor([1. 2.], shape=(2,), dtype=float32)"
    assert repr(t) == "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>"


def test_multi_line_variable():
    v = tf.Variable(np.arange(4.).reshape(2, 2))
    assert repr(v) == ("<tf.Variable 'Variable:0' shape=(2, 2) dtype=float64, numpy=\n"
                       "array([[0., 1.],\n"
                       "       [2., 3.]])>")


def test_dtype_prints_as_tensorflow_and_reprs_as_its_name():
    assert str(tf.float32) == "<dtype: 'float32'>"    # TF: print(tf.float32)
    assert str(tf.bool) == "<dtype: 'bool'>"
    assert repr(tf.float32) == "tf.float32"           # TF: repr(tf.float32)


def test_assign_returns_the_variable_shown_as_unread():
    v = tf.Variable([1., 2.])
    # TF: <tf.Variable 'UnreadVariable' shape=(2,) dtype=float32, numpy=array([3., 4.], dtype=float32)>
    assert repr(v.assign([3., 4.])) == ("<tf.Variable 'UnreadVariable' shape=(2,) dtype=float32, "
                                        "numpy=array([3., 4.], dtype=float32)>")
    assert str(v.assign_add([3., 4.])).endswith("numpy=array([6., 8.], dtype=float32)>")
    assert repr(tf.Variable(1.0).assign(2.0)) == \
        "<tf.Variable 'UnreadVariable' shape=() dtype=float32, numpy=2.0>"
    assert v.assign([3., 4.], read_value=False) is None   # TF: None


def test_what_assign_returns_reads_and_writes_the_variable():
    v = tf.Variable([1., 2.])
    a = v.assign([5., 6.])
    assert (a + 1).numpy().tolist() == [6., 7.]
    a.assign_add([1., 1.])
    assert v.numpy().tolist() == [6., 7.]
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(a * a)
    assert tape.gradient(y, v).numpy().tolist() == [12., 14.]
