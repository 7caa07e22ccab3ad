"""``tf.debugging``: run-time checks (``check_numerics``, ``Assert``, the ``assert_*`` family),
and a switch beyond TensorFlow: say why a gradient is None."""
from .autodiff.explain import NoneGradientWarning, explain_none_gradients
from .ops.debug import (Assert, assert_all_finite, assert_equal, assert_greater,  # noqa: F401
                        assert_greater_equal, assert_integer, assert_less, assert_less_equal,
                        assert_near, assert_negative, assert_non_negative, assert_non_positive,
                        assert_none_equal, assert_positive, assert_proper_iterable, assert_rank,
                        assert_rank_at_least, assert_rank_in, assert_same_float_dtype,
                        assert_scalar, assert_shapes, assert_type, check_numerics,
                        is_numeric_tensor, enable_check_numerics, disable_check_numerics)
from .ops.debug import __all__ as _checks

__all__ = ["explain_none_gradients", "NoneGradientWarning", *_checks]
