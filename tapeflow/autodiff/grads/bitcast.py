"""Bitcast has no gradient (TensorFlow: NotDifferentiable, so None)."""
from ...runtime.registry import not_differentiable

not_differentiable("Bitcast")
