"""``tapeflow.linalg``: linear algebra (TensorFlow's ``tf.linalg``)."""
from .ops.linalg import *  # noqa: F401,F403
from .ops.linalg_decomp import *  # noqa: F401,F403
from .ops.linalg_extra import *  # noqa: F401,F403
