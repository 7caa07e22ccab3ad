"""A loop whose condition bounds its trip count (``maximum_iterations``) sizes its gradient's
stacks to that bound when it starts, instead of 16 rows doubling as they fill: compiled
gradients equal eager ones whether the loop stops early or runs to the bound, and the
stacks the forward program returns are views of buffers of exactly ``maximum_iterations``
rows (``memoryview(stack.base)``: the allocation Numba made), where doubling would leave
16, 32 or 64."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.runtime.interpret import run_graph
from tapeflow.tracer.engine import Interpreted

R = np.random.default_rng(3)
X = np.abs(R.normal(size=(4, 3)))
W = 0.3 * R.normal(size=(3, 3))
ROW = 4 * 3 * 8                 # bytes of one f64[4, 3] row
EARLY, FAR = 30.0, 1e9          # the sum of s passes 30 after a few iterations, never 1e9


def body(i, s, w):
    """s grows by at least 0.1 per element per iteration: the sum passes any limit."""
    return i + 1, s + tf.square(tf.tanh(s @ w)) + 0.1


def loss(x, w, m, limit):
    i, s = tf.while_loop(lambda i, s: tf.reduce_sum(s) < limit, lambda i, s: body(i, s, w),
                         (0, x), maximum_iterations=m)
    return tf.reduce_sum(s * s) + tf.cast(i, s.dtype)


def unbounded_loss(x, w, limit):
    i, s = tf.while_loop(lambda i, s: tf.reduce_sum(s) < limit, lambda i, s: body(i, s, w),
                         (0, x))
    return tf.reduce_sum(s * s) + tf.cast(i, s.dtype)


def trips(limit, m=None):
    i, _ = tf.while_loop(lambda i, s: tf.reduce_sum(s) < limit,
                         lambda i, s: body(i, s, tf.constant(W)), (0, tf.constant(X)),
                         maximum_iterations=m)
    return int(i)


def eager_gradient(m, limit):
    x, w = tf.constant(X), tf.constant(W)
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        y = loss(x, w, m, limit)
    return [np.asarray(g) for g in tape.gradient(y, [x, w])]


def test_the_limits_stop_the_loop_early_or_at_the_bound():
    assert 2 < trips(EARLY, 40) < 16 and trips(FAR, 40) == 40 and trips(EARLY, 3) == 3


@pytest.mark.parametrize("m,limit", [(40, EARLY), (40, FAR), (3, EARLY)])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_a_gradient_inside_the_function_matches_eager(m, limit, as_tensor):
    """One WhileWithGrad: its stacks sized from the bound (a Python int is a constant
    operand; a tensor is read when the loop starts)."""
    @tf.function(jit_compile=True)
    def gradient(x, w, *bound):
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            y = loss(x, w, bound[0] if bound else m, limit)
        return tape.gradient(y, [x, w])
    bound = (tf.constant(m),) if as_tensor else ()
    got = gradient(tf.constant(X), tf.constant(W), *bound)
    source = gradient.get_concrete_function(tf.constant(X), tf.constant(W), *bound).program.source
    assert "WhileWithGrad" in source and "min(fit" in source
    assert "16)" not in source.split("min(fit", 1)[1].split("\n")[0]     # not 16 rows, doubling
    for a, b in zip(got, eager_gradient(m, limit), strict=True):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-12, atol=1e-12)


def forward_stacks(fn, args, arrays):
    """The forward program of ``fn`` under a tape run compiled on ``arrays``: (its outputs,
    the f64[n(+1), 4, 3] stacks among them, the residuals' count)."""
    fwd, bwd, n_res = tf.function(fn).get_concrete_function(*args).tape_pair()
    assert "WhileStacks" in [n.op for n in fwd.graph.nodes]
    out = fwd.run(arrays)
    assert not isinstance(fwd.program, Interpreted) and fwd.program.fallback is None
    stacks = [o for o in out if np.ndim(o) == 3 and np.shape(o)[1:] == (4, 3)]
    assert len(stacks) == 2             # s's history (cap + 1 states, cut to n), tanh's input
    return out, stacks, (fwd, bwd, n_res)


def capacity(stack):
    """Rows of the buffer the program allocated under ``stack`` (a view of its first rows)."""
    return memoryview(stack.base).nbytes // ROW


@pytest.mark.parametrize("m,limit", [(40, EARLY), (40, FAR), (3, EARLY)])
def test_the_forward_allocates_its_stacks_for_the_bound(m, limit):
    """A tape across the call: WhileStacks returns its stacks, views of buffers of exactly
    ``m`` rows (``m + 1`` for s's history) however many iterations ran; the backward over
    them equals eager's gradient."""
    args = [tf.constant(X), tf.constant(W), tf.constant(m), tf.constant(limit, "float64")]
    arrays = [X, W, np.int32(m), np.float64(limit)]
    out, stacks, (fwd, bwd, n_res) = forward_stacks(loss, args, arrays)
    n = trips(limit, m)
    assert [len(s) for s in stacks] == [n, n]       # s before each iteration, tanh's input
    assert sorted(capacity(s) for s in stacks) == [m, m + 1]
    got = bwd.run([np.asarray(a) for a in out[-n_res:]] + [np.float64(1.0)])
    (prog,) = bwd._specialized.values()
    assert not isinstance(prog, Interpreted)
    want = eager_gradient(m, limit)
    for a, b in zip(got[:2], want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(run_graph(bwd.graph, *out[-n_res:], np.float64(1.0))[0], want[0],
                               rtol=1e-12, atol=1e-12)


def test_a_loop_with_no_bound_still_doubles_its_stacks():
    """No ``maximum_iterations``: 16 rows, doubled to 32 when the 17th iteration comes."""
    limit = next(v for v in np.arange(30.0, 400.0, 10.0) if 16 < trips(v) <= 32)
    args = [tf.constant(X), tf.constant(W), tf.constant(limit, "float64")]
    _, stacks, _ = forward_stacks(unbounded_loss, args, [X, W, np.float64(limit)])
    n = trips(limit)
    assert [len(s) for s in stacks] == [n, n]       # s before each iteration, tanh's input
    assert sorted(capacity(s) for s in stacks) == [32, 33]


def test_the_dump_says_the_stacks_are_sized_for_the_bound():
    args = [tf.constant(X), tf.constant(W), tf.constant(40), tf.constant(EARLY, "float64")]
    text = tf.function(loss).lower(*args).as_text(stages=("loops",))
    assert ("      mode: stacks allocated at the start for the loop's bound (maximum_iterations, "
            "or a condition i < bound and ..., i += 1; it may stop before), up to "
            f"{2**30 // (2 * ROW)} rows") in text
