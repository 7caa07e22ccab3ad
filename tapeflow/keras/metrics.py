"""Keras 3 metrics (``tf.keras.metrics``): stateful averages kept in non-trainable variables.

A metric's state is variables (``total``, ``count``), updated with
``assign_add``, so ``update_state`` works eagerly and inside ``tapeflow.function``
(``fit`` updates its metrics in the compiled train step). As in Keras 3,
``Mean`` first reduces a value of rank > 1 to one value per sample and counts
samples, not elements; the ``*Accuracy`` metrics are the mean of a per-sample
0/1 function (``MeanMetricWrapper``).
"""
from ..ir import dtypes as D
from ..ops import array as A
from ..ops import creation
from ..ops import math as M
from ..ops import reduce as R
from ..runtime.tensor import STATE_paused, Variable
from . import initializers
from . import losses as _losses
from .layers import to_snake_case
from .config_dicts import class_config_or_name, from_class_config


class Metric:
    """Base class: ``update_state``, ``result``, ``reset_state``; calling updates and returns the result."""

    def __init__(self, name=None, dtype=None):
        self.name = name or to_snake_case(type(self).__name__)
        self._dtype = D.as_dtype(dtype or D.float32)
        self._variables = []

    @property
    def dtype(self):
        return self._dtype.name

    @property
    def variables(self):
        return list(self._variables)

    def add_variable(self, shape, initializer="zeros", dtype=None, aggregation="sum", name=None):
        dtype = D.as_dtype(dtype or self._dtype)
        with STATE_paused():
            variable = Variable(initializers.get(initializer)(tuple(shape), dtype=dtype), trainable=False,
                                name=name, dtype=dtype)
        self._variables.append(variable)
        return variable

    def add_weight(self, shape=(), initializer=None, dtype=None, name=None):
        """Keras 3's older name of ``add_variable`` (the guides' custom metrics use it)."""
        return self.add_variable(shape, initializer or "zeros", dtype=dtype, name=name)

    def update_state(self, *args, **kwargs):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError

    def reset_state(self):
        for v in self._variables:
            v.assign(creation.zeros(v.shape, v.dtype))

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


def reduce_to_samplewise_values(values, sample_weight, reduce_fn, dtype):
    """One value per sample (``reduce_fn`` over the other axes), weighted (Keras 3)."""
    values = M.cast(values, dtype)
    if sample_weight is not None:
        sample_weight = M.cast(sample_weight, dtype)
        values, sample_weight = _losses.squeeze_or_expand_to_same_rank(values, sample_weight)
        weight_ndim, values_ndim = len(sample_weight.shape), len(values.shape)
        if values_ndim > weight_ndim:
            values = reduce_fn(values, axis=list(range(weight_ndim, values_ndim)))
        sample_weight = A.broadcast_to(sample_weight, values.shape)
        values = M.multiply(values, sample_weight)
        if weight_ndim > 1:
            sample_weight = reduce_fn(sample_weight, axis=list(range(1, weight_ndim)))
    if len(values.shape) > 1:
        values = reduce_fn(values, axis=list(range(1, len(values.shape))))
    return values, sample_weight


class Sum(Metric):
    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable((), name="total")

    def update_state(self, values, sample_weight=None):
        values, _ = reduce_to_samplewise_values(values, sample_weight, R.reduce_sum, self._dtype)
        self.total.assign_add(R.reduce_sum(values))

    def result(self):
        return M.cast(self.total, self._dtype)


class Mean(Metric):
    """The (weighted) mean of every value seen: ``total / count``, 0 before any update."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable((), name="total")
        self.count = self.add_variable((), name="count")

    def update_state(self, values, sample_weight=None):
        values, sample_weight = reduce_to_samplewise_values(values, sample_weight, R.reduce_mean,
                                                            self._dtype)
        self.total.assign_add(R.reduce_sum(values))
        if sample_weight is not None:
            samples = R.reduce_sum(sample_weight)
        elif len(values.shape) >= 1:     # a batch of unknown size: read when the program runs
            samples = values.shape[0] if values.shape[0] is not None else A.shape(values)[0]
        else:
            samples = 1
        self.count.assign_add(M.cast(samples, self._dtype))

    def result(self):
        return _losses.divide_no_nan(self.total.value(), self.count.value())


class MeanMetricWrapper(Mean):
    """The mean of a per-sample function ``fn(y_true, y_pred, **kwargs)``."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", None), dtype=dtype)
        self._fn, self._fn_kwargs = fn, kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        values = self._fn(y_true, y_pred, **self._fn_kwargs)
        return super().update_state(values, sample_weight=sample_weight)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


# -- per-sample functions --------------------------------------------------------------

def accuracy(y_true, y_pred):
    """1 where ``y_true == y_pred`` exactly."""
    y_pred = _losses._floating(y_pred)
    y_true = M.cast(y_true, y_pred.dtype)
    y_true, y_pred = _losses.squeeze_or_expand_to_same_rank(y_true, y_pred)
    return M.cast(M.equal(y_true, y_pred), D.float32)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """1 where ``y_pred > threshold`` agrees with the 0/1 label."""
    y_pred = _losses._floating(y_pred)
    y_true = _losses._floating(y_true)
    y_true, y_pred = _losses.squeeze_or_expand_to_same_rank(y_true, y_pred)
    y_pred = M.cast(M.greater(y_pred, M.cast(threshold, y_pred.dtype)), y_true.dtype)
    return M.cast(M.equal(y_true, y_pred), D.float32)


