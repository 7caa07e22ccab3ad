"""``tapeflow.keras``: the Keras-style library (``tf.keras``) built on tapeflow's ops and tapes.

Layers, optimizers and initializers live here; ``tapeflow.layers`` and friends re-export them
under TensorFlow's short names. Models (``Model``, ``Sequential``, ``Input``) train with
Keras 3's ``compile``/``fit``/``evaluate``/``predict`` (models.py, trainer.py).
"""
from . import backend, callbacks, initializers, layers, losses, metrics, models, optimizers
from .models import Input, InputLayer, Model, Sequential

layers.Input, layers.InputLayer = Input, InputLayer

__all__ = ["layers", "optimizers", "initializers", "backend", "losses", "metrics", "callbacks",
           "models", "Model", "Sequential", "Input"]
