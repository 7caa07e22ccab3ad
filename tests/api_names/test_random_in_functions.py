"""tf.random's stateful samplers inside a function: ops of the program that draw new values
at each call, as TensorFlow's stateful random ops do, never constants drawn while tracing
(a VAE's noise or a dropout mask would be the same at every training step). Loops draw anew
at each iteration; ``set_seed`` makes a run repeatable; compiled programs too.
"""
import numpy as np
import pytest

import tapeflow as tf

interpreted = pytest.mark.usefixtures("numpy_backend")


def draws(x):
    return [tf.random.normal([3]), tf.random.uniform([3], 2.0, 3.0),
            tf.random.truncated_normal([4], stddev=x), tf.random.uniform([5], 0, 7, dtype=tf.int32),
            tf.nn.dropout(tf.ones([8]), 0.5), tf.random.categorical(tf.math.log([[0.3, 0.7]]), 6),
            tf.random.shuffle(tf.range(6)), tf.random.gamma([2], [1.0, 2.0]),
            tf.random.poisson([3], 2.0)]


def run(f, *args):
    return [np.asarray(t) for t in f(*args)]


@interpreted
def test_each_call_draws_new_values_and_set_seed_repeats_them():
    f = tf.function(draws)
    tf.random.set_seed(5)
    first, second = run(f, tf.constant(2.0)), run(f, tf.constant(2.0))
    assert f.experimental_get_tracing_count() == 1
    for a, b in zip(first[:3], second[:3]):             # continuous samples: new values
        assert not np.array_equal(a, b)
    tf.random.set_seed(5)
    again = run(f, tf.constant(2.0))
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)


@interpreted
def test_what_each_sampler_draws_inside_a_function_is_what_it_promises():
    got = run(tf.function(draws), tf.constant(2.0))
    normal, uniform, truncated, ints, dropped, cats, perm, gamma, poisson = got
    assert normal.dtype == np.float32 and normal.shape == (3,)
    assert np.all((uniform >= 2) & (uniform < 3))
    assert np.all(np.abs(truncated) <= 4.0)                # within 2 stddevs (stddev=x=2)
    assert ints.dtype == np.int32 and np.all((ints >= 0) & (ints < 7))
    assert set(np.unique(dropped)) <= {0.0, 2.0}          # kept values scaled by 1/(1-rate)
    assert cats.shape == (1, 6) and cats.dtype == np.int64 and set(cats.ravel()) <= {0, 1}
    assert sorted(perm.tolist()) == list(range(6))
    assert gamma.shape == (2, 2) and np.all(gamma > 0)
    assert poisson.shape == (3,) and np.all(poisson >= 0) and np.all(poisson == np.round(poisson))


@interpreted
def test_a_loop_draws_anew_at_each_iteration():
    @tf.function
    def rows(n):
        out = tf.TensorArray(tf.float32, size=n)
        for i in tf.range(n):
            out = out.write(i, tf.random.uniform([4]))
        return out.stack()

    r = np.asarray(rows(tf.constant(3)))
    assert r.shape == (3, 4) and len({tuple(row) for row in r.tolist()}) == 3


@interpreted
def test_an_op_seed_gives_its_own_repeatable_sequence():
    f = tf.function(lambda: (tf.random.normal([4], seed=7), tf.random.normal([4], seed=8)))
    tf.random.set_seed(1)
    a7, a8 = run(f)
    tf.random.set_seed(1)
    b7, b8 = run(f)
    np.testing.assert_array_equal(a7, b7)
    np.testing.assert_array_equal(a8, b8)
    assert not np.array_equal(a7, a8)


def test_compiled_programs_draw_new_values_at_each_call():
    f = tf.function(lambda x: tf.nn.dropout(x, 0.5) + tf.random.normal([16]), jit_compile=True)
    a, b = (np.asarray(f(tf.ones([16]))) for _ in range(2))
    assert not np.array_equal(a, b)
