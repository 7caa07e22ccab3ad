"""Keras 3 losses (``tf.keras.losses``): the loss functions and the ``Loss`` classes wrapping them.

A loss function maps ``(y_true, y_pred)`` to one value per sample (the mean over
the last axis); a ``Loss`` object then weights those values by ``sample_weight``
and reduces them, by default ``"sum_over_batch_size"``: the sum divided by the
number of values (not by the sum of the weights). The formulas are Keras 3's
TensorFlow backend op for op: probabilities are clipped to ``[1e-7, 1 - 1e-7]``
before a log when ``from_logits=False``; sparse cross-entropy feeds the clipped
log-probabilities to ``sparse_softmax_cross_entropy_with_logits``, so rows that
do not sum to one are renormalized exactly as Keras does.

One difference: Keras remembers the logits of a ``softmax``/``sigmoid``
activation on the output tensor and uses them instead of the probabilities;
tapeflow's tensors carry no such attribute, so the probabilities are clipped.
The values differ only where a probability is below 1e-7.
"""
from ..ir import dtypes as D
from ..ops import array as A
from ..ops import clip as C
from ..ops import math as M
from ..ops import nn as N
from ..ops import reduce as R
from ..runtime.tensor import convert_to_tensor
from . import loss_functions as F
from .layers import to_snake_case
from .loss_functions import squeeze_or_expand_to_same_rank
from .config_dicts import class_config_or_name, from_class_config

EPSILON = 1e-7  # keras.backend.epsilon()

REDUCTIONS = ("sum_over_batch_size", "sum", None, "none", "mean", "mean_with_sample_weight")


def _float(x, dtype=D.float32):
    return M.cast(x, dtype)


def _floating(x):
    """A tensor of ``x``, cast to float32 unless it is floating already (NumPy float64 stays)."""
    x = convert_to_tensor(x)
    return x if x.dtype.is_floating else M.cast(x, D.float32)


def standardize_reduction(reduction):
    if reduction not in REDUCTIONS:
        raise ValueError(f"Invalid value for argument `reduction`. Expected one of "
                         f"{set(REDUCTIONS)}. Received: reduction={reduction}")
    return reduction


def divide_no_nan(x, y):
    """``x / y``, and 0 where ``y`` is 0."""
    zero = M.equal(y, M.cast(0, y.dtype))
    safe = M.where(zero, M.cast(1, y.dtype), y)
    return M.where(zero, M.cast(0, x.dtype), M.divide(x, safe))


def reduce_values(values, sample_weight=None, reduction="sum_over_batch_size"):
    if reduction in (None, "none") or tuple(values.shape) in ((), (0,)):
        return values
    loss = R.reduce_sum(values)
    if reduction in ("sum_over_batch_size", "mean", "mean_with_sample_weight"):
        if reduction == "mean_with_sample_weight" and sample_weight is not None:
            divisor = M.cast(R.reduce_sum(sample_weight), loss.dtype)
        elif None in tuple(values.shape):   # a size known when the program runs (a batch)
            divisor = M.cast(A.size(values), loss.dtype)
        else:
            count = 1
            for d in values.shape:
                count *= int(d)
            divisor = M.cast(count, loss.dtype)
        loss = divide_no_nan(loss, divisor)
    return loss


def reduce_weighted_values(values, sample_weight=None, reduction="sum_over_batch_size",
                           dtype=D.float32):
    reduction = standardize_reduction(reduction)
    values = _float(values, dtype)
    if sample_weight is not None:
        sample_weight = _float(sample_weight, values.dtype)
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        values = M.multiply(values, sample_weight)
    return reduce_values(values, sample_weight, reduction)


# -- loss functions: one value per sample ------------------------------------------------

def mean_squared_error(y_true, y_pred):
    """``mean(square(y_true - y_pred), axis=-1)``."""
    y_pred = _floating(y_pred)
    y_true = _float(y_true, y_pred.dtype)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return R.reduce_mean(M.square(M.subtract(y_true, y_pred)), axis=-1)


def mean_absolute_error(y_true, y_pred):
    """``mean(abs(y_true - y_pred), axis=-1)``."""
    y_pred = _floating(y_pred)
    y_true = _float(y_true, y_pred.dtype)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return R.reduce_mean(M.abs(M.subtract(y_true, y_pred)), axis=-1)


