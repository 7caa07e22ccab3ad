"""Keras 3's per-sample loss functions beyond the cross-entropies: regression errors, hinges,
divergences, focal cross-entropies, overlap losses (Dice, Tversky).

Each is Keras 3's TensorFlow-backend formula op for op (``keras.src.losses.losses``):
``epsilon`` is ``keras.backend.epsilon()`` (1e-7), and a function returns one value per sample
(the mean or sum over the last axis), which a ``Loss`` object then weights and reduces.
"""
import math

import numpy as np

from ..ir import dtypes as D
from ..ops import array as A
from ..ops import clip as C
from ..ops import linalg as L
from ..ops import math as M
from ..ops import nn as N
from ..ops import reduce as R
from ..runtime.tensor import convert_to_tensor
from . import settings as backend

EPSILON = 1e-7


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    """Make ranks agree when they differ by a trailing axis of size 1 (as Keras)."""
    r1, r2 = len(x1.shape), len(x2.shape)
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        if r2 == 1 and expand_rank_1:
            x2 = A.expand_dims(x2, -1)
        else:
            x1 = A.squeeze(x1, -1)
    if r2 == r1 + 1 and x2.shape[-1] == 1:
        if r1 == 1 and expand_rank_1:
            x1 = A.expand_dims(x1, -1)
        else:
            x2 = A.squeeze(x2, -1)
    return x1, x2


def _pair(y_true, y_pred, same_rank=True):
    y_pred = convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = M.cast(y_pred, D.float32)
    y_true = M.cast(y_true, y_pred.dtype)
    if same_rank:
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return y_true, y_pred


def _c(value, dtype):
    return M.cast(value, dtype)


def mean_absolute_percentage_error(y_true, y_pred):
    """``100 * mean(|y_true - y_pred| / max(|y_true|, epsilon))``."""
    y_true, y_pred = _pair(y_true, y_pred)
    eps = _c(backend.epsilon(), y_pred.dtype)
    diff = M.abs(M.divide(M.subtract(y_true, y_pred), M.maximum(M.abs(y_true), eps)))
    return M.multiply(_c(100.0, y_pred.dtype), R.reduce_mean(diff, axis=-1))


def mean_squared_logarithmic_error(y_true, y_pred):
    """``mean(square(log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1)))``."""
    y_true, y_pred = _pair(y_true, y_pred)
    eps, one = _c(backend.epsilon(), y_pred.dtype), _c(1.0, y_pred.dtype)
    first = M.log(M.add(M.maximum(y_pred, eps), one))
    second = M.log(M.add(M.maximum(y_true, eps), one))
    return R.reduce_mean(M.square(M.subtract(first, second)), axis=-1)


def _normalize(x, axis):
    norm = M.sqrt(R.reduce_sum(M.square(x), axis=axis, keepdims=True))
    return M.divide(x, M.maximum(norm, _c(backend.epsilon(), x.dtype)))


def cosine_similarity(y_true, y_pred, axis=-1):
    """``-sum(l2_normalize(y_true) * l2_normalize(y_pred), axis)``: -1 for parallel vectors."""
    y_true, y_pred = _pair(y_true, y_pred)
    return M.negative(R.reduce_sum(M.multiply(_normalize(y_true, axis), _normalize(y_pred, axis)), axis=axis))


def huber(y_true, y_pred, delta=1.0):
    """Quadratic within ``delta`` of the target, linear beyond."""
    y_true, y_pred = _pair(y_true, y_pred)
    delta = _c(delta, y_pred.dtype)
    error = M.subtract(y_pred, y_true)
    abs_error = M.abs(error)
    half = _c(0.5, y_pred.dtype)
    return R.reduce_mean(M.where(M.less_equal(abs_error, delta), M.multiply(half, M.square(error)),
                                 M.subtract(M.multiply(delta, abs_error), M.multiply(half, M.square(delta)))),
                         axis=-1)


def log_cosh(y_true, y_pred):
    """``mean(log(cosh(y_pred - y_true)))``, as ``x + softplus(-2x) - log 2``."""
    y_true, y_pred = _pair(y_true, y_pred)
    x = M.subtract(y_pred, y_true)
    log2 = _c(math.log(2.0), y_pred.dtype)
    return R.reduce_mean(M.subtract(M.add(x, N.softplus(M.multiply(x, _c(-2.0, x.dtype)))), log2), axis=-1)


def convert_binary_labels_to_hinge(y_true):
    """0/1 labels become -1/1; labels that are not all 0 or 1 stay as they are."""
    binary = R.reduce_all(M.logical_or(M.equal(y_true, _c(0, y_true.dtype)),
                                       M.equal(y_true, _c(1, y_true.dtype))))
    return M.where(binary, M.subtract(M.multiply(_c(2.0, y_true.dtype), y_true), _c(1.0, y_true.dtype)),
                   y_true)


def hinge(y_true, y_pred):
    """``mean(max(1 - y_true * y_pred, 0))`` with 0/1 labels taken as -1/1."""
    y_true, y_pred = _pair(y_true, y_pred, same_rank=False)
    y_true = convert_binary_labels_to_hinge(y_true)
    return R.reduce_mean(M.maximum(M.subtract(_c(1.0, y_pred.dtype), M.multiply(y_true, y_pred)),
                                   _c(0.0, y_pred.dtype)), axis=-1)


