"""Jacobians over data rows on the 2-worker cluster against ``tape.jacobian`` /
``tape.batch_jacobian`` on the whole data in one process."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import distribute

da = pytest.importorskip("dask.array")

F, H = 4, 3


def mlp(w1, b1, w2, x):
    """Two outputs per row, each row on its own: a jacobian over rows is a concatenation."""
    return tf.matmul(tf.tanh(tf.matmul(x, w1) + b1), w2)


def problem(rows, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, F)).astype(np.float32)
    params = [(0.5 * rng.standard_normal(s)).astype(np.float32) for s in ((F, H), (H,), (H, 2))]
    return x, params


def one_process(x, params):
    ps, xt = [tf.constant(p) for p in params], tf.constant(x)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(ps)
        tape.watch(xt)
        y = mlp(*ps, xt)
    return [j.numpy() for j in tape.jacobian(y, ps)], tape.batch_jacobian(y, xt).numpy()


@pytest.fixture(scope="module")
def uneven():
    x, params = problem(23)
    return x, params, one_process(x, params)


def test_jacobian_over_uneven_chunks_equals_one_process(strategy, uneven):
    x, params, (want, _) = uneven
    ds = strategy.experimental_distribute_dataset(da.from_array(x, chunks=(5, F)))
    assert ds.rows == (5, 5, 5, 5, 3)
    got = strategy.jacobian(mlp, params, ds)
    for g, w, p in zip(got, want, params, strict=True):
        assert g.shape == (23, 2, *p.shape) and g.dtype == tf.float32
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-5, atol=1e-6)


def test_batch_jacobian_by_index_or_name_equals_one_process(strategy, uneven):
    x, params, (_, want) = uneven
    cuts = [0, 1, 9, 23]
    ds = strategy.experimental_distribute_dataset([x[a:b] for a, b in zip(cuts, cuts[1:])],
                                                  names=("x",))
    got = strategy.batch_jacobian(mlp, params, ds, source="x")
    assert got.shape == (23, 2, F)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    assert strategy.batch_jacobian(mlp, params, ds, source=0).numpy().tobytes() == \
        got.numpy().tobytes()


def test_same_chunking_same_bits_per_worker_per_chunk_or_as_dask_arrays(client, uneven):
    x, params, _ = uneven
    results = []
    for tasks in ("worker", "chunk", "worker"):
        s = distribute.DaskStrategy(client, tasks=tasks)
        ds = s.experimental_distribute_dataset(da.from_array(x, chunks=(4, F)))
        results.append([j.numpy() for j in s.jacobian(mlp, params, ds)] +
                       [s.batch_jacobian(mlp, params, ds).numpy()])
    lazy = s.jacobian(mlp, params, ds, as_dask_array=True)
    lazy.append(s.batch_jacobian(mlp, params, ds, as_dask_array=True))
    assert all(isinstance(a, da.Array) and a.chunks[0] == ds.rows for a in lazy)
    results.append(client.compute(lazy, sync=True))
    for other in results[1:]:
        for a, b in zip(results[0], other, strict=True):
            assert a.shape == b.shape and a.tobytes() == b.tobytes()


def test_an_unconnected_parameter_gets_zeros(strategy, uneven):
    x, params, (want, _) = uneven
    ds = strategy.experimental_distribute_dataset(da.from_array(x, chunks=(10, F)))
    extra = np.ones((2, 2), np.float32)
    got = strategy.jacobian(lambda w1, b1, w2, unused, x: mlp(w1, b1, w2, x),
                            [*params, extra], ds)
    assert got[3].shape == (23, 2, 2, 2) and not got[3].numpy().any()
    np.testing.assert_allclose(got[0].numpy(), want[0], rtol=1e-5, atol=1e-6)


def test_a_function_without_a_row_per_data_row_is_refused(strategy, uneven):
    x, params, _ = uneven
    ds = strategy.experimental_distribute_dataset(da.from_array(x, chunks=(10, F)))
    with pytest.raises(ValueError, match=r"jacobian over data rows: the function returns "
                                         r"float32\[\].*one row per data row"):
        strategy.jacobian(lambda w1, b1, w2, x: tf.reduce_sum(mlp(w1, b1, w2, x)), params, ds)
    with pytest.raises(ValueError, match=r"batch_jacobian over data rows.*rank 2 at least"):
        strategy.batch_jacobian(lambda w1, b1, w2, x: tf.reduce_sum(mlp(w1, b1, w2, x), 1),
                                params, ds)
    with pytest.raises(ValueError, match=r"no data argument named 'z'"):
        strategy.batch_jacobian(mlp, params, ds, source="z")
    # rows dropped inside the function: only the chunks' own sizes show it
    with pytest.raises(ValueError, match=r"chunk \d \(rows \d+:\d+\): the function returned "
                                         r"float32\[\d, 2\]; a jacobian over data rows needs"):
        strategy.jacobian(lambda w1, b1, w2, x: mlp(w1, b1, w2, x[1:]), params, ds)


def test_a_chunk_of_the_wrong_shape_names_the_chunk(strategy, uneven):
    x, params, _ = uneven

    def lie(block, block_info=None):          # chunk 1 drops a column on the worker
        return block[:, :-1] if block_info[0]["chunk-location"][0] == 1 else block
    bad = da.from_array(x, chunks=(10, F)).map_blocks(lie, dtype=np.float32)
    ds = strategy.experimental_distribute_dataset(bad)
    with pytest.raises(distribute.ChunkError, match=r"chunk 1 \(rows 10:20\) of data argument "
                                                     r"'data0': expected float32\[10, 4\]"):
        strategy.jacobian(mlp, params, ds)
