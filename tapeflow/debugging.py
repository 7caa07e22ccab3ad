"""``tf.debugging``: the checks of ``ops/debug.py`` (the Assert/CheckNumerics ops, so a check on
traced values runs inside compiled programs too), TensorFlow's switches for traceback filtering
(``runtime/traceback_filter.py``) and device-placement logging (``runtime/placement_log.py``),
and, beyond TensorFlow, switches that say why a gradient is None."""
from .autodiff.explain import NoneGradientWarning, explain_none_gradients
from .ops import debug as _debug
from .ops.debug import *  # noqa: F401,F403
from .runtime import placement_log as _placement_log, traceback_filter as _traceback_filter
from .runtime.placement_log import get_log_device_placement, set_log_device_placement
from .runtime.traceback_filter import (disable_traceback_filtering, enable_traceback_filtering,
                                       is_traceback_filtering_enabled)

__all__ = (["explain_none_gradients", "NoneGradientWarning"] + _debug.__all__
           + _placement_log.__all__ + _traceback_filter.__all__)
