"""Random programs: compiled (inside and through tapeflow.function) == eager, first and second order.

A hypothesis strategy builds straight-line programs over a pool of tensors
(elementwise ops, broadcasting, reductions with axes/keepdims, stop_gradient,
where). Each runs eagerly and as a function on the Numba backend and on the
NumPy interpreter; values, dtypes and the None pattern must agree (through a
function, TensorFlow's rule allows zeros where eager gives None). CI runs a few
dozen programs; ``-m slow`` runs thousands.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tapeflow as tf
import tapeflow.tracer.engine as backend

UNARY = {
    "sin": tf.sin, "cos": tf.cos, "tanh": tf.tanh, "sigmoid": tf.sigmoid, "square": tf.square,
    "neg": tf.negative, "softplus": tf.nn.softplus, "abs": tf.abs, "relu": tf.nn.relu,
    "exp_clip": lambda x: tf.exp(tf.clip_by_value(x, -3.0, 3.0)), "sg": tf.stop_gradient,
}
BINARY = {
    "add": tf.add, "sub": tf.subtract, "mul": tf.multiply, "max": tf.maximum, "min": tf.minimum,
    "where": lambda a, b: tf.where(a > b, a * b, a - b),
}


@st.composite
def programs(draw):
    base = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=3)))
    n_in = draw(st.integers(1, 3))
    shapes = [base[draw(st.integers(0, len(base))):] for _ in range(n_in)]
    steps = []
    pool = n_in
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "reduce"]))
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(sorted(UNARY))), draw(st.integers(0, pool - 1))))
        elif kind == "binary":
            steps.append(("binary", draw(st.sampled_from(sorted(BINARY))),
                          draw(st.integers(0, pool - 1)), draw(st.integers(0, pool - 1))))
        else:
            steps.append(("reduce", draw(st.sampled_from(["sum", "mean", "max"])),
                          draw(st.integers(0, pool - 1)), draw(st.booleans())))
        pool += 1
    seed = draw(st.integers(0, 2**16))
    return shapes, steps, seed


def apply_steps(steps, xs):
    """The pool of values a drawn program computes: the inputs, then one value per step."""
    pool = list(xs)
    for step in steps:
        if step[0] == "unary":
            pool.append(UNARY[step[1]](pool[step[2]]))
        elif step[0] == "binary":
            pool.append(BINARY[step[1]](pool[step[2]], pool[step[3]]))
        else:
            x = pool[step[2]]
            axis = -1 if x.shape.rank else None
            fn = {"sum": tf.reduce_sum, "mean": tf.reduce_mean, "max": tf.reduce_max}[step[1]]
            pool.append(fn(x, axis=axis, keepdims=step[3]))
    return pool


def make_body(steps, n_in):
    def body(*xs):
        pool = apply_steps(steps, xs)
        return [tf.reduce_sum(pool[-1]), tf.reduce_sum(pool[-2] if len(pool) > 1 else pool[-1])]
    return body


def run(body, xs, mode):
    """(first-order grads, second-order grads) of output 0, eagerly / inside / through a function."""
    def first_and_second(fn, xs):
        with tf.GradientTape(persistent=True) as outer:
            outer.watch(xs)
            with tf.GradientTape() as inner:
                inner.watch(xs)
                y0, _ = fn(*xs)
            g = inner.gradient(y0, xs)
            terms = [tf.reduce_sum(gi) for gi in g if gi is not None]
            s = terms[0] if terms else None
            for t in terms[1:]:
                s = s + t
        h = outer.gradient(s, xs) if s is not None else None
        return y0, g, h

    if mode == "eager":
        return first_and_second(body, xs)
    if mode == "through":
        return first_and_second(tf.function(body), xs)
    return tf.function(lambda *a: first_and_second(body, list(a)))(*xs)


def assert_matches(eager, got, through, rtol):
    y0, g, h = eager
    y0c, gc, hc = got
    np.testing.assert_allclose(y0c.numpy(), y0.numpy(), rtol=rtol, atol=rtol)
    assert y0c.dtype == y0.dtype
    for a, b in zip(g, gc):
        _same(a, b, through, rtol)
    if h is None or hc is None:
        assert (h is None) == (hc is None) or through
        return
    for a, b in zip(h, hc):
        _same(a, b, through, rtol)


def _same(want, got, through, rtol):
    if want is None:
        # through a function, TF gives zeros to inputs that reach some output
        assert got is None or (through and not np.asarray(got).any()), got
        return
    assert got is not None, "compiled gradient is None where eager has one"
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol, atol=rtol)


def check(program, dtype, backends):
    shapes, steps, seed = program
    rng = np.random.default_rng(seed)
    # values away from the kinks of abs/relu/max (ties) so finite precision cannot flip a branch
    xs = [tf.constant((rng.uniform(0.2, 1.5, s) * rng.choice([-1, 1], s)).astype(dtype)) for s in shapes]
    body = make_body(steps, len(shapes))
    try:
        eager = run(body, xs, "eager")
    except tf.errors.InvalidArgumentError:
        assume(False)   # the drawn shapes do not broadcast (a reduction dropped an axis)
    rtol = 1e-9 if dtype == np.float64 else 2e-4
    for name in backends:
        backend.set_backend(name)
        try:
            for mode in ("inside", "through"):
                assert_matches(eager, run(body, xs, mode), mode == "through", rtol)
        finally:
            backend.set_backend("numba")


SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


@settings(max_examples=150, **SETTINGS)
@given(programs())
def test_interpreted_functions_match_eager(program):
    check(program, np.float64, ["numpy"])


@settings(max_examples=25, **SETTINGS)
@given(programs())
def test_compiled_functions_match_eager_float64(program):
    check(program, np.float64, ["numba"])


@settings(max_examples=15, **SETTINGS)
@given(programs())
def test_compiled_functions_match_eager_float32(program):
    check(program, np.float32, ["numba"])


@pytest.mark.slow
@settings(max_examples=2000, **SETTINGS)
@given(programs())
def test_many_compiled_programs_match_eager(program):
    check(program, np.float64, ["numba", "numpy"])
