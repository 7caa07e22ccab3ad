"""``tapeflow.math``: elementwise math and reductions (TensorFlow's ``tf.math``)."""
from .ops.math import *  # noqa: F401,F403
from .ops.reduce import *  # noqa: F401,F403
from .ops.clip import *  # noqa: F401,F403
from .ops.nn import log_softmax, softplus, softsign  # noqa: F401  (TensorFlow lists these in tf.math too)
from .ops.special import *  # noqa: F401,F403
from .ops.scan import *  # noqa: F401,F403
from .ops.sort import in_top_k, top_k  # noqa: F401
from .ops.composites import (accumulate_n, count_nonzero, is_non_decreasing,  # noqa: F401
                             is_strictly_increasing, reduce_euclidean_norm, unsorted_segment_mean,
                             unsorted_segment_sqrt_n, zero_fraction)
from .ops.counting import *  # noqa: F401,F403
from .ops.nn import l2_normalize, softmax  # noqa: F401  (TF lists these in tf.math too)
from .ops.segment import *  # noqa: F401,F403  (segment max, min and product)
from .ops.approx_top_k import approx_max_k, approx_min_k  # noqa: F401,E402
from .ops.sobol import sobol_sample  # noqa: F401,E402
