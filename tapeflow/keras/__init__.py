"""``tapeflow.keras``: the Keras-style library (``tf.keras``) built on tapeflow's ops and tapes.

Layers, optimizers and initializers live here; ``tapeflow.layers`` and friends re-export them
under TensorFlow's short names. Models (``Model``, ``Sequential``, ``Input``) train with
Keras 3's ``compile``/``fit``/``evaluate``/``predict`` (models.py, trainer.py) and save to
``.keras`` files (saving.py).
"""
from . import (activations, backend, callbacks, constraints, more_callbacks, confusion_metrics, core_layers, initializers, layers, losses,
               metric_classes, metrics, models, more_optimizers, normalization, optimizers, saving,
               regularizers, schedules, serialization)
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

# ``keras.metrics`` holds every metric; the confusion-matrix family and the rest live in their modules
metrics.register(confusion_metrics.CLASSES + metric_classes.CLASSES, metric_classes.FUNCTIONS)
for _obj in confusion_metrics.CLASSES + metric_classes.CLASSES + metric_classes.FUNCTIONS:
    setattr(metrics, _obj.__name__, _obj)
    metrics.__all__.append(_obj.__name__)
for _name in ("hinge", "squared_hinge", "categorical_hinge", "kl_divergence", "poisson", "huber",
              "log_cosh", "logcosh", "mean_absolute_percentage_error", "mape",
              "mean_squared_logarithmic_error", "msle", "binary_focal_crossentropy",
              "categorical_focal_crossentropy", "kld", "kullback_leibler_divergence"):
    setattr(metrics, _name, getattr(losses, _name))
    metrics.__all__.append(_name)
metrics.KLD, metrics.MAE, metrics.MAPE, metrics.MSE, metrics.MSLE = (
    losses.kl_divergence, losses.mean_absolute_error, losses.mean_absolute_percentage_error,
    losses.mean_squared_error, losses.mean_squared_logarithmic_error)
metrics.__all__ += ["KLD", "MAE", "MAPE", "MSE", "MSLE"]

# ``keras.callbacks`` holds every callback
for _cls in more_callbacks.CLASSES:
    setattr(callbacks, _cls.__name__, _cls)
    callbacks.__all__.append(_cls.__name__)

# ``activation="..."`` names any of Keras 3's activations
layers.ACTIVATIONS.update(activations.ALL)

# ``keras.optimizers`` holds every optimizer, and ``keras.optimizers.schedules``
optimizers.schedules = schedules
for _cls in more_optimizers.CLASSES:
    setattr(optimizers, _cls.__name__, _cls)
    optimizers._BY_NAME[_cls.__name__.lower()] = _cls
    optimizers.__all__.append(_cls.__name__)

# ``keras.models.load_model``/``save_model`` and ``keras.saving``, as Keras 3 names them
models.load_model = saving.load_model
models.save_model = saving.save_model
saving.register_keras_serializable = serialization.register_keras_serializable
saving.custom_object_scope = serialization.custom_object_scope
saving.CustomObjectScope = serialization.custom_object_scope

__all__ = ["layers", "optimizers", "initializers", "backend", "losses", "metrics", "callbacks",
           "activations", "regularizers", "constraints",
           "models", "saving", "Model", "Sequential", "Input"]
