"""float64 stays exact (issue 18, N1): no float32 constant or approximation in a float64 path.

TensorFlow's gelu casts its constant through float32 and is 3.7e-9 off in float64
(gradient at 2.0: 1.085231804774261 where the exact value is 1.0852318010781969).
Compared with mpmath at 40 digits, tightly enough to see a 1e-9 error.
"""
import mpmath
import pytest

import tapeflow as tf

mpmath.mp.dps = 40
PHI, pdf = mpmath.ncdf, mpmath.npdf


def _gelu_exact(x):
    return x * PHI(x), PHI(x) + x * pdf(x)


def _gelu_tanh(x):
    c = mpmath.sqrt(2 / mpmath.pi)
    u = c * (x + mpmath.mpf("0.044715") * x ** 3)
    y = x / 2 * (1 + mpmath.tanh(u))
    dy = (1 + mpmath.tanh(u)) / 2 + x / 2 * mpmath.sech(u) ** 2 * c * (1 + 3 * mpmath.mpf("0.044715") * x ** 2)
    return y, dy


def _value_and_grad(fn, x):
    x = tf.constant(x, dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return float(y), float(tape.gradient(y, x))


@pytest.mark.parametrize("x", [-3.0, -0.5, 0.25, 2.0, 5.0])
@pytest.mark.parametrize("approximate", [False, True])
@pytest.mark.parametrize("where", ["eager", "function"])
def test_gelu_float64_to_round_off(x, approximate, where):
    def fn(t):
        return tf.nn.gelu(t, approximate=approximate)
    if where == "function":
        fn = tf.function(fn)
    y, dy = _value_and_grad(fn, x)
    ey, edy = (_gelu_tanh if approximate else _gelu_exact)(mpmath.mpf(x))
    assert abs(y - float(ey)) <= 1e-15 * max(1.0, abs(float(ey)))
    assert abs(dy - float(edy)) <= 1e-15 * max(1.0, abs(float(edy)))


def test_gelu_gradient_at_two_is_the_exact_value():
    assert _value_and_grad(tf.nn.gelu, 2.0)[1] == pytest.approx(1.0852318010781969, abs=1e-15)


@pytest.mark.parametrize("name,fn,exact", [
    ("erf", tf.math.erf, lambda x: (mpmath.erf(x), 2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-x * x))),
    ("sigmoid", tf.math.sigmoid, lambda x: (1 / (1 + mpmath.exp(-x)),
                                            mpmath.exp(-x) / (1 + mpmath.exp(-x)) ** 2)),
    ("softplus", tf.math.softplus, lambda x: (mpmath.log1p(mpmath.exp(x)), 1 / (1 + mpmath.exp(-x)))),
    ("tanh", tf.math.tanh, lambda x: (mpmath.tanh(x), mpmath.sech(x) ** 2)),
])
@pytest.mark.parametrize("x", [-2.5, 0.3, 1.7])
def test_float64_unary_ops_to_round_off(name, fn, exact, x):
    y, dy = _value_and_grad(fn, x)
    ey, edy = (float(v) for v in exact(mpmath.mpf(x)))
    assert abs(y - ey) <= 4e-16 * max(1.0, abs(ey)), name
    assert abs(dy - edy) <= 4e-16 * max(1.0, abs(edy)), name
