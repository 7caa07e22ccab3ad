"""``tapeflow.linalg``: linear algebra (TensorFlow's ``tf.linalg``)."""
from .ops.linalg import *  # noqa: F401,F403
from .ops.linalg import (band_part, cholesky_solve, diag, logdet, set_diag, slogdet,  # noqa: F401
                         tensor_diag, tensor_diag_part, triangular_solve)
from .ops.linalg_decomp import *  # noqa: F401,F403
from .ops.linalg_extra import *  # noqa: F401,F403
