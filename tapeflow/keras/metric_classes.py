"""Keras 3's other metrics: means of per-sample losses and errors, top-k accuracy, RMSE, R²,
correlations, F-scores and IoU, each with Keras 3's names, defaults and arithmetic
(``keras.src.metrics``)."""
from ..ir import dtypes as D
from ..ops import array as A
from ..ops import linalg as L
from ..ops import math as M
from ..ops import reduce as R
from ..runtime.tensor import convert_to_tensor
from . import loss_functions as F
from . import losses as _losses
from . import settings
from .loss_functions import squeeze_or_expand_to_same_rank
from .losses import divide_no_nan
from .metrics import Mean, MeanMetricWrapper, Metric


# -- per-sample functions ------------------------------------------------------------------

def _in_top_k(targets, predictions, k):
    """TF's ``in_top_k``: the target's score has fewer than ``k`` scores above it."""
    target_score = R.reduce_sum(M.multiply(predictions, A.one_hot(targets, predictions.shape[-1],
                                                                 dtype=predictions.dtype)), axis=-1)
    above = R.reduce_sum(M.cast(M.greater(predictions, A.expand_dims(target_score, -1)), D.int32), axis=-1)
    return M.less(above, k)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_pred = convert_to_tensor(y_pred)
    y_true = R.argmax(M.cast(y_true, y_pred.dtype), axis=-1)
    shape = tuple(y_true.shape)
    if len(y_pred.shape) > 2:
        y_pred = A.reshape(y_pred, [-1, y_pred.shape[-1]])
    matches = M.cast(_in_top_k(A.reshape(M.cast(y_true, D.int32), [-1]), y_pred, k), settings.floatx())
    return A.reshape(matches, shape) if len(shape) > 1 else matches


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    y_pred = convert_to_tensor(y_pred)
    if from_sorted_ids:
        y_true = M.cast(y_true, y_pred.dtype)
        hit = R.reduce_any(M.equal(A.expand_dims(y_true, -1), y_pred[..., :k]), axis=-1)
        return M.cast(hit, settings.floatx())
    y_true = M.cast(y_true, D.int32)
    shape = tuple(y_true.shape)
    if len(y_pred.shape) > 2:
        y_pred = A.reshape(y_pred, [-1, y_pred.shape[-1]])
    if len(y_true.shape) > 1:
        y_true = A.reshape(y_true, [-1])
    matches = M.cast(_in_top_k(y_true, y_pred, k), settings.floatx())
    if len(shape) > 1:
        matches = A.reshape(matches, shape)
    return matches


def _metric_cosine_similarity(y_true, y_pred, axis=-1):
    return M.negative(F.cosine_similarity(y_true, y_pred, axis=axis))


def pearson_correlation(y_true, y_pred, axis=-1):
    y_true, y_pred = F._pair(y_true, y_pred)

    def centred_scaled(x):
        x = M.subtract(x, R.reduce_mean(x, axis=axis, keepdims=True))
        std = M.sqrt(R.reduce_mean(M.square(M.subtract(x, R.reduce_mean(x, axis=axis, keepdims=True))),
                                   axis=axis, keepdims=True))
        return M.divide(x, std)
    return R.reduce_mean(M.multiply(centred_scaled(y_true), centred_scaled(y_pred)), axis=axis)


def concordance_correlation(y_true, y_pred, axis=-1):
    y_true, y_pred = F._pair(y_true, y_pred)
    true_mean = R.reduce_mean(y_true, axis=axis, keepdims=True)
    pred_mean = R.reduce_mean(y_pred, axis=axis, keepdims=True)

    def var(x):
        return R.reduce_mean(M.square(M.subtract(x, R.reduce_mean(x, axis=axis, keepdims=True))),
                             axis=axis, keepdims=True)
    true_var, pred_var = var(M.subtract(y_true, true_mean)), var(M.subtract(y_pred, pred_mean))
    covar = M.multiply(M.subtract(y_true, pred_mean), M.subtract(y_pred, pred_mean))
    norm = M.add(M.add(true_var, pred_var), M.square(M.subtract(true_mean, pred_mean)))
    return R.reduce_mean(M.divide(M.multiply(2.0, covar), M.add(norm, settings.epsilon())), axis=axis)