def _binary_crossentropy(target, output, from_logits):
    if len(target.shape) != len(output.shape) or tuple(target.shape) != tuple(output.shape):
        raise ValueError(f"Arguments `target` and `output` must have the same shape. Received: "
                         f"target.shape={tuple(target.shape)}, output.shape={tuple(output.shape)}")
    if from_logits:
        return N.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    output = C.clip_by_value(output, EPSILON, 1.0 - EPSILON)
    bce = M.multiply(target, M.log(output))
    bce = M.add(bce, M.multiply(M.subtract(1.0, target), M.log(M.subtract(1.0, output))))
    return M.negative(bce)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Per-sample binary cross-entropy: the mean over ``axis`` of each entry's."""
    y_pred = _floating(y_pred)
    y_true = M.cast(y_true, y_pred.dtype)
    if label_smoothing:
        y_true = M.add(M.multiply(y_true, 1.0 - label_smoothing), 0.5 * label_smoothing)
    return R.reduce_mean(_binary_crossentropy(y_true, y_pred, from_logits), axis=axis)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Cross-entropy against one-hot (or soft) targets."""
    y_pred = _floating(y_pred)
    y_true = M.cast(y_true, y_pred.dtype)
    if tuple(y_true.shape) != tuple(y_pred.shape):
        raise ValueError(f"Arguments `target` and `output` must have the same shape. Received: "
                         f"target.shape={tuple(y_true.shape)}, output.shape={tuple(y_pred.shape)}")
    if label_smoothing:
        classes = y_pred.shape[axis]
        y_true = M.add(M.multiply(y_true, 1.0 - label_smoothing), label_smoothing / classes)
    if from_logits:
        return N.softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred, axis=axis)
    output = M.divide(y_pred, R.reduce_sum(y_pred, axis, keepdims=True))
    output = C.clip_by_value(output, EPSILON, 1.0 - EPSILON)
    return M.negative(R.reduce_sum(M.multiply(y_true, M.log(output)), axis))


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """Cross-entropy against integer class ids (``y_true`` of shape ``y_pred.shape[:-1]``)."""
    if ignore_class is not None:
        raise NotImplementedError("tapeflow's sparse_categorical_crossentropy has no ignore_class yet")
    y_pred = _floating(y_pred)
    if axis not in (-1, len(y_pred.shape) - 1):
        raise ValueError(f"Only axis=-1 is currently supported. Received: axis={axis}")
    y_true = M.cast(y_true, D.int64)
    if len(y_true.shape) == len(y_pred.shape) and y_true.shape[-1] == 1:
        y_true = A.squeeze(y_true, -1)
    if len(y_true.shape) != len(y_pred.shape) - 1:
        raise ValueError(f"Argument `output` must have rank (ndim) `target.ndim - 1`. Received: "
                         f"target.shape={tuple(y_true.shape)}, output.shape={tuple(y_pred.shape)}")
    if not from_logits:
        y_pred = M.log(C.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON))
    return N.sparse_softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error


# -- Loss objects ------------------------------------------------------------------------

class Loss:
    """``loss(y_true, y_pred, sample_weight=None)``: per-sample values from ``call``, reduced."""

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or to_snake_case(type(self).__name__)
        self.reduction = standardize_reduction(reduction)
        self.dtype = D.as_dtype(dtype or D.float32)

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_pred = _float(y_pred, self.dtype)
        y_true = _float(y_true, self.dtype)
        losses = self.call(y_true, y_pred)
        return reduce_weighted_values(losses, sample_weight, self.reduction, self.dtype)

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class LossFunctionWrapper(Loss):
    """A ``Loss`` made of a per-sample function and its keyword arguments."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.fn, self._fn_kwargs = fn, kwargs

    def call(self, y_true, y_pred):
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}

    def __repr__(self):
        return f"<LossFunctionWrapper({self.fn}, kwargs={self._fn_kwargs})>"


class MeanSquaredError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, name=name, reduction=reduction, dtype=dtype)


class MeanAbsoluteError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, name=name, reduction=reduction, dtype=dtype)


class BinaryCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="binary_crossentropy", dtype=None):
        super().__init__(binary_crossentropy, name=name, reduction=reduction, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis


class CategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_crossentropy", dtype=None):
        super().__init__(categorical_crossentropy, name=name, reduction=reduction, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, ignore_class=None, reduction="sum_over_batch_size",
                 name="sparse_categorical_crossentropy", dtype=None):
        super().__init__(sparse_categorical_crossentropy, name=name, reduction=reduction, dtype=dtype,
                         from_logits=from_logits, ignore_class=ignore_class)
        self.from_logits, self.ignore_class = from_logits, ignore_class


def _wrapper(class_name, fn, default_name, doc, **defaults):
    """A ``LossFunctionWrapper`` subclass with Keras 3's signature: ``defaults`` (in order), then
    ``reduction``, ``name``, ``dtype``."""
    def __init__(self, *args, reduction="sum_over_batch_size", name=default_name, dtype=None, **kwargs):
        options = dict(defaults)
        for key, value in zip(defaults, args):
            options[key] = value
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{class_name}.__init__() got an unexpected keyword argument "
                            f"{sorted(unknown)[0]!r}")
        options.update(kwargs)
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, dtype=dtype, **options)
        for key, value in options.items():
            setattr(self, key, value)
    return type(class_name, (LossFunctionWrapper,), {"__init__": __init__, "__doc__": doc,
                                                     "__module__": __name__})


