"""``tapeflow.keras``: the Keras-style library (``tf.keras``) built on tapeflow's ops and tapes.

Layers, optimizers and initializers live here; ``tapeflow.layers`` and friends re-export them
under TensorFlow's short names. Models (``Model``, ``Sequential``, ``Input``) train with
Keras 3's ``compile``/``fit``/``evaluate``/``predict`` (models.py, trainer.py) and save to
``.keras`` files (saving.py).
"""
from . import (backend, callbacks, core_layers, initializers, layers, losses, metrics, models,
               normalization, optimizers, saving, serialization)
from .models import Input, InputLayer, Model, Sequential
from . import attention, normalization_layers, recurrent, rnn_cells, wrappers

serialization.register_builtin(*rnn_cells.CELLS, *recurrent.CLASSES, *wrappers.CLASSES,
                               *attention.CLASSES, *normalization_layers.CLASSES)

# ``keras.layers`` holds every layer class; most are written in core_layers.py and normalization.py
layers.Input, layers.InputLayer = Input, InputLayer
for _cls in (normalization.CLASSES + core_layers.CLASSES + rnn_cells.CELLS + recurrent.CLASSES
             + wrappers.CLASSES + attention.CLASSES + normalization_layers.CLASSES):
    setattr(layers, _cls.__name__, _cls)
    layers.__all__.append(_cls.__name__)
layers.GroupQueryAttention = attention.GroupQueryAttention      # TensorFlow's alias
layers.__all__.append("GroupQueryAttention")

# Keras 3's layers that pass their input's mask on to their output (keras/masking.py)
for _cls in (layers.Dense, core_layers.Dropout, core_layers.Activation, core_layers.ReLU,
             normalization.LayerNormalization, normalization.BatchNormalization):
    _cls.supports_masking = True

# ``keras.models.load_model``/``save_model`` and ``keras.saving``, as Keras 3 names them
models.load_model = saving.load_model
models.save_model = saving.save_model
saving.register_keras_serializable = serialization.register_keras_serializable
saving.custom_object_scope = serialization.custom_object_scope
saving.CustomObjectScope = serialization.custom_object_scope

__all__ = ["layers", "optimizers", "initializers", "backend", "losses", "metrics", "callbacks",
           "models", "saving", "Model", "Sequential", "Input"]
