"""The thread policy (issue 26.1): products on as many OpenBLAS threads as the machine has
free cores (small ones on one thread where that is not known), the user's limits honoured
(runtime/blas_threads.py, free_cores.py, codegen/blas.py). Speed is measured in benchmarks/
(W14, --load); here: which thread count each product runs with, and that results do not change.
"""
import contextlib

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.codegen import blas
from tapeflow.runtime import blas_threads, free_cores

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


@contextlib.contextmanager
def free(n):
    """The free-core count as if the sampler had just measured ``n`` (0: not known)."""
    before = free_cores.free.value
    free_cores.free.value = n
    try:
        yield
    finally:
        free_cores.free.value = before


def compiled_choice(work):
    """The count a compiled GEMM of ``work`` multiply-adds runs with, put back after."""
    prev = blas._fit_threads(work)
    seen = blas_threads.blas_threads()
    blas._restore(prev)
    return seen


def eager_choice(work):
    with blas_threads.fitting_threads(work):
        return blas_threads.blas_threads()


@needs_openblas
@pytest.mark.parametrize("choice", [compiled_choice, eager_choice])
def test_products_run_on_the_free_cores(two_threads, choice):
    small, large = 32 * 784 * 128, 1 << 30
    with free(1):                       # busy machine: one thread, whatever the size
        assert [choice(small), choice(large)] == [1, 1]
    with free(2):                       # a free core: the pool (OpenBLAS splits what pays)
        assert [choice(small), choice(large)] == [2, 2]
    with free(8):                       # never more than the user's pool
        assert choice(large) == 2
    with free(0):                       # not known: small products on one thread
        assert [choice(small), choice(large)] == [1, 2]
    assert blas_threads.blas_threads() == 2


@pytest.mark.parametrize("others, cores, want", [
    (0.0, 2, 2), (0.25, 2, 2), (0.4, 2, 1), (1.0, 2, 1), (3.5, 2, 1),
    (0.0, 8, 8), (2.5, 8, 5), (7.9, 8, 1)])
def test_free_cores_from_others_load(others, cores, want):
    assert free_cores.free_cores(cores, others) == want


def test_busy_seconds_reads_only_our_cpus_and_only_busy_time():
    stat = ("cpu  900 0 300 5000 100 0 0 0 0 0\n"
            "cpu0 100 10 50 2000 40 5 5 2 7 0\n"     # busy: 100+10+50+5+5+2 = 172 jiffies
            "cpu1 800 0 250 3000 60 0 0 0 0 0\n"
            "intr 12345\n")
    tick = free_cores._TICK
    assert free_cores.busy_seconds(stat, [0]) == pytest.approx(172 / tick)
    assert free_cores.busy_seconds(stat, [0, 1]) == pytest.approx((172 + 1050) / tick)


def test_the_sampler_runs_and_counts_within_the_machine():
    free_cores.start()
    assert 1 <= free_cores.free.value <= len(free_cores._our_cpus())


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


def test_parallel_loops_run_on_the_free_cores():
    import numba
    before = numba.get_num_threads()
    if before < 2:
        pytest.skip("Numba has one thread here")
    with free(1):
        prev = blas.fit_parallel()              # what a parallel program's caller does around it
        assert numba.get_num_threads() == 1 and prev == before
        blas.restore_parallel(prev)
    assert numba.get_num_threads() == before
    with free(before):
        assert blas.fit_parallel() == 0 and numba.get_num_threads() == before


def test_a_parallel_program_runs_on_the_free_cores_and_gives_the_same_values(monkeypatch):
    import numba
    from tapeflow.codegen import compile_graph, emitter
    from tapeflow.ir import dtypes as D
    from tapeflow.ir.graph import Graph, Value
    from tapeflow.ir.opdef import AVal

    from codegen.samples import add_node

    monkeypatch.setattr(emitter, "PARALLEL_WORK", 100_000)     # this loop goes parallel
    g = Graph()
    x = Value(AVal((300, 400), D.float64))
    g.inputs = [x]
    g.outputs = [add_node(g, "Sum", [add_node(g, "Exp", [x])], axis=None, keepdims=False)]
    prog = compile_graph(g, "free_core_probe")
    assert "prange(" in prog.source and "rt.fit_parallel()" in prog.source
    data = np.random.default_rng(0).random((300, 400))
    before = numba.get_num_threads()
    for n in (1, before):
        with free(n):
            got = prog(data)
        np.testing.assert_allclose(got[0] if isinstance(got, (tuple, list)) else got,
                                   np.exp(data).sum(), rtol=1e-12)
        assert numba.get_num_threads() == before      # the caller put the pool back
