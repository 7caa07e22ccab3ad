"""The seed examples that can be functions, as Modules to save; shared by the tests and the
fresh-process script (``fresh_checks.py``), which both evaluate them the same way.

``evaluate`` takes outputs, first-order gradients (arguments and trainable variables)
and second-order ones (the gradient of the squared first gradients), all under tapes
around the call, so a loaded program is checked forward, backward and backward of backward.
"""
import numpy as np

import tapeflow as tf
from tapeflow import _nest


@tf.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return tf.clip_by_norm(dy, 0.5)
    return y, backward


@tf.custom_gradient
def log1pexp(x):
    """Seed 003's numerically stable softplus gradient (a custom gradient with a closure)."""
    e = tf.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))
    return tf.math.log(1 + e), grad


class Seed000Poly(tf.Module):
    @tf.function
    def f(self, w1, w2):
        return 3 * w1 ** 2 + 2 * w1 * w2


class Seed000Softplus(tf.Module):
    @tf.function
    def f(self, x):
        return tf.math.log(1 + tf.exp(x))     # naive: NaN gradient at 100, as in the seed


class Seed000StopGradient(tf.Module):
    @tf.function
    def f(self, x):
        return x ** 2 + tf.stop_gradient(x ** 3)


class Seed001Dense(tf.Module):
    def __init__(self):
        super().__init__()
        self.layer = tf.keras.layers.Dense(2, activation="relu")
        self.layer(tf.zeros([1, 3]))

    @tf.function
    def f(self, x):
        return tf.reduce_mean(self.layer(x) ** 2)


class Seed001Intermediate(tf.Module):
    @tf.function
    def f(self, x):
        y = x * x
        return y, y * y


class Seed003Clip(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec(None)])
    def f(self, x):
        return clip_gradients(x)


class Seed003Log1pexp(tf.Module):
    @tf.function
    def f(self, x):
        return log1pexp(x)


class Seed003SinSigmoid(tf.Module):
    @tf.function
    def f(self, x0, x1):
        return tf.reduce_sum(tf.math.sin(x0) + tf.nn.sigmoid(x1))


class Seed003Cube(tf.Module):
    @tf.function
    def f(self, x):
        return x * x * x


class Seed003InputGradientRegularization(tf.Module):
    """A tape inside the function: the gradient is part of the saved program."""

    def __init__(self):
        super().__init__()
        self.layer = tf.keras.layers.Dense(4, activation=tf.nn.relu)
        self.layer(tf.zeros([1, 5]))

    @tf.function
    def f(self, x):
        with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            out = tf.reduce_sum(self.layer(x) ** 2)
        return tf.norm(t1.gradient(out, x))


