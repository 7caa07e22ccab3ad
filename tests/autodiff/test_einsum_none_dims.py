"""Einsum's gradient inside a function traced with None dims: a repeated label (a diagonal) of
run-time size, and '...' dims of several operands whose broadcasting only the run time decides.
First and second order against eager; TensorFlow 2.21's facts (side venv) where it answers.
"""
import numpy as np
import pytest

import tapeflow as tf

pytestmark = pytest.mark.usefixtures("numpy_backend")

R = np.random.default_rng(5)


def _second_order(fn, args):
    xs = [tf.constant(a) for a in args]
    with tf.GradientTape() as outer:
        outer.watch(xs)
        with tf.GradientTape() as inner:
            inner.watch(xs)
            s = tf.reduce_sum(tf.sin(fn(*xs)))
        g = inner.gradient(s, xs)
        t = tf.add_n([tf.reduce_sum(a * a) for a in g])
    return [s] + list(g) + list(outer.gradient(t, xs))


def _none_sig(args):
    return [tf.TensorSpec([None] * np.ndim(a), tf.float64) for a in args]


CASES = [   # (equation, shapes of one call): '...' of size 1 against a size, of other ranks
    ("...ij,...jk->...ik", [(2, 1, 3, 2), (4, 2, 3)]),
    ("...ij,...jk->...ik", [(1, 3, 2), (4, 2, 3)]),
    ("...ij,...jk", [(2, 1, 3, 2), (1, 2, 3)]),
    ("i...j,...j->i...", [(2, 3, 1, 4), (5, 4)]),
    ("...i,...i->...", [(3, 1, 4), (2, 4)]),
    ("...ii,...i->...i", [(2, 3, 3), (1, 3)]),
    ("b...k,...kb->...", [(2, 1, 3), (4, 3, 2)]),
    ("ii->i", [(4, 4)]),
    ("bxby,bx->bxy", [(2, 3, 2, 4), (2, 3)]),
]


@pytest.mark.parametrize("equation, shapes", CASES, ids=[f"{e} {s}" for e, s in CASES])
def test_first_and_second_order_equal_eager(equation, shapes):
    args = [R.uniform(-1, 1, s) for s in shapes]
    if len(args) == 1:
        def fn(x):
            return tf.einsum(equation, x)
    else:
        def fn(x, y):
            return tf.einsum(equation, x, y)
    traced = tf.function(fn, input_signature=_none_sig(args))
    for w, g in zip(_second_order(fn, args), _second_order(traced, args), strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-13)


def test_tensorflows_values_and_static_shapes():
    # TensorFlow 2.21, every dim None, s = reduce_sum(sin(einsum(eq, a, b))), ga/gb its gradients:
    # static shapes y (None,)*4, ga (None,)*4, gb (None,)*3; the values below (rounded to 8 digits)
    # for '...ij,...jk->...ik'; for '...ii,...i->...i', y (None, None), ga (None,)*3,
    # gb (None, None) and the values below
    x = np.arange(6.0).reshape(2, 1, 3, 1) / 4
    y = np.arange(8.0).reshape(4, 1, 2) / 8 - 0.3
    facts = [
        ("...ij,...jk->...ik", x, y, [(None,) * 4, (None,) * 4, (None,) * 3],
         [1.1, 1.09090407, 1.06377723, 1.01909932, 0.95766013, 0.88054471],
         [3.59324934, 3.69633563, 3.74560659, 3.740118, 3.67997506, 3.5663302, 3.40135849,
          3.1882113]),
        ("...ii,...i->...i", np.arange(18.0).reshape(2, 3, 3) / 9, np.arange(3.0).reshape(1, 3),
         [(None,) * 2, (None,) * 3, (None,) * 2],
         [0.0, 0.0, 0.0, 0.0, 0.90284967, 0.0, 0.0, 0.0, -0.41101344, 0.0, 0.0, 0.0, 0.0,
          0.12601595, 0.0, 0.0, 0.0, -1.60873628],
         [1.0, 0.58328956, -1.70203469]),
    ]
    for equation, a, b, static, want_a, want_b in facts:
        seen = []

        def f(a, b):
            with tf.GradientTape() as tape:
                tape.watch([a, b])
                out = tf.einsum(equation, a, b)
                s = tf.reduce_sum(tf.sin(out))
            ga, gb = tape.gradient(s, [a, b])
            seen.append([out.shape, ga.shape, gb.shape])
            return ga, gb

        ga, gb = tf.function(f, input_signature=_none_sig([a, b]))(tf.constant(a), tf.constant(b))
        assert seen == [static]
        np.testing.assert_allclose(ga.numpy().ravel(), want_a, atol=1e-8)
        np.testing.assert_allclose(gb.numpy().ravel(), want_b, atol=1e-8)
