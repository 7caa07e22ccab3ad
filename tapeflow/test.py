"""``tf.test``: ``compute_gradient``, TensorFlow's Jacobian check (the rest of TensorFlow's
``tf.test`` is its unittest harness and GPU queries, out of scope)."""
from .autodiff.gradient_checker import compute_gradient

__all__ = ["compute_gradient"]
