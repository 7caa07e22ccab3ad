"""examples/distributed_training.py trains on the cluster and matches the same training in
one process."""
import importlib.util
import os

import numpy as np
import pytest

pytest.importorskip("dask.array")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "distributed_training.py")


def _example():
    spec = importlib.util.spec_from_file_location("distributed_training", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_training_on_the_cluster_matches_one_process(strategy, capsys):
    ex = _example()
    x, y = ex.make_data(3001, 7)                       # uneven: 6 chunks of 429 and one of 427
    dataset = strategy.experimental_distribute_dataset((x, y), names=("x", "y"))
    assert dataset.rows == (429,) * 6 + (427,)
    params, losses = ex.train(strategy, dataset, steps=8, learning_rate=0.05)
    xs, ys = dataset.gather()
    assert xs.shape == (3001, ex.FEATURES) and ys.shape == (3001, 1)
    ref, ref_losses = ex.train_one_process(xs, ys, steps=8, learning_rate=0.05)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
    assert losses[-1] < losses[0] - 0.05                # it learns
    for p, r in zip(params, ref, strict=True):
        np.testing.assert_allclose(p.numpy(), r.numpy(), rtol=1e-4, atol=1e-5)
    assert "training" in capsys.readouterr().err        # the progress bar ran