MeanAbsolutePercentageError = _wrapper(
    "MeanAbsolutePercentageError", F.mean_absolute_percentage_error, "mean_absolute_percentage_error",
    "``100 * mean(|y_true - y_pred| / max(|y_true|, epsilon))``.")
MeanSquaredLogarithmicError = _wrapper(
    "MeanSquaredLogarithmicError", F.mean_squared_logarithmic_error, "mean_squared_logarithmic_error",
    "The mean squared difference of ``log(1 + y)``.")
CosineSimilarity = _wrapper("CosineSimilarity", F.cosine_similarity, "cosine_similarity",
                            "Minus the cosine of the angle between targets and predictions.", axis=-1)
Huber = _wrapper("Huber", F.huber, "huber_loss", "Quadratic within ``delta``, linear beyond.", delta=1.0)
LogCosh = _wrapper("LogCosh", F.log_cosh, "log_cosh", "``log(cosh(y_pred - y_true))``.")
Hinge = _wrapper("Hinge", F.hinge, "hinge", "``max(1 - y_true * y_pred, 0)`` (0/1 labels as -1/1).")
SquaredHinge = _wrapper("SquaredHinge", F.squared_hinge, "squared_hinge", "The squared hinge loss.")
CategoricalHinge = _wrapper("CategoricalHinge", F.categorical_hinge, "categorical_hinge",
                            "The hinge loss of one-hot targets.")
KLDivergence = _wrapper("KLDivergence", F.kl_divergence, "kl_divergence",
                        "``sum(y_true * log(y_true / y_pred))``.")
Poisson = _wrapper("Poisson", F.poisson, "poisson", "``y_pred - y_true * log(y_pred)``.")
BinaryFocalCrossentropy = _wrapper(
    "BinaryFocalCrossentropy", F.binary_focal_crossentropy, "binary_focal_crossentropy",
    "Binary cross-entropy down-weighting easy examples by ``(1 - p_t) ** gamma``.",
    apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1)
CategoricalFocalCrossentropy = _wrapper(
    "CategoricalFocalCrossentropy", F.categorical_focal_crossentropy, "categorical_focal_crossentropy",
    "Categorical cross-entropy down-weighting easy examples by ``alpha * (1 - p) ** gamma``.",
    alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1)
Tversky = _wrapper("Tversky", F.tversky, "tversky", "``1 - TP / (TP + alpha FP + beta FN)``.",
                   alpha=0.5, beta=0.5, axis=None)
CategoricalGeneralizedCrossEntropy = _wrapper(
    "CategoricalGeneralizedCrossEntropy", F.categorical_generalized_cross_entropy,
    "categorical_generalized_cross_entropy", "``(1 - p ** q) / q`` of the label's probability.", q=0.5)


class Dice(LossFunctionWrapper):
    """``1 - 2 |y_true . y_pred| / (|y_true| + |y_pred|)`` over ``axis``."""

    def __init__(self, reduction="sum_over_batch_size", name="dice", axis=None, dtype=None):
        super().__init__(F.dice, name=name, reduction=reduction, dtype=dtype, axis=axis)
        self.axis = axis


class Circle(LossFunctionWrapper):
    """The circle loss of embeddings; samples whose loss is 0 are masked out of the mean, as
    Keras 3 masks them."""

    def __init__(self, gamma=80.0, margin=0.4, remove_diagonal=True, reduction="sum_over_batch_size",
                 name="circle", dtype=None):
        super().__init__(F.circle, name=name, reduction=reduction, dtype=dtype, gamma=gamma, margin=margin,
                         remove_diagonal=remove_diagonal)
        self.gamma, self.margin, self.remove_diagonal = gamma, margin, remove_diagonal

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_pred = _float(y_pred, self.dtype)
        losses, mask = F.circle_with_mask(y_true, y_pred, gamma=self.gamma, margin=self.margin,
                                          remove_diagonal=self.remove_diagonal)
        if self.reduction in ("mean", "sum_over_batch_size"):
            total = M.cast(int(mask.shape[0]), losses.dtype)
            valid = R.reduce_sum(M.cast(mask, losses.dtype))
            weight = M.where(mask, M.add(M.multiply(losses, 0.0), divide_no_nan(total, valid)),
                             M.multiply(losses, 0.0))
        else:
            weight = M.cast(mask, losses.dtype)
        if sample_weight is not None:
            sample_weight = _float(sample_weight, losses.dtype)
            weight, sample_weight = squeeze_or_expand_to_same_rank(weight, sample_weight)
            weight = M.multiply(sample_weight, weight)
        return reduce_weighted_values(losses, weight, self.reduction, self.dtype)