# -- mean-of-function metrics ----------------------------------------------------------------

def _wrapper(class_name, fn, default_name, doc, **defaults):
    """A ``MeanMetricWrapper`` subclass with Keras 3's signature ``(name, dtype, **defaults)``."""
    def __init__(self, name=default_name, dtype=None, **kwargs):
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{class_name}.__init__() got an unexpected keyword argument "
                            f"{sorted(unknown)[0]!r}")
        options = {**defaults, **kwargs}
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **options)
        for key, value in options.items():
            setattr(self, key, value)
    return type(class_name, (MeanMetricWrapper,), {"__init__": __init__, "__doc__": doc,
                                                   "__module__": __name__})


TopKCategoricalAccuracy = _wrapper("TopKCategoricalAccuracy", top_k_categorical_accuracy,
                                   "top_k_categorical_accuracy",
                                   "How often the one-hot label is among the top ``k`` predictions.", k=5)
SparseTopKCategoricalAccuracy = _wrapper(
    "SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy, "sparse_top_k_categorical_accuracy",
    "How often the integer label is among the top ``k`` predictions.", k=5, from_sorted_ids=False)
MeanAbsolutePercentageError = _wrapper("MeanAbsolutePercentageError", F.mean_absolute_percentage_error,
                                       "mean_absolute_percentage_error", "The mean of MAPE.")
MeanSquaredLogarithmicError = _wrapper("MeanSquaredLogarithmicError", F.mean_squared_logarithmic_error,
                                       "mean_squared_logarithmic_error", "The mean of MSLE.")
CosineSimilarity = _wrapper("CosineSimilarity", _metric_cosine_similarity, "cosine_similarity",
                            "The mean cosine of the angle between targets and predictions.", axis=-1)
LogCoshError = _wrapper("LogCoshError", F.log_cosh, "logcosh", "The mean of log(cosh(error)).")
PearsonCorrelation = _wrapper("PearsonCorrelation", pearson_correlation, "pearson_correlation",
                              "The mean Pearson correlation along ``axis``.", axis=-1)
ConcordanceCorrelation = _wrapper("ConcordanceCorrelation", concordance_correlation,
                                  "concordance_correlation",
                                  "The mean concordance correlation along ``axis``.", axis=-1)
Hinge = _wrapper("Hinge", F.hinge, "hinge", "The mean hinge loss.")
SquaredHinge = _wrapper("SquaredHinge", F.squared_hinge, "squared_hinge", "The mean squared hinge loss.")
CategoricalHinge = _wrapper("CategoricalHinge", F.categorical_hinge, "categorical_hinge",
                            "The mean categorical hinge loss.")
KLDivergence = _wrapper("KLDivergence", F.kl_divergence, "kl_divergence", "The mean KL divergence.")
Poisson = _wrapper("Poisson", F.poisson, "poisson", "The mean Poisson loss.")
BinaryCrossentropy = _wrapper("BinaryCrossentropy", _losses.binary_crossentropy, "binary_crossentropy",
                              "The mean binary cross-entropy.", from_logits=False, label_smoothing=0.0)
CategoricalCrossentropy = _wrapper("CategoricalCrossentropy", _losses.categorical_crossentropy,
                                   "categorical_crossentropy", "The mean categorical cross-entropy.",
                                   from_logits=False, label_smoothing=0.0, axis=-1)
SparseCategoricalCrossentropy = _wrapper(
    "SparseCategoricalCrossentropy", _losses.sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy", "The mean sparse categorical cross-entropy.",
    from_logits=False, axis=-1)


