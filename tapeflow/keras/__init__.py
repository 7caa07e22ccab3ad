"""``tapeflow.keras``: the Keras-style library (``tf.keras``) built on tapeflow's ops and tapes.

Layers, optimizers and initializers live here; ``tapeflow.layers`` and friends re-export them
under TensorFlow's short names. Models (``Model``, ``Sequential``, ``Input``) train with
Keras 3's ``compile``/``fit``/``evaluate``/``predict`` (models.py, trainer.py) and save to
``.keras`` files (saving.py).
"""
from . import (activations, backend, callbacks, confusion_metrics, constraints, core_layers,
               initializers, layers, losses, metric_classes, metrics, misc_layers, models,
               model_utils, more_callbacks, more_optimizers, normalization, optimizers, regularizers,
               saving, schedules, serialization, settings, utils)
from . import optimizer_wrappers, recent_optimizers, reversible_embedding, spectral_normalization, stft_initializer
from . import ctc_loss, model_plot
from .models import Input, InputLayer, Model, Sequential
from . import attention, normalization_layers, recurrent, rnn_cells, wrappers
from . import conv_layers, pooling_layers
from . import adaptive_pooling, conv_lstm

serialization.register_builtin(*rnn_cells.CELLS, *recurrent.CLASSES, *wrappers.CLASSES,
                               *attention.CLASSES, *normalization_layers.CLASSES)

# ``keras.layers`` holds every layer class; most are written in core_layers.py and normalization.py
layers.Input, layers.InputLayer = Input, InputLayer
for _cls in (normalization.CLASSES + core_layers.CLASSES + rnn_cells.CELLS + recurrent.CLASSES
             + wrappers.CLASSES + attention.CLASSES + normalization_layers.CLASSES):
    setattr(layers, _cls.__name__, _cls)
    layers.__all__.append(_cls.__name__)
layers.serialize, layers.deserialize = serialization.serialize, serialization.deserialize
# the convolution, pooling and spatial layers, and Keras' aliases of them (Conv2D's Convolution2D)
serialization.register_builtin(*conv_layers.CLASSES, *pooling_layers.CLASSES,
                               *adaptive_pooling.CLASSES, *conv_lstm.CLASSES)
for _name, _cls in [(c.__name__, c) for c in conv_layers.CLASSES + pooling_layers.CLASSES
                    + adaptive_pooling.CLASSES + conv_lstm.CLASSES] + \
        list(conv_layers.ALIASES.items()) + list(pooling_layers.ALIASES.items()):
    setattr(layers, _name, _cls)
    layers.__all__.append(_name)
layers.GroupQueryAttention = attention.GroupQueryAttention      # TensorFlow's alias
# ReversibleEmbedding, SpectralNormalization; the STFT initializer under Keras' three names
serialization.register_builtin(*reversible_embedding.CLASSES, *spectral_normalization.CLASSES)
for _cls in reversible_embedding.CLASSES + spectral_normalization.CLASSES:
    setattr(layers, _cls.__name__, _cls)
    layers.__all__.append(_cls.__name__)
for _name in ("STFT", "STFTInitializer", "stft"):
    setattr(initializers, _name, stft_initializer.STFT)
    initializers._BY_NAME[_name] = stft_initializer.STFT
    initializers.__all__.append(_name)
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

# ``keras.utils.model_to_dot``/``plot_model``
utils.model_to_dot, utils.plot_model = model_plot.model_to_dot, model_plot.plot_model
utils.__all__ += ["model_to_dot", "plot_model"]

# ``keras.losses.CTC``/``ctc``
losses.CTC, losses.ctc = ctc_loss.CTC, ctc_loss.ctc
losses.CLASSES["CTC"], losses.FUNCTIONS["ctc"] = ctc_loss.CTC, ctc_loss.ctc
losses.__all__ += ["CTC", "ctc"]

# ``keras.callbacks`` holds every callback
for _cls in more_callbacks.CLASSES:
    setattr(callbacks, _cls.__name__, _cls)
    callbacks.__all__.append(_cls.__name__)

