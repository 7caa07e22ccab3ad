"""Keras 3's thresholded metrics: true/false positive/negative counts, precision, recall, the
``*At*`` metrics and ``AUC``, all accumulated per threshold in float32 variables.

``update_confusion`` is Keras 3's ``update_confusion_matrix_variables``: a prediction is
positive at threshold ``t`` when it is ``> t``; for evenly spaced thresholds (``AUC``, the
``*At*`` metrics) Keras buckets the clipped prediction as ``ceil(p * (n - 1)) - 1`` instead,
and so does this, so counts agree with Keras at the bucket edges.
"""
import numpy as np

from ..ir import dtypes as D
from ..ops import array as A
from ..ops import clip as C
from ..ops import math as M
from ..ops import reduce as R
from ..runtime.tensor import convert_to_tensor
from . import settings
from .loss_functions import squeeze_or_expand_to_same_rank
from .losses import divide_no_nan
from .metrics import Metric

NEG_INF = -1e10
TP, FP, TN, FN = "tp", "fp", "tn", "fn"


def _to_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def parse_thresholds(thresholds, default):
    if thresholds is not None:
        bad = [t for t in _to_list(thresholds) if t is None or t < 0 or t > 1]
        if bad:
            raise ValueError(f"Threshold values must be in [0, 1]. Received: {bad}")
    return _to_list(default if thresholds is None else thresholds)


def evenly_distributed(thresholds):
    n = len(thresholds)
    if n < 3:
        return False
    even = np.arange(n, dtype=np.float32) / (n - 1)
    return bool(np.allclose(thresholds, even, atol=settings.epsilon()))


def filter_top_k(x, k):
    """Entries outside each row's top ``k`` (ties to the lower index) become ``NEG_INF``."""
    xi, xj = A.expand_dims(x, -1), A.expand_dims(x, -2)      # [..., i, 1], [..., 1, j]
    n = x.shape[-1]
    lower = convert_to_tensor(np.tril(np.ones((n, n), bool), -1))   # j < i
    ahead = M.logical_or(M.greater(xj, xi), M.logical_and(M.equal(xj, xi), lower))
    rank = R.reduce_sum(M.cast(ahead, D.int32), axis=-1)
    mask = M.cast(M.less(rank, k), x.dtype)
    return M.add(M.multiply(x, mask), M.multiply(M.cast(NEG_INF, x.dtype), M.subtract(1.0, mask)))


def update_confusion(variables, y_true, y_pred, thresholds, top_k=None, class_id=None,
                     sample_weight=None, multi_label=False, label_weights=None, even=False):
    """Add this batch's weighted counts at each threshold to ``variables`` ({TP: var, ...})."""
    dtype = D.float32
    y_true = M.cast(y_true, dtype)
    y_pred = M.cast(y_pred, dtype)
    y_pred, y_true = squeeze_or_expand_to_same_rank(y_pred, y_true)
    if sample_weight is not None:
        sample_weight = A.expand_dims(M.cast(sample_weight, dtype), -1)
        _, sample_weight = squeeze_or_expand_to_same_rank(y_true, sample_weight, expand_rank_1=False)
    if top_k is not None:
        y_pred = filter_top_k(y_pred, top_k)
    if class_id is not None:
        y_true = y_true[..., class_id:class_id + 1]
        y_pred = y_pred[..., class_id:class_id + 1]
    n_thresholds = len(thresholds)
    if even:
        y_pred = C.clip_by_value(y_pred, 0.0, 1.0)
        scaled = M.multiply(y_pred, float(n_thresholds - 1))
        bucket = M.subtract(M.negative(M.floor(M.negative(scaled))), 1.0)      # ceil - 1
        if thresholds[0] < 0.0 or thresholds[-1] > 1.0:
            bucket = M.maximum(bucket, 0.0)
        score = M.cast(bucket, D.int32)
        cut = convert_to_tensor(np.arange(n_thresholds, dtype=np.int32))
    else:
        score = y_pred
        cut = convert_to_tensor(np.asarray(thresholds, np.float32))
    labels = M.cast(y_true, D.bool_)
    if not multi_label:
        score, labels = A.reshape(score, [-1]), A.reshape(labels, [-1])
    cut = A.reshape(cut, [n_thresholds] + [1] * len(score.shape))
    score_t = A.expand_dims(score, 0)
    if even:
        pred_pos = M.greater_equal(score_t, cut)
    else:
        pred_pos = M.greater(score_t, cut)
    label_pos = A.expand_dims(labels, 0)
    weights = None
    if sample_weight is not None:
        weights = A.broadcast_to(sample_weight, y_pred.shape)
        if not multi_label:
            weights = A.reshape(weights, [-1])
    if label_weights is not None and not multi_label:
        lw = A.reshape(A.broadcast_to(A.expand_dims(convert_to_tensor(label_weights, dtype=dtype), 0),
                                      y_pred.shape), [-1])
        weights = lw if weights is None else M.multiply(weights, lw)
    conditions = {TP: (label_pos, pred_pos), FN: (label_pos, M.logical_not(pred_pos)),
                  FP: (M.logical_not(label_pos), pred_pos),
                  TN: (M.logical_not(label_pos), M.logical_not(pred_pos))}
    axis = 1
    for key, variable in variables.items():
        label, pred = conditions[key]
        both = M.cast(M.logical_and(label, pred), dtype)
        if weights is not None:
            both = M.multiply(both, A.expand_dims(weights, 0))
        variable.assign_add(R.reduce_sum(both, axis=axis))


