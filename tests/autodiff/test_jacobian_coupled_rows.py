"""Every jacobian mode against the loop path on programs whose batch rows are coupled.

TensorFlow's ``batch_jacobian(y, x)[b, i, j]`` is the gradient of ``sum_b' y[b', i]`` with
respect to ``x[b, j]``: it sums over the *target's* rows. Forward mode seeds a source
column across the batch and so sums over the *source's* rows; the two agree only when
target row b depends on source row b alone. These programs (means over the batch, matmuls
across it, batch normalization in training) are where a wrong mode choice shows.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tapeflow as tf

pytestmark = pytest.mark.usefixtures("numpy_backend")


@pytest.fixture(params=["auto", "forward", "reverse"])
def mode(request, monkeypatch):
    monkeypatch.setenv("TAPEFLOW_JACOBIAN_MODE", request.param)
    return request.param


def _centered(x, w, mix):
    h = tf.nn.elu(tf.matmul(x, w))
    return h - tf.reduce_mean(h, axis=0)


def _across_batch(x, w, mix):
    return tf.tanh(tf.matmul(mix, tf.matmul(x, w)))


def _batch_norm(x, w, mix):
    h = tf.matmul(x, w)
    mean = tf.reduce_mean(h, axis=0, keepdims=True)
    var = tf.reduce_mean((h - mean) ** 2, axis=0, keepdims=True)
    return tf.nn.elu((h - mean) / tf.sqrt(var + 1e-3))


def _rows_independent(x, w, mix):
    return tf.sin(tf.matmul(x, w)) * tf.reduce_sum(x, axis=1, keepdims=True)


PROGRAMS = [_centered, _across_batch, _batch_norm, _rows_independent]


def _tape(program, x, w, mix):
    tape = tf.GradientTape(persistent=True)
    with tape:
        tape.watch(x)
        y = program(x, w, mix)
    return tape, y


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program=st.sampled_from(PROGRAMS), batch=st.integers(2, 4), width=st.integers(1, 3),
       out=st.integers(1, 6), seed=st.integers(0, 2 ** 16))
def test_every_mode_matches_the_loop_and_tensorflows_definition(mode, program, batch, width, out, seed):
    rng = np.random.default_rng(seed)
    x = tf.constant(rng.standard_normal((batch, width)))
    w = tf.constant(rng.standard_normal((width, out)))
    mix = tf.constant(rng.standard_normal((batch, batch)))
    tape, y = _tape(program, x, w, mix)
    full = tape.jacobian(y, x)
    full_loop = tape.jacobian(y, x, experimental_use_pfor=False)
    np.testing.assert_allclose(full.numpy(), full_loop.numpy(), rtol=1e-10, atol=1e-10)
    jb = tape.batch_jacobian(y, x)
    jb_loop = tape.batch_jacobian(y, x, experimental_use_pfor=False)
    np.testing.assert_allclose(jb.numpy(), jb_loop.numpy(), rtol=1e-10, atol=1e-10)
    # TensorFlow's definition: sum the full jacobian over the target's batch rows
    defined = np.einsum("cibj->bij", full_loop.numpy())
    np.testing.assert_allclose(jb.numpy(), defined, rtol=1e-10, atol=1e-10)


def test_issue_example_centered_rows_give_zeros(mode):
    """The rows of ``h - mean(h, 0)`` sum to zero, so TensorFlow's batch jacobian is all zeros
    (forward mode summed over the source's rows gave sum |jb| = 4.82)."""
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((3, 2)).astype(np.float32))
    w = tf.constant(rng.standard_normal((2, 4)).astype(np.float32))
    tape, y = _tape(_centered, x, w, None)
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (3, 4, 2)
    np.testing.assert_allclose(jb.numpy(), 0.0, atol=1e-6)


def test_inside_function_too(mode):
    rng = np.random.default_rng(1)
    x = tf.constant(rng.standard_normal((3, 2)))
    w = tf.constant(rng.standard_normal((2, 5)))

    @tf.function
    def f(x):
        tape, y = _tape(_batch_norm, x, w, None)
        return tape.batch_jacobian(y, x)

    tape, y = _tape(_batch_norm, x, w, None)
    expected = np.einsum("cibj->bij", tape.jacobian(y, x, experimental_use_pfor=False).numpy())
    np.testing.assert_allclose(f(x).numpy(), expected, rtol=1e-10, atol=1e-10)
