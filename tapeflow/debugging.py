"""``tf.debugging``: the checks of ``ops/debug.py`` (the Assert/CheckNumerics ops, so a check on
traced values runs inside compiled programs too), and, beyond TensorFlow, switches that say
why a gradient is None."""
from .autodiff.explain import NoneGradientWarning, explain_none_gradients
from .ops import debug as _debug
from .ops.debug import *  # noqa: F401,F403

__all__ = ["explain_none_gradients", "NoneGradientWarning"] + _debug.__all__
