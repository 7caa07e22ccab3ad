"""Debugging switches beyond TensorFlow: say why a gradient is None."""
from .autodiff.explain import NoneGradientWarning, explain_none_gradients

__all__ = ["explain_none_gradients", "NoneGradientWarning"]
