"""Gradient-check cases of If and While: traced control flow, differentiated through a function."""
import numpy as np

import tapeflow as tf

from ops.cases import Case


def _branches(x, y):
    if tf.reduce_sum(x) > 0:        # a Python `if` on a tensor becomes an If node
        return tf.reduce_sum(tf.sin(x) * y)
    return tf.reduce_sum(x * x * y)


def _cond(x, y):
    return tf.cond(tf.reduce_sum(y) > 0, lambda: tf.tanh(x) * y, lambda: x * x - y)


def _loop(x, w):
    return tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, tf.sin(s) * w + s), (0, x))[1]


def _loop_grad(x, w):
    """A While's gradient inside the function: a WhileGrad, differentiated by the checker."""
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        y = tf.reduce_sum(_loop(x, w) ** 2)
    gx, gw = tape.gradient(y, [x, w])
    return tf.reduce_sum(gx * gx) + tf.reduce_sum(gw)


def _loop_second(x, w):
    """A loop's second-order gradient inside the function: a WhileGradGrad."""
    with tf.GradientTape() as outer:
        outer.watch([x, w])
        total = _loop_grad(x, w)
    gx, gw = outer.gradient(total, [x, w])
    return tf.reduce_sum(gx * gw)


def _last(x, w):
    """``t`` has no value before the loop: carried from zeros, checked by CheckTripCount."""
    i = tf.reduce_sum(x) * 0.0                      # a tensor of the inputs: one While
    while i < 3.0:
        t = tf.sin(x) * w + x * i
        i = i + 1.0
    return t                                        # noqa: F821


R = np.random.default_rng(11)
CASES = {
    "If": [
        Case(tf.function(_branches), [R.uniform(0.5, 1.5, (3,)), R.uniform(-1, 1, (3,))],
             note="then side"),
        Case(tf.function(_branches), [R.uniform(-1.5, -0.5, (3,)), R.uniform(-1, 1, (3,))],
             note="else side"),
        Case(tf.function(_cond), [R.uniform(-1, 1, (2, 2)), R.uniform(0.5, 1, (2, 2))], note="tf.cond"),
    ],
    "While": [
        Case(tf.function(_loop), [R.uniform(-1, 1, (2, 3)), R.uniform(-1, 1, (3,))],
             note="3 iterations, captured weight"),
    ],
    "WhileGrad": [
        Case(tf.function(_loop_grad), [R.uniform(-1, 1, (2, 3)), R.uniform(-1, 1, (3,))], order=1,
             note="the gradient of a 3-iteration loop, differentiated (second order of the loop)"),
    ],
    "WhileGradGrad": [
        Case(tf.function(_loop_second), [R.uniform(-1, 1, (2, 3)), R.uniform(-1, 1, (3,))],
             order=1, note="a 3-iteration loop's second-order gradient, differentiated (third order)"),
    ],
    # a tape around a function's loop: the forward program's WhileStacks returns the stacks,
    # the backward program's WhileGradStacks reads them (passes/keep_stacks.py); at second
    # order the backward program is differentiated, WhileGradStacks' rule included
    "WhileStacks": [
        Case(tf.function(_loop), [R.uniform(-1, 1, (2, 3)), R.uniform(-1, 1, (3,))],
             note="3 iterations through the call, first and second order"),
    ],
    "WhileGradStacks": [
        Case(tf.function(_loop), [R.uniform(-1, 1, (3,)), R.uniform(-1, 1, (3,))],
             note="its stacks from the forward program, differentiated (second order)"),
    ],
    "CheckTripCount": [
        Case(tf.function(_last), [R.uniform(-1, 1, (2, 3)), R.uniform(-1, 1, (3,))],
             note="a name assigned only inside a loop, read after it"),
    ],
}
NOT_DIFFERENTIABLE = ["WhileWithGrad"]  # made in FINAL (passes/share_loops.py): never differentiated