class Seed003Jacobian(tf.Module):
    """Seed 003's jacobian, taken inside the function (the saved graph holds the sweeps)."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])

    @tf.function
    def f(self, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.nn.sigmoid(x @ self.w)
        return y, tape.jacobian(y, x)


class Seed004Linear(tf.Module):
    """Variables passed as arguments; a dict of outputs."""

    @tf.function
    def f(self, x, w, b):
        y = tf.matmul(x, w) + b
        return {"y": y, "loss": tf.reduce_mean(y ** 2)}


class Seed004Trainable(tf.Module):
    def __init__(self):
        super().__init__()
        self.x1 = tf.Variable(4.0)
        self.x2 = tf.Variable(5.0, trainable=False)

    @tf.function
    def f(self, x3):
        return self.x1 ** 2 + self.x2 ** 2 + x3 ** 2


class BatchNormTraining(tf.Module):
    """A Python argument (two traces) and variables written inside (the moving averages)."""

    def __init__(self):
        super().__init__()
        self.bn = tf.keras.layers.BatchNormalization()
        self.bn(tf.zeros([2, 3]))

    @tf.function
    def f(self, x, training=True):
        return tf.reduce_sum(tf.sin(self.bn(x, training=training)))


def _rng_args(*shapes):
    rng = np.random.default_rng(7)
    return [tf.constant(rng.standard_normal(s).astype(np.float32)) for s in shapes]


# name -> (module factory, list of argument lists to call ``f`` with)
PROGRAMS = {
    "seed000_poly": (Seed000Poly, lambda: [[tf.constant(5.0), tf.constant(3.0)]]),
    "seed000_softplus": (Seed000Softplus, lambda: [[tf.constant([100.0, 0.0, -3.0])]]),
    "seed000_stop_gradient": (Seed000StopGradient, lambda: [[tf.constant([1.5, -2.0])]]),
    "seed001_dense": (Seed001Dense, lambda: [[tf.constant([[1.0, 2.0, 3.0]])]]),
    "seed001_intermediate": (Seed001Intermediate, lambda: [[tf.constant(3.0)]]),
    "seed003_clip": (Seed003Clip, lambda: [[tf.constant(4.0)], [tf.constant([2.0, 6.0])]]),
    "seed003_log1pexp": (Seed003Log1pexp, lambda: [[tf.constant([100.0, 0.5])]]),
    "seed003_sin_sigmoid": (Seed003SinSigmoid, lambda: [[tf.constant(0.0), tf.constant(0.0)]]),
    "seed003_cube": (Seed003Cube, lambda: [[tf.constant(1.0)]]),
    "seed003_input_grad_reg": (Seed003InputGradientRegularization, lambda: [_rng_args((7, 5))]),
    "seed003_jacobian": (Seed003Jacobian, lambda: [_rng_args((2, 2))]),
    "seed004_linear": (Seed004Linear, lambda: [[tf.constant([[10.0, 20.0, 30.0, 40.0]]),
                                                 tf.Variable(np.linspace(-1, 1, 8, dtype=np.float32)
                                                             .reshape(4, 2)),
                                                 tf.Variable(tf.ones(2))]]),
    "seed004_trainable": (Seed004Trainable, lambda: [[tf.constant(9.0)]]),
    "batchnorm_training": (BatchNormTraining, lambda: [_rng_args((4, 3)) + [True],
                                                       _rng_args((4, 3)) + [False]]),
}


def _floats(x):
    return isinstance(x, tf.Tensor) and x.dtype.is_floating


def _list(t):
    return None if t is None else np.asarray(t.numpy(), np.float64).tolist()


def evaluate(f, args, variables):
    """Outputs, first and second order gradients of ``f(*args)`` as JSON-able lists."""
    sources = [a for a in args if _floats(a)]
    var_args = [a for a in args if isinstance(a, tf.Variable)]
    with tf.GradientTape(persistent=True) as t2:
        t2.watch(sources)
        with tf.GradientTape(persistent=True) as t1:
            t1.watch(sources)
            out = f(*args)
            leaves = [o for o in _nest.flatten(out) if _floats(o)]
            total = tf.add_n([tf.reduce_sum(o) for o in leaves])
        grads = t1.gradient(total, sources + var_args + list(variables))
        squares = [tf.reduce_sum(g * g) for g in grads[:len(sources)] if g is not None]
        s = tf.add_n(squares) if squares else None
    second = t2.gradient(s, sources) if s is not None else [None] * len(sources)
    return {"out": [_list(o) if isinstance(o, tf.Tensor) else o for o in _nest.flatten(out)],
            "grad": [_list(g) for g in grads], "second": [_list(g) for g in second],
            "variables_after": [_list(v) for v in variables]}


def run_program(module, name):
    """``evaluate`` over every argument list of program ``name`` on ``module`` (saved or not)."""
    _, make_args = PROGRAMS[name]
    variables = sorted(module.trainable_variables, key=lambda v: v.name)
    return [evaluate(module.f, args, variables) for args in make_args()]


def assert_same(got, want):
    """Equal structure; equal numbers (NaN where NaN); None where None."""
    assert type(got) is type(want) or {type(got), type(want)} <= {int, float}, (got, want)
    if isinstance(want, dict):
        assert sorted(got) == sorted(want)
        for k in want:
            assert_same(got[k], want[k])
    elif isinstance(want, list):
        assert len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            assert_same(g, w)
    elif isinstance(want, float):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, equal_nan=True)
    else:
        assert got == want
