"""Reverse-mode autodiff on the eager runtime: gradient rules, the reverse sweep, GradientTape,
custom gradients and the explanation of None gradients."""
from .tape import GradientTape  # noqa: E402,F401  (tf.autodiff.GradientTape)
from .forward import ForwardAccumulator  # noqa: E402,F401