# ``activation="..."`` names any of Keras 3's activations
layers.ACTIVATIONS.update(activations.ALL)

# ``keras.optimizers`` holds every optimizer, and ``keras.optimizers.schedules``
optimizers.schedules = schedules
for _cls in more_optimizers.CLASSES + recent_optimizers.CLASSES + optimizer_wrappers.CLASSES:
    setattr(optimizers, _cls.__name__, _cls)
    optimizers._BY_NAME[_cls.__name__.lower()] = _cls
    optimizers.__all__.append(_cls.__name__)

# ``keras.models.clone_model``/``model_from_json`` and ``Model.to_json``
models.clone_model, models.model_from_json = model_utils.clone_model, model_utils.model_from_json
models.Model.to_json = model_utils.to_json

# the top-level names of ``keras``: base classes and helpers
Layer, Loss, Metric = layers.Layer, losses.Loss, metrics.Metric
Optimizer, Initializer, Regularizer = optimizers.Optimizer, initializers.Initializer, regularizers.Regularizer
InputSpec = layers.InputSpec
from ..runtime.stack import device, name_scope  # noqa: E402
from ..autodiff.recompute import recompute_grad as _recompute_grad  # noqa: E402


def Variable(initializer, shape=None, dtype=None, trainable=True, autocast=True, aggregation="none",
             synchronization="auto", name=None):
    """``keras.Variable``: a variable from a value, or from an initializer and a shape.

    >>> v = tf.keras.Variable(tf.keras.initializers.Ones(), shape=(2,))
    >>> v.numpy().tolist()
    [1.0, 1.0]
    """
    from ..runtime.tensor import Variable as _Variable  # noqa: PLC0415  (kept local: the name is this function's)
    if callable(initializer):
        if shape is None:
            raise ValueError("When creating a Variable from an initializer, the `shape` argument "
                             "should be specified.")
        value = initializer(tuple(shape), dtype=dtype or settings.floatx())
    else:
        value = initializer
    return _Variable(value, trainable=trainable, name=name, dtype=dtype)


def version():
    """The Keras version whose behaviour ``tapeflow.keras`` follows (TF 2.21's Keras)."""
    return "3.15.1"


def remat(f):
    """Keras 3's rematerialization: ``f`` whose intermediate values are not kept for the
    gradient; the backward pass runs ``f`` again under a tape (``tf.recompute_grad``, as on
    Keras' TensorFlow backend). Values and gradients are ``f``'s; variables ``f`` reads (a
    layer's weights) get their gradients too.

    >>> calls = []
    >>> def f(x):
    ...     calls.append(1)
    ...     return tf.sin(x) * x
    >>> x = tf.constant(1.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = tf.keras.remat(f)(x)
    >>> round(float(tape.gradient(y, x)), 6), len(calls)       # f ran again for the gradient
    (1.381773, 2)
    """
    return _recompute_grad(f)


# ``keras.models.load_model``/``save_model`` and ``keras.saving``, as Keras 3 names them
models.load_model = saving.load_model
models.save_model = saving.save_model
saving.register_keras_serializable = serialization.register_keras_serializable
saving.custom_object_scope = serialization.custom_object_scope
saving.CustomObjectScope = serialization.custom_object_scope

__all__ = ["layers", "optimizers", "initializers", "backend", "losses", "metrics", "callbacks",
           "activations", "regularizers", "constraints", "utils", "Layer", "Loss", "Metric",
           "Optimizer", "Initializer", "Regularizer", "InputSpec", "Variable", "device", "name_scope",
           "version", "remat",
           "models", "saving", "Model", "Sequential", "Input"]


# misc_layers.py's layers (activations, merges, noise, ...) last, and only under names no other
# module provides (the spatial layers of issue 27 keep theirs)
for _obj in misc_layers.CLASSES + misc_layers.FUNCTIONS:
    if not hasattr(layers, _obj.__name__):
        setattr(layers, _obj.__name__, _obj)
        layers.__all__.append(_obj.__name__)
        if isinstance(_obj, type):
            serialization.register_builtin(_obj)