class RootMeanSquaredError(Mean):
    """``sqrt`` of the (weighted) mean squared error."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = M.cast(y_true, self._dtype)
        y_pred = M.cast(y_pred, self._dtype)
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        return super().update_state(M.square(M.subtract(y_pred, y_true)), sample_weight=sample_weight)

    def result(self):
        return M.sqrt(super().result())


class R2Score(Metric):
    """The coefficient of determination per output column, aggregated as asked."""

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if class_aggregation not in (None, "uniform_average", "variance_weighted_average"):
            raise ValueError(f"Invalid value for argument `class_aggregation`. Expected one of "
                             f"(None, 'uniform_average', 'variance_weighted_average'). Received: "
                             f"class_aggregation={class_aggregation}")
        if num_regressors < 0:
            raise ValueError(f"Invalid value for argument `num_regressors`. Expected a value >= 0. "
                             f"Received: num_regressors={num_regressors}")
        self.class_aggregation, self.num_regressors = class_aggregation, num_regressors
        self.num_samples = self.add_variable((), name="num_samples")
        self._built = False

    def _build(self, shape):
        if len(shape) != 2:
            raise ValueError(f"R2Score expects 2D inputs with shape (batch_size, output_dim). "
                             f"Received input shapes: y_pred.shape={tuple(shape)}")
        n = (shape[-1],)
        self.squared_sum = self.add_variable(n, name="squared_sum")
        self.sum = self.add_variable(n, name="sum")
        self.total_mse = self.add_variable(n, name="residual")
        self.count = self.add_variable(n, name="count")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = M.cast(y_true, self._dtype)
        y_pred = M.cast(y_pred, self._dtype)
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        if not self._built:
            self._build(list(y_true.shape))
        w = convert_to_tensor(1.0 if sample_weight is None else sample_weight)
        w = M.cast(w, self._dtype)
        if len(w.shape) == 1:
            w = A.expand_dims(w, 1)
        w = A.broadcast_to(w, y_true.shape)
        weighted = M.multiply(y_true, w)
        self.sum.assign_add(R.reduce_sum(weighted, axis=0))
        self.squared_sum.assign_add(R.reduce_sum(M.multiply(y_true, weighted), axis=0))
        self.total_mse.assign_add(R.reduce_sum(M.multiply(M.square(M.subtract(y_true, y_pred)), w), axis=0))
        self.count.assign_add(R.reduce_sum(w, axis=0))
        size = 1
        for d in y_true.shape:
            size *= int(d)
        self.num_samples.assign_add(M.cast(size, self._dtype))

    def result(self):
        mean = M.divide(self.sum.value(), self.count.value())
        total = M.subtract(self.squared_sum.value(), M.multiply(self.sum.value(), mean))
        raw = M.subtract(1.0, M.divide(self.total_mse.value(), total))
        raw = M.where(M.is_inf(raw), M.multiply(raw, 0.0), raw)
        if self.class_aggregation == "uniform_average":
            score = R.reduce_mean(raw)
        elif self.class_aggregation == "variance_weighted_average":
            score = M.divide(R.reduce_sum(M.multiply(total, raw)), R.reduce_sum(total))
        else:
            score = raw
        if self.num_regressors:
            n, p = self.num_samples.value(), float(self.num_regressors)
            score = M.subtract(1.0, M.divide(M.multiply(M.subtract(1.0, score), M.subtract(n, 1.0)),
                                             M.subtract(M.subtract(n, p), 1.0)))
        return score

    def reset_state(self):
        for v in self._variables:
            v.assign(M.multiply(v.value(), 0.0))

    def get_config(self):
        return {**super().get_config(), "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}


class FBetaScore(Metric):
    """Per-class F-beta of thresholded predictions (the row's maximum when ``threshold`` is None),
    averaged as asked ("micro", "macro", "weighted" or None)."""

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError(f"Invalid `average` argument value. Expected one of: {{None, 'micro', "
                             f"'macro', 'weighted'}}. Received: average={average}")
        if not isinstance(beta, float):
            raise ValueError(f"Invalid `beta` argument value. It should be a Python float. Received: "
                             f"beta={beta} of type '{type(beta)}'")
        if beta <= 0.0:
            raise ValueError(f"Invalid `beta` argument value. It should be > 0. Received: beta={beta}")
        if threshold is not None:
            if not isinstance(threshold, float):
                raise ValueError(f"Invalid `threshold` argument value. It should be a Python float. "
                                 f"Received: threshold={threshold} of type '{type(threshold)}'")
            if threshold > 1.0 or threshold <= 0.0:
                raise ValueError(f"Invalid `threshold` argument value. It should verify 0 < threshold "
                                 f"<= 1. Received: threshold={threshold}")
        self.average, self.beta, self.threshold = average, beta, threshold
        self.axis = None if average == "micro" else 0
        self._built = False

    def _build(self, shape):
        if len(shape) != 2:
            raise ValueError(f"FBetaScore expects 2D inputs with shape (batch_size, output_dim). "
                             f"Received input shapes: y_pred.shape={tuple(shape)}")
        n = () if self.average == "micro" else (shape[-1],)
        self.true_positives = self.add_variable(n, name="true_positives")
        self.false_positives = self.add_variable(n, name="false_positives")
        self.false_negatives = self.add_variable(n, name="false_negatives")
        self.intermediate_weights = self.add_variable(n, name="intermediate_weights")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = M.cast(y_true, self._dtype)
        y_pred = M.cast(y_pred, self._dtype)
        if not self._built:
            self._build(list(y_pred.shape))
        if self.threshold is None:
            top = R.reduce_max(y_pred, axis=-1, keepdims=True)
            y_pred = M.logical_and(M.greater_equal(y_pred, top), M.greater(M.abs(y_pred), 1e-9))
        else:
            y_pred = M.greater(y_pred, self.threshold)
        y_pred = M.cast(y_pred, self._dtype)
        weight = None if sample_weight is None else A.expand_dims(M.cast(sample_weight, self._dtype), 1)

        def weighted_sum(value):
            if weight is not None:
                value = M.multiply(value, weight)
            return R.reduce_sum(value, axis=self.axis)
        one = M.cast(1.0, self._dtype)
        self.true_positives.assign_add(weighted_sum(M.multiply(y_pred, y_true)))
        self.false_positives.assign_add(weighted_sum(M.multiply(y_pred, M.subtract(one, y_true))))
        self.false_negatives.assign_add(weighted_sum(M.multiply(M.subtract(one, y_pred), y_true)))
        self.intermediate_weights.assign_add(weighted_sum(y_true))

    def result(self):
        eps = settings.epsilon()
        tp, fp, fn = self.true_positives.value(), self.false_positives.value(), self.false_negatives.value()
        precision = M.divide(tp, M.add(M.add(tp, fp), eps))
        recall = M.divide(tp, M.add(M.add(tp, fn), eps))
        beta2 = self.beta ** 2
        mean = M.divide(M.multiply(precision, recall), M.add(M.add(M.multiply(beta2, precision), recall), eps))
        score = M.multiply(mean, 1.0 + beta2)
        if self.average == "weighted":
            w = self.intermediate_weights.value()
            score = R.reduce_sum(M.multiply(score, M.divide(w, M.add(R.reduce_sum(w), eps))))
        elif self.average is not None:
            score = R.reduce_mean(score)
        return score

    def reset_state(self):
        for v in self._variables:
            v.assign(M.multiply(v.value(), 0.0))

    def get_config(self):
        return {**super().get_config(), "beta": self.beta, "average": self.average,
                "threshold": self.threshold}


class F1Score(FBetaScore):
    """``FBetaScore`` with ``beta=1``."""

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self):
        config = super().get_config()
        del config["beta"]
        return config


class IoU(Metric):
    """Intersection over union of the classes ``target_class_ids``, from an int32 confusion
    matrix (so float sample weights truncate, as in Keras)."""

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        super().__init__(name=name, dtype=dtype or D.int32)
        if max(target_class_ids) >= num_classes:
            raise ValueError(f"Target class id {max(target_class_ids)} is out of range, which is "
                             f"[0, {num_classes}).")
        self.num_classes, self.ignore_class, self.axis = num_classes, ignore_class, axis
        self.sparse_y_true, self.sparse_y_pred = sparse_y_true, sparse_y_pred
        self.target_class_ids = list(target_class_ids)
        self.total_cm = self.add_variable((num_classes, num_classes), name="total_confusion_matrix")

    def update_state(self, y_true, y_pred, sample_weight=None):
        if not self.sparse_y_true:
            y_true = R.argmax(y_true, axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = R.argmax(y_pred, axis=self.axis)
        dtype = self._dtype
        y_true = A.reshape(M.cast(y_true, dtype), [-1])
        y_pred = A.reshape(M.cast(y_pred, dtype), [-1])
        w = M.cast(convert_to_tensor(1 if sample_weight is None else sample_weight), dtype)
        w = A.broadcast_to(A.reshape(w, [-1]) if len(w.shape) > 1 else w, y_true.shape)
        n = self.num_classes
        valid = M.logical_and(M.logical_and(M.greater_equal(y_true, 0), M.less(y_true, n)),
                              M.logical_and(M.greater_equal(y_pred, 0), M.less(y_pred, n)))
        if self.ignore_class is not None:
            valid = M.logical_and(valid, M.not_equal(y_true, self.ignore_class))
        zero = M.multiply(w, 0)
        w = M.where(valid, w, zero)
        y_true, y_pred = M.where(valid, y_true, zero), M.where(valid, y_pred, zero)
        rows = A.one_hot(y_true, n, dtype=dtype)
        cols = A.one_hot(y_pred, n, dtype=dtype)
        cm = R.reduce_sum(M.multiply(M.multiply(A.expand_dims(rows, 2), A.expand_dims(cols, 1)),
                                     A.reshape(w, [-1, 1, 1])), axis=0)
        self.total_cm.assign_add(cm)

    def result(self):
        cm = M.cast(self.total_cm.value(), D.float32)
        sum_over_row, sum_over_col = R.reduce_sum(cm, axis=0), R.reduce_sum(cm, axis=1)
        tp = L.diag_part(cm)
        denominator = M.subtract(M.add(sum_over_row, sum_over_col), tp)
        ids = convert_to_tensor(self.target_class_ids, dtype=D.int32)
        tp, denominator = A.gather(tp, ids), A.gather(denominator, ids)
        valid = M.greater(denominator, 1e-9)
        iou = M.where(valid, M.divide(tp, M.add(denominator, settings.epsilon())), M.multiply(tp, 0.0))
        return M.divide(R.reduce_sum(iou, axis=self.axis),
                        M.add(R.reduce_sum(M.cast(valid, D.float32)), settings.epsilon()))

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes,
                "target_class_ids": self.target_class_ids, "ignore_class": self.ignore_class,
                "sparse_y_true": self.sparse_y_true, "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class BinaryIoU(IoU):
    """IoU of the thresholded binary predictions (``>= threshold``)."""

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(num_classes=2, target_class_ids=target_class_ids, name=name, dtype=dtype)
        self.threshold = threshold

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = M.cast(M.greater_equal(M.cast(y_pred, D.float32), self.threshold), self._dtype)
        return super().update_state(y_true, y_pred, sample_weight)

    def get_config(self):
        return {"target_class_ids": self.target_class_ids, "threshold": self.threshold,
                "name": self.name, "dtype": self.dtype}


class MeanIoU(IoU):
    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(num_classes, list(range(num_classes)), name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=sparse_y_true,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        return {"num_classes": self.num_classes, "name": self.name, "dtype": self.dtype,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class OneHotIoU(IoU):
    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, target_class_ids, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        return {"num_classes": self.num_classes, "target_class_ids": self.target_class_ids,
                "name": self.name, "dtype": self.dtype, "ignore_class": self.ignore_class,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class OneHotMeanIoU(MeanIoU):
    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        return {"num_classes": self.num_classes, "name": self.name, "dtype": self.dtype,
                "ignore_class": self.ignore_class, "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


CLASSES = [TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy, MeanAbsolutePercentageError,
           MeanSquaredLogarithmicError, CosineSimilarity, LogCoshError, PearsonCorrelation,
           ConcordanceCorrelation, Hinge, SquaredHinge, CategoricalHinge, KLDivergence, Poisson,
           BinaryCrossentropy, CategoricalCrossentropy, SparseCategoricalCrossentropy,
           RootMeanSquaredError, R2Score, FBetaScore, F1Score, IoU, BinaryIoU, MeanIoU, OneHotIoU,
           OneHotMeanIoU]
FUNCTIONS = [top_k_categorical_accuracy, sparse_top_k_categorical_accuracy, pearson_correlation,
             concordance_correlation]

__all__ = [c.__name__ for c in CLASSES] + [f.__name__ for f in FUNCTIONS] + ["CLASSES", "FUNCTIONS"]
