"""TensorFlow's error types (issue 14, item 5): graph-mode TypeError for dtype mismatches inside a
function, input_signature converting Python lists, and bad file names blamed on the manifest."""
import json
import os

import numpy as np
import pytest

import tapeflow as tf


@pytest.fixture(autouse=True)
def _numpy(numpy_backend):
    yield


@pytest.mark.parametrize("a, b", [(lambda: tf.constant(1), lambda: tf.constant(1.0)),
                                  (lambda: tf.constant(1.0, dtype=tf.float64), lambda: tf.constant(1.0))])
def test_a_dtype_mismatch_inside_function_is_a_type_error(a, b):
    @tf.function
    def f(x, y):
        return x + y
    with pytest.raises(TypeError, match=r"Input #1 of 'Add' Op has type float32 that does not match"):
        f(a(), b())
    with pytest.raises(tf.errors.InvalidArgumentError):      # eagerly, as TensorFlow
        a() + b()


def test_a_float64_variable_in_a_float32_matmul_is_a_type_error():
    v = tf.Variable(np.ones((2, 2)))

    @tf.function
    def g(x):
        return tf.matmul(x, v)
    with pytest.raises(TypeError, match="'MatMul' Op has type float64"):
        g(tf.ones((2, 2)))


def test_input_signature_converts_python_lists_and_scalars():
    @tf.function(input_signature=[tf.TensorSpec([None, 3])])
    def h(x):
        return tf.reduce_sum(x, axis=1)
    np.testing.assert_allclose(h([[1., 2., 3.]]).numpy(), [6.])
    np.testing.assert_allclose(h([[1, 2, 3], [4, 5, 6]]).numpy(), [6., 15.])

    @tf.function(input_signature=[[tf.TensorSpec([2]), tf.TensorSpec([])]])
    def pair(p):
        return p[0] * p[1]
    np.testing.assert_allclose(pair([[1., 2.], 3.]).numpy(), [3., 6.])
    with pytest.raises(TypeError, match="Can not cast"):
        h([[1., 2.]])        # the wrong shape is still refused, with TF 2.21's TypeError


@pytest.mark.parametrize("bad", ["/etc/passwd", "../outside.npy", "variables/../../x.npy"])
def test_a_bad_file_name_is_blamed_on_the_manifest(tmp_path, bad):
    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(np.ones(3, np.float32))
    d = tmp_path / "m"
    tf.saved_model.save(M(), str(d))
    m = json.loads((d / "saved_program.json").read_text())
    m["variables"][0]["file"] = bad
    (d / "saved_program.json").write_text(json.dumps(m))
    with pytest.raises(tf.saved_model.SavedModelError) as e:
        tf.saved_model.load(str(d))
    assert str(e.value).startswith(os.path.join(str(d), "saved_program.json") + ": "), str(e.value)
    assert repr(bad) in str(e.value)