def squared_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, same_rank=False)
    y_true = convert_binary_labels_to_hinge(y_true)
    return R.reduce_mean(M.square(M.maximum(M.subtract(_c(1.0, y_pred.dtype), M.multiply(y_true, y_pred)),
                                            _c(0.0, y_pred.dtype))), axis=-1)


def categorical_hinge(y_true, y_pred):
    """``max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0)``."""
    y_true, y_pred = _pair(y_true, y_pred, same_rank=False)
    pos = R.reduce_sum(M.multiply(y_true, y_pred), axis=-1)
    neg = R.reduce_max(M.multiply(M.subtract(_c(1.0, y_pred.dtype), y_true), y_pred), axis=-1)
    return M.maximum(M.add(M.subtract(neg, pos), _c(1.0, y_pred.dtype)), _c(0.0, y_pred.dtype))


def kl_divergence(y_true, y_pred):
    """``sum(y_true * log(y_true / y_pred))``, both clipped to ``[epsilon, 1]``."""
    y_true, y_pred = _pair(y_true, y_pred, same_rank=False)
    eps = backend.epsilon()
    y_true = C.clip_by_value(y_true, _c(eps, y_true.dtype), _c(1.0, y_true.dtype))
    y_pred = C.clip_by_value(y_pred, _c(eps, y_pred.dtype), _c(1.0, y_pred.dtype))
    return R.reduce_sum(M.multiply(y_true, M.log(M.divide(y_true, y_pred))), axis=-1)


def poisson(y_true, y_pred):
    """``mean(y_pred - y_true * log(y_pred + epsilon))``."""
    y_true, y_pred = _pair(y_true, y_pred, same_rank=False)
    eps = _c(backend.epsilon(), y_pred.dtype)
    return R.reduce_mean(M.subtract(y_pred, M.multiply(y_true, M.log(M.add(y_pred, eps)))), axis=-1)


def _bce_elementwise(target, output):
    output = C.clip_by_value(output, _c(EPSILON, output.dtype), _c(1.0 - EPSILON, output.dtype))
    one = _c(1.0, output.dtype)
    bce = M.add(M.multiply(target, M.log(output)), M.multiply(M.subtract(one, target), M.log(M.subtract(one, output))))
    return M.negative(bce)


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0,
                              from_logits=False, label_smoothing=0.0, axis=-1):
    """Binary cross-entropy scaled by ``(1 - p_t) ** gamma`` (and ``alpha`` balancing)."""
    y_pred = convert_to_tensor(y_pred)
    y_true = M.cast(y_true, y_pred.dtype)
    one = _c(1.0, y_pred.dtype)
    if label_smoothing:
        y_true = M.add(M.multiply(y_true, 1.0 - label_smoothing), 0.5 * label_smoothing)
    if from_logits:
        y_pred = M.sigmoid(y_pred)
    bce = _bce_elementwise(y_true, y_pred)
    p_t = M.add(M.multiply(y_true, y_pred), M.multiply(M.subtract(one, y_true), M.subtract(one, y_pred)))
    focal = M.multiply(M.pow(M.subtract(one, p_t), _c(gamma, y_pred.dtype)), bce)
    if apply_class_balancing:
        weight = M.add(M.multiply(y_true, _c(alpha, y_pred.dtype)),
                       M.multiply(M.subtract(one, y_true), _c(1.0 - alpha, y_pred.dtype)))
        focal = M.multiply(weight, focal)
    return R.reduce_mean(focal, axis=axis)


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False,
                                   label_smoothing=0.0, axis=-1):
    """Categorical cross-entropy scaled by ``alpha * (1 - p) ** gamma`` per class."""
    y_pred = convert_to_tensor(y_pred)
    y_true = M.cast(y_true, y_pred.dtype)
    if label_smoothing:
        classes = y_pred.shape[axis]
        y_true = M.add(M.multiply(y_true, 1.0 - label_smoothing), label_smoothing / classes)
    if from_logits:
        y_pred = N.softmax(y_pred, axis=axis)
    output = M.divide(y_pred, R.reduce_sum(y_pred, axis=axis, keepdims=True))
    output = C.clip_by_value(output, _c(EPSILON, output.dtype), _c(1.0 - EPSILON, output.dtype))
    cce = M.multiply(M.negative(y_true), M.log(output))
    modulating = M.pow(M.subtract(_c(1.0, output.dtype), output), _c(gamma, output.dtype))
    return R.reduce_sum(M.multiply(M.multiply(modulating, _c(alpha, output.dtype)), cce), axis=axis)