def _div(a, b):
    return divide_no_nan(a, b)


class _ConfusionCount(Metric):
    _condition = None

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.thresholds = parse_thresholds(thresholds, 0.5)
        self._even = evenly_distributed(self.thresholds)
        self.accumulator = self.add_variable((len(self.thresholds),), name="accumulator")

    def update_state(self, y_true, y_pred, sample_weight=None):
        update_confusion({self._condition: self.accumulator}, y_true, y_pred, self.thresholds,
                         sample_weight=sample_weight, even=self._even)

    def result(self):
        return self.accumulator[0] if len(self.thresholds) == 1 else self.accumulator.value()

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds}


class TruePositives(_ConfusionCount):
    """The weighted count of positives predicted positive (above each threshold)."""
    _condition = TP


class FalsePositives(_ConfusionCount):
    _condition = FP


class TrueNegatives(_ConfusionCount):
    _condition = TN


class FalseNegatives(_ConfusionCount):
    _condition = FN


class _PrecisionRecall(Metric):
    _second = None

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds, self.top_k, self.class_id = thresholds, top_k, class_id
        self.thresholds = parse_thresholds(thresholds, 0.5 if top_k is None else NEG_INF)
        self._even = evenly_distributed(self.thresholds)
        n = (len(self.thresholds),)
        self.true_positives = self.add_variable(n, name="true_positives")
        other = "false_positives" if self._second == FP else "false_negatives"
        setattr(self, other, self.add_variable(n, name=other))
        self._other = getattr(self, other)

    def update_state(self, y_true, y_pred, sample_weight=None):
        update_confusion({TP: self.true_positives, self._second: self._other}, y_true, y_pred,
                         self.thresholds, top_k=self.top_k, class_id=self.class_id,
                         sample_weight=sample_weight, even=self._even)

    def result(self):
        tp = self.true_positives.value()
        out = _div(tp, M.add(tp, self._other.value()))
        return out[0] if len(self.thresholds) == 1 else out

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds, "top_k": self.top_k,
                "class_id": self.class_id}


class Precision(_PrecisionRecall):
    """``TP / (TP + FP)`` at each threshold (0.5 by default), or of each row's ``top_k``."""
    _second = FP


class Recall(_PrecisionRecall):
    """``TP / (TP + FN)`` at each threshold (0.5 by default), or of each row's ``top_k``."""
    _second = FN


class _AtConstraint(Metric):
    """Keras' ``SensitivitySpecificityBase``: counts at ``num_thresholds`` even thresholds."""

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        if num_thresholds <= 0:
            raise ValueError(f"Argument `num_thresholds` must be an integer > 0. Received: "
                             f"num_thresholds={num_thresholds}")
        self.value, self.class_id, self.num_thresholds = value, class_id, num_thresholds
        if num_thresholds == 1:
            self.thresholds, self._even = [0.5], False
        else:
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self.thresholds, self._even = [0.0] + inner + [1.0], True
        n = (len(self.thresholds),)
        self.true_positives = self.add_variable(n, name="true_positives")
        self.false_positives = self.add_variable(n, name="false_positives")
        self.true_negatives = self.add_variable(n, name="true_negatives")
        self.false_negatives = self.add_variable(n, name="false_negatives")

    def update_state(self, y_true, y_pred, sample_weight=None):
        update_confusion({TP: self.true_positives, TN: self.true_negatives, FP: self.false_positives,
                          FN: self.false_negatives}, y_true, y_pred, self.thresholds,
                         class_id=self.class_id, sample_weight=sample_weight, even=self._even)

    def _rates(self):
        tp, fp = self.true_positives.value(), self.false_positives.value()
        tn, fn = self.true_negatives.value(), self.false_negatives.value()
        return {"sensitivity": _div(tp, M.add(tp, fn)), "specificity": _div(tn, M.add(tn, fp)),
                "precision": _div(tp, M.add(tp, fp))}

    def _max_where(self, constrained, dependent):
        feasible = M.greater_equal(constrained, self.value)
        return M.maximum(R.reduce_max(M.where(feasible, dependent, M.multiply(dependent, 0.0))), 0.0)

    def get_config(self):
        return {**super().get_config(), "num_thresholds": self.num_thresholds, "class_id": self.class_id}


