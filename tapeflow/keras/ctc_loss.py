"""Keras 3's CTC loss (``keras.losses.CTC``/``ctc``), written with tapeflow ops so its gradient
comes from the tape: the forward (alpha) recursion of Graves et al. over the label sequence with
blanks between, in log space, one ``foldl`` step per frame (one While node when compiled).

Keras' TensorFlow backend calls ``tf.nn.ctc_loss`` with dense labels, i.e. TF's
``ctc_loss_dense`` (Sim et al.'s batched forward-backward). Its loss is the same
``-log p(labels | logits)``; where no alignment exists (too few frames), TF ends every path in a
non-final state with the finite penalty ``log(1e-307)`` instead of ``-inf``, and so does this
recursion, so those values agree too (about 706.9 plus the best partial path's cost).
"""
import math

from ..ir import dtypes as D
from ..ops import array as A
from ..ops import creation as C
from ..ops import linalg as L
from ..ops import math as M
from ..ops import nn as N
from ..ops import reduce as R
from ..runtime.tensor import convert_to_tensor
from ..tracer.functional import foldl
from .losses import LossFunctionWrapper

_NEG = -1e30                                         # "log 0" of states no path has reached
_LOG_0 = float(D.float32.as_numpy_dtype(math.log(1e-307)))   # TF's penalty of a non-final state


def _shifted(alpha, by):
    """``alpha`` moved ``by`` states to the right along the state axis, ``_NEG`` filling in."""
    pad = C.fill([alpha.shape[0], by], M.cast(_NEG, alpha.dtype))
    return A.concat([pad, alpha[:, :-by]], axis=1)


def ctc_negative_log_likelihood(labels, logits):
    """Per-sample ``-log p(labels | logits)`` for labels ``(batch, max_length)`` (0 is the blank
    and pads the end) and logits ``(batch, frames, classes)``, every frame used."""
    batch, frames, classes = (int(d) for d in logits.shape)
    max_length = int(labels.shape[1])
    label_length = R.reduce_sum(M.cast(M.not_equal(labels, 0), D.int32), axis=-1)
    log_probs = N.log_softmax(logits, axis=-1)
    # the extended sequence: blank, l1, blank, l2, ..., lS, blank (2S + 1 states)
    ext = A.concat([A.reshape(A.stack([C.zeros_like(labels), labels], axis=2), [batch, 2 * max_length]),
                    C.zeros([batch, 1], D.int32)], axis=1)
    states = 2 * max_length + 1
    # each frame's log-probability of each state's class: (batch, frames, states)
    state_log_probs = L.matmul(log_probs, A.one_hot(ext, classes, dtype=logits.dtype), transpose_b=True)
    # a label state may be entered from two states back (skipping a blank) unless it repeats the label
    previous_label = A.concat([C.fill([batch, 2], -1), ext[:, :-2]], axis=1)
    odd = A.reshape(M.equal(M.floormod(C.range(states), 2), 1), [1, states])
    skip_allowed = M.logical_and(M.not_equal(ext, previous_label), odd)
    neg = C.fill([batch, states], M.cast(_NEG, logits.dtype))

    def step(alpha, frame_log_probs):
        candidates = A.stack([alpha, _shifted(alpha, 1), M.where(skip_allowed, _shifted(alpha, 2), neg)])
        return M.add(R.reduce_logsumexp(candidates, axis=0), frame_log_probs)

    first = state_log_probs[:, 0, :]
    alpha = A.concat([first[:, :2], neg[:, 2:]], axis=1)          # start in the blank or the first label
    if frames > 1:
        alpha = foldl(step, A.transpose(state_log_probs[:, 1:, :], [1, 0, 2]), initializer=alpha)
    # end in the last label or the blank after it; any other state pays TF's log(1e-307)
    index = A.reshape(C.range(states), [1, states])
    last = A.reshape(M.multiply(label_length, 2), [batch, 1])
    final = M.logical_or(M.equal(index, last), M.equal(index, M.subtract(last, 1)))
    penalty = M.where(final, C.zeros([batch, states], logits.dtype), C.fill([batch, states], M.cast(_LOG_0, logits.dtype)))
    return M.negative(R.reduce_logsumexp(M.add(alpha, penalty), axis=1))


def ctc(y_true, y_pred):
    """CTC loss per sample: ``y_true`` ``(batch, max_length)`` integer labels, 0 the blank and the
    padding; ``y_pred`` ``(batch, frames, classes)`` logits (not softmaxed).

    >>> y_true = tf.constant([[1, 2, 0]])
    >>> y_pred = tf.zeros((1, 4, 3))        # uniform: each of the 15 alignments has probability 3 ** -4
    >>> round(float(tf.keras.losses.ctc(y_true, y_pred)[0]), 4)      # -log(15 / 81)
    1.6864
    """
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    if len(y_true.shape) != 2:
        raise ValueError(f"Targets `y_true` are expected to be a tensor of shape `(batch_size, max_length)` "
                         f"in integer format. Received: y_true.shape={tuple(y_true.shape)}")
    if len(y_pred.shape) != 3:
        raise ValueError(f"Logits `y_pred` are expected to be a tensor of shape `(batch_size, max_length, "
                         f"num_classes)`. Received: y_pred.shape={tuple(y_pred.shape)}")
    result_dtype = D.float64 if y_pred.dtype == D.float64 else D.float32
    loss = ctc_negative_log_likelihood(M.cast(y_true, D.int32), M.cast(y_pred, D.float32))
    return M.cast(loss, result_dtype)


class CTC(LossFunctionWrapper):
    """The CTC loss object: ``ctc`` reduced over the batch.

    >>> loss = tf.keras.losses.CTC()
    >>> round(float(loss(tf.constant([[1, 2, 0]]), tf.zeros((1, 4, 3)))), 4)
    1.6864
    """

    def __init__(self, reduction="sum_over_batch_size", name="ctc", dtype=None):
        super().__init__(ctc, name=name, reduction=reduction, dtype=dtype)


__all__ = ["CTC", "ctc", "ctc_negative_log_likelihood"]