class Reduction:
    """The reduction names ``Loss`` accepts (Keras 2's ``losses.Reduction``, kept by TF 2.21)."""
    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f'Invalid Reduction Key: {key}. Expected keys are "{cls.all()}"')


mean_absolute_percentage_error = mape = MAPE = F.mean_absolute_percentage_error
mean_squared_logarithmic_error = msle = MSLE = F.mean_squared_logarithmic_error
cosine_similarity = F.cosine_similarity
huber = F.huber
log_cosh = logcosh = F.log_cosh
hinge, squared_hinge, categorical_hinge = F.hinge, F.squared_hinge, F.categorical_hinge
kl_divergence = kld = KLD = kullback_leibler_divergence = F.kl_divergence
poisson = F.poisson
binary_focal_crossentropy = F.binary_focal_crossentropy
categorical_focal_crossentropy = F.categorical_focal_crossentropy
dice, tversky, circle = F.dice, F.tversky, F.circle
categorical_generalized_cross_entropy = F.categorical_generalized_cross_entropy


# -- lookup by name ----------------------------------------------------------------------

FUNCTIONS = {f.__name__: f for f in (
    mean_squared_error, mean_absolute_error, binary_crossentropy, categorical_crossentropy,
    sparse_categorical_crossentropy, mean_absolute_percentage_error, mean_squared_logarithmic_error,
    cosine_similarity, huber, log_cosh, hinge, squared_hinge, categorical_hinge, kl_divergence, poisson,
    binary_focal_crossentropy, categorical_focal_crossentropy, dice, tversky,
    categorical_generalized_cross_entropy, circle)}
FUNCTIONS.update({"mse": mean_squared_error, "mae": mean_absolute_error, "MSE": mean_squared_error,
                  "MAE": mean_absolute_error, "bce": binary_crossentropy, "BCE": binary_crossentropy,
                  "kld": kl_divergence, "KLD": kl_divergence, "mape": mean_absolute_percentage_error,
                  "MAPE": mean_absolute_percentage_error, "msle": mean_squared_logarithmic_error,
                  "MSLE": mean_squared_logarithmic_error, "logcosh": log_cosh,
                  "kullback_leibler_divergence": kl_divergence})
CLASSES = {c.__name__: c for c in (
    MeanSquaredError, MeanAbsoluteError, BinaryCrossentropy, CategoricalCrossentropy,
    SparseCategoricalCrossentropy, MeanAbsolutePercentageError, MeanSquaredLogarithmicError,
    CosineSimilarity, Huber, LogCosh, Hinge, SquaredHinge, CategoricalHinge, KLDivergence, Poisson,
    BinaryFocalCrossentropy, CategoricalFocalCrossentropy, Dice, Tversky,
    CategoricalGeneralizedCrossEntropy, Circle)}


def serialize(loss):
    """Keras 3's config dict of a ``Loss``, or the name of a loss function."""
    return class_config_or_name(loss, Loss, FUNCTIONS, "keras.losses")


def deserialize(name, custom_objects=None):
    """The loss a ``serialize`` result names (a function name or a class config)."""
    objects = dict(custom_objects or {})
    if isinstance(name, str):
        if name in objects:
            return objects[name]
        if name in FUNCTIONS:
            return FUNCTIONS[name]
    if isinstance(name, dict) and isinstance(name.get("class_name"), str):
        cls = objects.get(name["class_name"]) or CLASSES.get(name["class_name"])
        if cls is not None:
            return from_class_config(name, cls)
    raise ValueError(f"Could not interpret loss identifier: {name}")


def get(identifier):
    """A loss function or object from a name ('mse', 'MeanSquaredError', ...), or as given."""
    if identifier is None or isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str):
        if identifier in FUNCTIONS:
            return FUNCTIONS[identifier]
        if identifier in CLASSES:
            return CLASSES[identifier]()
        raise ValueError(f"Could not interpret loss identifier: {identifier}")
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss identifier: {identifier}")


__all__ = ["Loss", "LossFunctionWrapper", "Reduction", "get", "serialize", "deserialize", "squeeze_or_expand_to_same_rank"]
__all__ += sorted(CLASSES) + sorted(FUNCTIONS)