def _check_unit(name, value):
    if value < 0 or value > 1:
        raise ValueError(f"Argument `{name}` must be in the range [0, 1]. Received: {name}={value}")


class SensitivityAtSpecificity(_AtConstraint):
    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        _check_unit("specificity", specificity)
        self.specificity = specificity
        super().__init__(specificity, num_thresholds, class_id, name, dtype)

    def result(self):
        r = self._rates()
        return self._max_where(r["specificity"], r["sensitivity"])

    def get_config(self):
        return {**super().get_config(), "specificity": self.specificity}


class SpecificityAtSensitivity(_AtConstraint):
    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        _check_unit("sensitivity", sensitivity)
        self.sensitivity = sensitivity
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)

    def result(self):
        r = self._rates()
        return self._max_where(r["sensitivity"], r["specificity"])

    def get_config(self):
        return {**super().get_config(), "sensitivity": self.sensitivity}


class PrecisionAtRecall(_AtConstraint):
    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        _check_unit("recall", recall)
        self.recall = recall
        super().__init__(recall, num_thresholds, class_id, name, dtype)

    def result(self):
        r = self._rates()
        return self._max_where(r["sensitivity"], r["precision"])

    def get_config(self):
        return {**super().get_config(), "recall": self.recall}


class RecallAtPrecision(_AtConstraint):
    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        _check_unit("precision", precision)
        self.precision = precision
        super().__init__(precision, num_thresholds, class_id, name, dtype)

    def result(self):
        r = self._rates()
        return self._max_where(r["precision"], r["sensitivity"])

    def get_config(self):
        return {**super().get_config(), "precision": self.precision}


