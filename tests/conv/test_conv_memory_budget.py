"""The residual memory budget (``TAPEFLOW_MEMORY_MB``) on W11's CNN: a function called under
a tape keeps at most the budget's bytes for its backward, which recomputes the activations
(convolutions, pools) it no longer keeps, and the gradients are the default run's.

The graphs run on the NumPy interpreter: the partition is the same graph pass for both
backends, and compiled == eager for these ops is tests/conv/test_conv_ops.py's business."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.passes.partition import partition

PARAMS = ("k1", "b1", "k2", "b2", "wd", "bd")


def _inputs():
    rng = np.random.default_rng(0)
    f = np.float32
    return {"x": rng.standard_normal((4, 12, 12, 1), dtype=f),
            "labels": rng.integers(0, 10, 4).astype(np.int64),
            "k1": (rng.standard_normal((3, 3, 1, 16)) * 0.4).astype(f),
            "b1": (0.1 * rng.standard_normal(16)).astype(f),
            "k2": (rng.standard_normal((3, 3, 16, 32)) * 0.1).astype(f),
            "b2": (0.1 * rng.standard_normal(32)).astype(f),
            "wd": (rng.standard_normal((288, 10)) * 0.06).astype(f),
            "bd": np.zeros(10, f)}


def _cnn_loss():
    """W11's forward (benchmarks/workloads/w11.py) as a function of its inputs and parameters."""
    @tf.function
    def loss(x, labels, k1, b1, k2, b2, wd, bd):
        h = tf.nn.relu(tf.nn.conv2d(x, k1, 1, "SAME") + b1)
        h = tf.nn.max_pool2d(h, 2, 2, "VALID")
        h = tf.nn.relu(tf.nn.conv2d(h, k2, 1, "SAME") + b2)
        h = tf.nn.max_pool2d(h, 2, 2, "VALID")
        logits = tf.matmul(tf.reshape(h, [tf.shape(h)[0], -1]), wd) + bd
        return tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    return loss


def _step(inp):
    """(bytes the tape keeps besides the inputs it was given, the 6 gradients)."""
    args = [tf.constant(inp["x"]), tf.constant(inp["labels"])]
    params = [tf.constant(inp[k]) for k in PARAMS]
    with tf.GradientTape() as tape:
        tape.watch(params)
        loss = _cnn_loss()(*args, *params)
        kept = tape.saved_bytes() - sum(t.numpy().nbytes for t in args + params + [loss])
    return kept, [g.numpy() for g in tape.gradient(loss, params)]


def test_half_the_residuals_give_the_same_gradients(numpy_backend, monkeypatch):
    inp = _inputs()
    monkeypatch.delenv("TAPEFLOW_MEMORY_MB", raising=False)
    kept, grads = _step(inp)
    assert kept > 50_000                     # the activations TensorFlow's split keeps
    monkeypatch.setenv("TAPEFLOW_MEMORY_MB", str(kept / 2 / 2**20))
    kept_half, grads_half = _step(inp)
    assert 0 < kept_half <= kept / 2
    for g, want in zip(grads_half, grads, strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7)
    monkeypatch.setenv("TAPEFLOW_MEMORY_MB", str(2 * kept / 2**20))   # fits: TF's split
    assert _step(inp)[0] == kept


def test_the_cut_releases_the_largest_activations_first(numpy_backend):
    """The budgeted cut recomputes the first convolution (its output is the largest) before
    the second; with no budget nothing but cheap ops is recomputed."""
    inp = _inputs()
    args = [tf.constant(inp[k]) for k in ("x", "labels") + PARAMS]
    joint = _cnn_loss().get_concrete_function(*args).joint()
    _, _, info = partition(joint.graph, joint.n_primals, joint.n_outputs)
    assert info.computed_bytes > 0
    _, bwd, tight = partition(joint.graph, joint.n_primals, joint.n_outputs,
                              budget=info.computed_bytes // 2)
    assert tight.computed_bytes <= info.computed_bytes // 2
    recomputed = [n.op for n in bwd.nodes]
    assert recomputed.count("Conv2D") >= 1 and "Conv2D" not in [
        n.op for n in partition(joint.graph, joint.n_primals, joint.n_outputs)[1].nodes]


def test_a_bad_budget_names_the_variable(monkeypatch):
    from tapeflow import env
    monkeypatch.setenv("TAPEFLOW_MEMORY_MB", "-1")
    with pytest.raises(ValueError, match="TAPEFLOW_MEMORY_MB"):
        env.get("TAPEFLOW_MEMORY_MB")
    monkeypatch.setenv("TAPEFLOW_MEMORY_MB", "0")
    assert env.get("TAPEFLOW_MEMORY_MB") is None
