"""``tapeflow.keras``: the Keras-style library (``tf.keras``) built on tapeflow's ops and tapes.

Layers, optimizers and initializers live here; ``tapeflow.layers`` and friends re-export them
under TensorFlow's short names.
"""
from . import backend, initializers, layers, optimizers

__all__ = ["layers", "optimizers", "initializers", "backend"]
