"""``tapeflow.nn``: activations, softmax and losses (TensorFlow's ``tf.nn``)."""
from .ops.nn import *  # noqa: F401,F403
from .ops.sort import in_top_k, top_k  # noqa: F401,E402  (TF lists these in tf.nn too)
from .ops.composites import (batch_normalization, compute_average_loss, crelu,  # noqa: F401,E402
                             embedding_lookup, log_poisson_loss, moments, normalize_moments,
                             scale_regularization_loss, silu, sufficient_statistics, swish,
                             weighted_cross_entropy_with_logits, weighted_moments, zero_fraction)
from .ops.conv import *  # noqa: F401,F403  (convolutions and pooling)
from .ops.approx_top_k import approx_max_k, approx_min_k  # noqa: F401,E402  (tf.nn's too)
from .ops.lrn import *  # noqa: F401,F403,E402
from .ops.batch_norm_global import *  # noqa: F401,F403,E402
from .ops.dilated import *  # noqa: F401,F403,E402  (pool, with_space_to_batch)
from .ops.isotonic import *  # noqa: F401,F403,E402
from .ops.morphology import *  # noqa: F401,F403,E402  (dilation2d, erosion2d)
from .ops.fractional_pool import *  # noqa: F401,F403,E402  (fractional_max_pool, fractional_avg_pool)
