"""The thread policy (issue 26.1): small products on one OpenBLAS thread, the user's limits
honoured (runtime/blas_threads.py, codegen/blas.py). Speed is measured in benchmarks/ (W14);
here: which thread count each product runs with, and that results do not change.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.codegen import blas
from tapeflow.runtime import blas_threads

needs_openblas = pytest.mark.skipif(not blas.STEER_THREADS,
                                    reason="NumPy has no OpenBLAS of its own here")


@pytest.fixture
def two_threads():
    before = blas_threads.blas_threads()
    old = blas_threads.intra_op_threads()
    tf.config.threading.set_intra_op_parallelism_threads(2)
    yield
    tf.config.threading.set_intra_op_parallelism_threads(old)
    blas_threads._set(before)


def test_the_threshold_is_one_number():
    assert blas.SMALL_GEMM_WORK == blas_threads.SMALL_GEMM_WORK


@needs_openblas
def test_compiled_products_choose_their_thread_count(two_threads):
    small = blas.SMALL_GEMM_WORK - 1
    prev = blas._one_thread(small)            # what a compiled GEMM does around the call
    assert prev == 2 and blas_threads.blas_threads() == 1
    blas._restore(prev)
    assert blas_threads.blas_threads() == 2
    assert blas._one_thread(blas.SMALL_GEMM_WORK) == 0 and blas_threads.blas_threads() == 2


@needs_openblas
def test_eager_products_choose_their_thread_count(two_threads):
    seen = []
    with blas_threads.one_thread(32 * 784 * 128):
        seen.append(blas_threads.blas_threads())
    with blas_threads.one_thread(1 << 30):
        seen.append(blas_threads.blas_threads())
    assert seen == [1, 2] and blas_threads.blas_threads() == 2


@needs_openblas
def test_a_fit_sized_step_gives_the_same_values_compiled_and_eager(two_threads):
    rng = np.random.default_rng(0)
    x = tf.constant(rng.random((32, 784), dtype=np.float32))
    w = tf.constant(rng.normal(size=(784, 128)).astype(np.float32))
    big = tf.constant(rng.random((512, 512), dtype=np.float32))

    def step(x, w, big):
        with tf.GradientTape() as tape:
            tape.watch(w)
            loss = tf.reduce_sum(tf.nn.relu(tf.matmul(x, w)) ** 2)
        return loss, tape.gradient(loss, w), tf.matmul(big, big)

    want = [np.asarray(t) for t in step(x, w, big)]
    got = tf.function(step, jit_compile=True)(x, w, big)
    for g, e in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), e, rtol=2e-5, atol=1e-3)
    assert blas_threads.blas_threads() == 2      # every small product put the count back


def test_config_threading_records_and_applies_the_users_setting(two_threads):
    assert tf.config.threading.get_intra_op_parallelism_threads() == 2
    tf.config.threading.set_intra_op_parallelism_threads(1)
    assert blas_threads.blas_threads() == 1 or not blas.STEER_THREADS
    tf.config.threading.set_inter_op_parallelism_threads(3)
    assert tf.config.threading.get_inter_op_parallelism_threads() == 3
    tf.config.threading.set_inter_op_parallelism_threads(0)
    with pytest.raises(ValueError):
        tf.config.threading.set_intra_op_parallelism_threads(-1)
