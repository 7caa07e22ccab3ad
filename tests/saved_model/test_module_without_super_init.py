"""A Module subclass whose ``__init__`` does not call ``super().__init__()``: TensorFlow 2.21
saves it (its ``name`` raises AttributeError, as here), and the loaded object works."""
import pytest

import tapeflow as tf


class _NoSuper(tf.Module):
    def __init__(self):
        self.v = tf.Variable(3.0)

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
    def __call__(self, x):
        return self.v * x


def test_module_without_super_init_saves_and_loads(tmp_path):
    m = _NoSuper()
    with pytest.raises(AttributeError):
        m.name                                          # TF: AttributeError '_name'
    tf.saved_model.save(m, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert float(loaded(tf.constant(2.0))) == 6.0       # TF: 6.0
    assert float(loaded.v) == 3.0
