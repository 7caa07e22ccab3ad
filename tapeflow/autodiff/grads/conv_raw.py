"""TensorFlow registers no gradient for its generic Conv op: differentiating ``tf.conv`` is
its ``LookupError`` here too."""
from ...runtime.registry import gradient


@gradient("Conv")
def _conv(op, g):
    raise LookupError("gradient registry has no entry for: Conv")
