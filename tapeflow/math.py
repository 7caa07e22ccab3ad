"""``tapeflow.math``: elementwise math and reductions (TensorFlow's ``tf.math``)."""
from .ops.math import *  # noqa: F401,F403
from .ops.reduce import *  # noqa: F401,F403
from .ops.clip import *  # noqa: F401,F403
from .ops.nn import log_softmax, softplus, softsign  # noqa: F401  (TensorFlow lists these in tf.math too)
from .ops.special import *  # noqa: F401,F403