class AUC(Metric):
    """The area under the ROC or PR curve, by a Riemann sum over ``num_thresholds`` thresholds
    (PR with ``interpolation`` uses Davis & Goadrich's interpolation, as Keras)."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None,
                 dtype=None, thresholds=None, multi_label=False, num_labels=None, label_weights=None,
                 from_logits=False):
        curves = {"roc": "ROC", "pr": "PR", "prgain": "PRGAIN"}
        if str(curve).lower() not in curves:
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are '
                             f'["PR", "ROC", "PRGAIN"]')
        methods = ("interpolation", "majoring", "minoring")
        if str(summation_method).lower() not in methods:
            raise ValueError(f'Invalid AUC summation method value: "{summation_method}". Expected '
                             f'values are ["interpolation", "majoring", "minoring"]')
        self._init_from_thresholds = thresholds is not None
        if thresholds is not None:
            self.num_thresholds = len(thresholds) + 2
            thresholds = sorted(thresholds)
            self._even = evenly_distributed(np.array([0.0] + thresholds + [1.0]))
        else:
            if num_thresholds <= 1:
                raise ValueError(f"Argument `num_thresholds` must be an integer > 1. Received: "
                                 f"num_thresholds={num_thresholds}")
            self.num_thresholds = num_thresholds
            thresholds = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self._even = True
        eps = settings.epsilon()
        self._thresholds = [0.0 - eps] + thresholds + [1.0 + eps]
        self.curve = curves[str(curve).lower()]
        self.summation_method = str(summation_method).lower()
        super().__init__(name=name, dtype=dtype)
        self.multi_label, self.num_labels = multi_label, num_labels
        self.label_weights = None if label_weights is None else np.asarray(label_weights, np.float32)
        self._from_logits = from_logits
        self._built = False
        if multi_label:
            if num_labels:
                self._build([None, num_labels])
        else:
            if num_labels:
                raise ValueError("`num_labels` is needed only when `multi_label` is True.")
            self._build(None)

    @property
    def thresholds(self):
        return list(self._thresholds)

    def _build(self, shape):
        if self.multi_label:
            if len(shape) != 2:
                raise ValueError(f"`y_pred` must have rank 2 when `multi_label=True`. Found rank "
                                 f"{len(shape)}. Full shape received for `y_pred`: {tuple(shape)}")
            self._num_labels = shape[1]
            var_shape = (self.num_thresholds, self._num_labels)
        else:
            var_shape = (self.num_thresholds,)
        self.true_positives = self.add_variable(var_shape, name="true_positives")
        self.false_positives = self.add_variable(var_shape, name="false_positives")
        self.true_negatives = self.add_variable(var_shape, name="true_negatives")
        self.false_negatives = self.add_variable(var_shape, name="false_negatives")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = convert_to_tensor(y_pred)
        if not self._built:
            self._build(list(y_pred.shape))
        if self._from_logits:
            y_pred = M.sigmoid(M.cast(y_pred, D.float32))
        update_confusion({TP: self.true_positives, TN: self.true_negatives, FP: self.false_positives,
                          FN: self.false_negatives}, y_true, y_pred, self._thresholds,
                         sample_weight=sample_weight, multi_label=self.multi_label,
                         label_weights=None if self.multi_label else self.label_weights, even=self._even)

    def _by_label(self, terms):
        if not self.multi_label:
            return R.reduce_sum(terms)
        by_label = R.reduce_sum(terms, axis=0)
        if self.label_weights is None:
            return R.reduce_mean(by_label)
        lw = convert_to_tensor(self.label_weights)
        return _div(R.reduce_sum(M.multiply(by_label, lw)), R.reduce_sum(lw))

    def _interpolate_pr_auc(self):
        n = self.num_thresholds
        tp, fp, fn = self.true_positives.value(), self.false_positives.value(), self.false_negatives.value()
        dtp = M.subtract(tp[:n - 1], tp[1:])
        p = M.add(tp, fp)
        dp = M.subtract(p[:n - 1], p[1:])
        slope = _div(dtp, M.maximum(dp, 0.0))
        intercept = M.subtract(tp[1:], M.multiply(slope, p[1:]))
        ratio = M.where(M.logical_and(M.greater(p[:n - 1], 0.0), M.greater(p[1:], 0.0)),
                        _div(p[:n - 1], M.maximum(p[1:], 0.0)), M.add(M.multiply(p[1:], 0.0), 1.0))
        increment = _div(M.multiply(slope, M.add(dtp, M.multiply(intercept, M.log(ratio)))),
                         M.maximum(M.add(tp[1:], fn[1:]), 0.0))
        return self._by_label(increment)

    def result(self):
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolate_pr_auc()
        n = self.num_thresholds
        tp, fp = self.true_positives.value(), self.false_positives.value()
        tn, fn = self.true_negatives.value(), self.false_negatives.value()
        recall = _div(tp, M.add(tp, fn))
        if self.curve == "ROC":
            x, y = _div(fp, M.add(fp, tn)), recall
        elif self.curve == "PR":
            x, y = recall, _div(tp, M.add(tp, fp))
        else:
            scale = _div(M.add(tp, fn), M.add(tn, fp))
            recall_gain = M.subtract(1.0, M.multiply(scale, _div(fn, tp)))
            precision_gain = M.subtract(1.0, M.multiply(scale, _div(fp, tp)))
            none = M.equal(tp, 0.0)
            x = M.maximum(M.where(none, M.multiply(tp, 0.0), recall_gain), 0.0)
            y = M.where(none, M.add(M.multiply(tp, 0.0), 1.0), precision_gain)
        if self.summation_method == "interpolation":
            heights = M.divide(M.add(y[:n - 1], y[1:]), 2.0)
        elif self.summation_method == "minoring":
            heights = M.minimum(y[:n - 1], y[1:])
        else:
            heights = M.maximum(y[:n - 1], y[1:])
        return self._by_label(M.multiply(M.subtract(x[:n - 1], x[1:]), heights))

    def reset_state(self):
        if self._built:
            super().reset_state()

    def get_config(self):
        config = {**super().get_config(), "num_thresholds": self.num_thresholds, "curve": self.curve,
                  "summation_method": self.summation_method, "multi_label": self.multi_label,
                  "num_labels": self.num_labels,
                  "label_weights": None if self.label_weights is None else self.label_weights.tolist(),
                  "from_logits": self._from_logits}
        if self._init_from_thresholds:
            config["thresholds"] = self.thresholds[1:-1]
        return config


CLASSES = [TruePositives, FalsePositives, TrueNegatives, FalseNegatives, Precision, Recall,
           SensitivityAtSpecificity, SpecificityAtSensitivity, PrecisionAtRecall, RecallAtPrecision, AUC]

__all__ = [c.__name__ for c in CLASSES] + ["update_confusion", "CLASSES"]
