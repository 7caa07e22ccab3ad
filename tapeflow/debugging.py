"""Debugging switches beyond TensorFlow: say why a gradient is None."""
from .autodiff.explain import NoneGradientWarning, explain_none_gradients

__all__ = ["explain_none_gradients", "NoneGradientWarning"]
from .ops.checks import *  # noqa: F401,F403,E402
from .ops import checks as _checks  # noqa: E402

__all__ = __all__ + _checks.__all__
from .ops.debug import disable_check_numerics, enable_check_numerics  # noqa: E402,F401

__all__ = __all__ + ["enable_check_numerics", "disable_check_numerics"]
