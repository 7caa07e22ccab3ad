"""``tapeflow.nn``: activations, softmax and losses (TensorFlow's ``tf.nn``)."""
from .ops.nn import *  # noqa: F401,F403
from .ops.conv import *  # noqa: F401,F403  (convolutions and pooling)