def categorical_accuracy(y_true, y_pred):
    """1 where the argmax of the prediction is the argmax of the one-hot label."""
    y_pred = _losses._floating(y_pred)
    matches = M.equal(R.argmax(y_true, axis=-1), R.argmax(y_pred, axis=-1))
    return M.cast(matches, D.float32)


def sparse_categorical_accuracy(y_true, y_pred):
    """1 where the argmax of the prediction is the integer label."""
    y_pred = _losses._floating(y_pred)
    y_true = M.cast(y_true, y_pred.dtype)
    original_shape, reshape = tuple(y_true.shape), False
    if len(y_true.shape) == len(y_pred.shape) and y_true.shape[-1] == 1:
        y_true, reshape = A.squeeze(y_true, -1), True
    predicted = M.cast(R.argmax(y_pred, axis=-1), y_true.dtype)
    matches = M.cast(M.equal(y_true, predicted), D.float32)
    if reshape:
        matches = A.reshape(matches, original_shape)
    if len(matches.shape) > 1 and matches.shape[-1] == 1:
        matches = A.squeeze(matches, -1)
    return matches


class Accuracy(MeanMetricWrapper):
    def __init__(self, name="accuracy", dtype=None):
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)


class MeanSquaredError(MeanMetricWrapper):
    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(_losses.mean_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(_losses.mean_absolute_error, name=name, dtype=dtype)


mean_squared_error = mse = _losses.mean_squared_error
mean_absolute_error = mae = _losses.mean_absolute_error
binary_crossentropy = _losses.binary_crossentropy
categorical_crossentropy = _losses.categorical_crossentropy
sparse_categorical_crossentropy = _losses.sparse_categorical_crossentropy

FUNCTIONS = {f.__name__: f for f in (accuracy, binary_accuracy, categorical_accuracy,
                                     sparse_categorical_accuracy, mean_squared_error,
                                     mean_absolute_error, binary_crossentropy, categorical_crossentropy,
                                     sparse_categorical_crossentropy)}
FUNCTIONS.update({"mse": mean_squared_error, "mae": mean_absolute_error})
CLASSES = {c.__name__: c for c in (Mean, Sum, Accuracy, BinaryAccuracy, CategoricalAccuracy,
                                   SparseCategoricalAccuracy, MeanSquaredError, MeanAbsoluteError)}
_SNAKE = {}    # Keras 3 also names a class by its snake-case name ("auc", "mean_iou")
_ALIASES = {"bce": "BinaryCrossentropy", "BCE": "BinaryCrossentropy", "mse": "MeanSquaredError",
            "MSE": "MeanSquaredError", "mae": "MeanAbsoluteError", "MAE": "MeanAbsoluteError",
            "mape": "MeanAbsolutePercentageError", "MAPE": "MeanAbsolutePercentageError",
            "msle": "MeanSquaredLogarithmicError", "MSLE": "MeanSquaredLogarithmicError"}


def register(classes, functions=()):
    """Add metric classes and functions defined in other modules (confusion_metrics.py,
    metric_classes.py import this one) to the name tables."""
    for cls in classes:
        CLASSES[cls.__name__] = cls
    for fn in functions:
        FUNCTIONS[fn.__name__] = fn
    _SNAKE.clear()
    _SNAKE.update({to_snake_case(name): cls for name, cls in CLASSES.items()})
    for alias, name in list(_ALIASES.items()):
        if isinstance(name, str) and name in CLASSES:
            _ALIASES[alias] = CLASSES[name]


def serialize(metric):
    """Keras 3's config dict of a metric (or the name of a metric function)."""
    return class_config_or_name(metric, Metric, FUNCTIONS, "keras.metrics")


def deserialize(config, custom_objects=None):
    objects = dict(custom_objects or {})
    if isinstance(config, str):
        return objects.get(config) or get(config)
    if isinstance(config, dict) and isinstance(config.get("class_name"), str):
        cls = objects.get(config["class_name"]) or CLASSES.get(config["class_name"])
        if cls is not None:
            return from_class_config(config, cls)
    raise ValueError(f"Could not interpret metric identifier: {config}")


register(())


def get(identifier):
    """A metric function or object from a name ('mae', 'BinaryAccuracy', ...), or as given."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        cls = CLASSES.get(identifier) or _SNAKE.get(identifier) or _ALIASES.get(identifier)
        if cls is not None:
            return cls()
        if identifier in FUNCTIONS:
            return FUNCTIONS[identifier]
    elif callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret metric identifier: {identifier}")


__all__ = ["Metric", "Mean", "Sum", "MeanMetricWrapper", "Accuracy", "BinaryAccuracy",
           "CategoricalAccuracy", "SparseCategoricalAccuracy", "MeanSquaredError", "MeanAbsoluteError",
           "accuracy", "binary_accuracy", "categorical_accuracy", "sparse_categorical_accuracy",
           "mean_squared_error", "mean_absolute_error", "mse", "mae", "binary_crossentropy",
           "categorical_crossentropy", "sparse_categorical_crossentropy", "get", "serialize",
           "deserialize", "register"]