def dice(y_true, y_pred, axis=None):
    """``1 - 2 |y_true . y_pred| / (sum y_true + sum y_pred + epsilon)`` over ``axis``."""
    y_pred = convert_to_tensor(y_pred)
    y_true = M.cast(y_true, y_pred.dtype)
    intersection = R.reduce_sum(M.multiply(y_true, y_pred), axis=axis)
    denominator = M.add(M.add(R.reduce_sum(y_true, axis=axis), R.reduce_sum(y_pred, axis=axis)),
                        _c(backend.epsilon(), y_pred.dtype))
    return M.subtract(_c(1.0, y_pred.dtype), M.divide(M.multiply(_c(2.0, y_pred.dtype), intersection), denominator))


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """``1 - TP / (TP + alpha FP + beta FN + epsilon)``."""
    y_pred = convert_to_tensor(y_pred)
    y_true = M.cast(y_true, y_pred.dtype)
    one = _c(1.0, y_pred.dtype)
    intersection = R.reduce_sum(M.multiply(y_true, y_pred), axis=axis)
    fp = R.reduce_sum(M.multiply(M.subtract(one, y_pred), y_true), axis=axis)   # Keras 3.15's roles
    fn = R.reduce_sum(M.multiply(y_pred, M.subtract(one, y_true)), axis=axis)
    denominator = M.add(M.add(M.add(intersection, M.multiply(fp, _c(alpha, fp.dtype))),
                              M.multiply(fn, _c(beta, fn.dtype))), _c(backend.epsilon(), y_pred.dtype))
    return M.subtract(one, M.divide(intersection, denominator))


def categorical_generalized_cross_entropy(y_true, y_pred, q):
    """``(1 - p ** q) / q`` for ``p`` the predicted probability of the integer label."""
    y_pred = convert_to_tensor(y_pred)
    one_hot = A.one_hot(M.cast(y_true, D.int32), y_pred.shape[-1], dtype=y_pred.dtype)
    p = R.reduce_sum(M.multiply(y_pred, one_hot), axis=-1)
    return M.divide(M.subtract(_c(1.0, p.dtype), M.pow(p, _c(q, p.dtype))), _c(q, p.dtype))


__all__ = ["squeeze_or_expand_to_same_rank", "mean_absolute_percentage_error", "mean_squared_logarithmic_error", "cosine_similarity",
           "huber", "log_cosh", "hinge", "squared_hinge", "categorical_hinge", "kl_divergence", "poisson",
           "binary_focal_crossentropy", "categorical_focal_crossentropy", "dice", "tversky",
           "categorical_generalized_cross_entropy", "convert_binary_labels_to_hinge", "circle",
           "circle_with_mask"]


def _pos_neg_masks(query_labels, key_labels, remove_diagonal=True):
    if len(query_labels.shape) == 1:
        query_labels = A.reshape(query_labels, [-1, 1])
    if len(key_labels.shape) == 1:
        key_labels = A.reshape(key_labels, [-1, 1])
    positive = M.equal(query_labels, A.transpose(key_labels))
    negative = M.logical_not(positive)
    if remove_diagonal:
        n, m = int(query_labels.shape[0]), int(key_labels.shape[0])
        off_diagonal = convert_to_tensor(~np.eye(n, m, dtype=bool))
        positive = M.logical_and(positive, off_diagonal)
    return positive, negative


def circle_with_mask(y_true, y_pred, ref_labels=None, ref_embeddings=None, remove_diagonal=True,
                     gamma=80, margin=0.4):
    """Circle loss per sample and Keras' mask of it (samples with a positive loss)."""
    y_pred = convert_to_tensor(y_pred)
    y_true = M.cast(y_true, D.int32)
    ref_embeddings = y_pred if ref_embeddings is None else convert_to_tensor(ref_embeddings)
    ref_labels = y_true if ref_labels is None else M.cast(ref_labels, D.int32)
    distances = M.subtract(1.0, L.matmul(y_pred, ref_embeddings, transpose_b=True))
    distances = M.maximum(distances, 0.0)
    positive, negative = _pos_neg_masks(y_true, ref_labels, remove_diagonal)
    pos_f, neg_f = M.cast(positive, distances.dtype), M.cast(negative, distances.dtype)
    pos_weights = M.maximum(M.multiply(M.add(margin, distances), pos_f), 0.0)
    neg_weights = M.maximum(M.multiply(M.subtract(1 + margin, distances), neg_f), 0.0)
    pos_w = M.multiply(M.multiply(-1.0 * gamma, pos_weights), M.subtract(margin, distances))
    neg_w = M.multiply(M.multiply(gamma, neg_weights), M.subtract(1 - margin, distances))
    minus_inf = M.multiply(M.add(distances, 1.0), float("-inf"))
    p_loss = R.reduce_logsumexp(M.where(positive, pos_w, minus_inf), axis=1)
    n_loss = R.reduce_logsumexp(M.where(negative, neg_w, minus_inf), axis=1)
    loss = N.softplus(M.add(p_loss, n_loss))
    return loss, M.greater(loss, 0.0)


def circle(y_true, y_pred, ref_labels=None, ref_embeddings=None, remove_diagonal=True, gamma=80, margin=0.4):
    """The circle loss of L2-normalized embeddings ``y_pred`` with integer labels (Sun et al.)."""
    return circle_with_mask(y_true, y_pred, ref_labels, ref_embeddings, remove_diagonal, gamma, margin)[0]
