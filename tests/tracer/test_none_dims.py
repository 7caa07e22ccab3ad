"""Functions traced with None dims: TensorFlow's tracing semantics, sizes read at run time, and
gradients of one trace at every size (0 and 1 included) against eager, on the interpreter.

The TensorFlow facts were asked of TensorFlow 2.21 (side venv) and are stated per test.
"""
import numpy as np
import pytest

import tapeflow as tf

R = np.random.default_rng(11)


# -- TensorFlow's tracing semantics -----------------------------------------------------------

def test_input_signature_traces_once_with_none_in_the_shape():
    # TensorFlow 2.21 gives calls == [TensorShape([None])] and a tracing count of 1
    calls = []

    @tf.function(input_signature=[tf.TensorSpec([None])])
    def f(x):
        calls.append(x.shape)
        return tf.reduce_sum(x) * 2.0

    assert f(tf.constant([1.0, 2.0, 3.0])).numpy() == 12.0
    assert f(tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])).numpy() == 30.0
    assert f(tf.zeros([0])).numpy() == 0.0
    assert calls == [(None,)]
    assert repr(calls[0]) == "TensorShape([None])" and str(calls[0]) == "(None,)"
    assert f.experimental_get_tracing_count() == 1


def test_what_the_body_sees_of_an_unknown_dim():
    # TensorFlow 2.21: x.shape (None,), x.shape[0] None, as_list() [None], rank 1; tf.shape(x)
    # a symbolic int32 tensor of shape (1,); tf.size(x) an int32 scalar tensor; len(x) raises
    # TypeError "len is not well defined for a symbolic Tensor" (with autograph off; its
    # autograph turns len into a tensor, which tapeflow's conversion does not)
    seen = {}

    @tf.function(input_signature=[tf.TensorSpec([None])])
    def f(x):
        seen.update(shape=x.shape, first=x.shape[0], as_list=x.shape.as_list(), rank=x.shape.rank,
                    shape_t=tf.shape(x), size_t=tf.size(x))
        with pytest.raises(TypeError, match="len is not well defined for a symbolic Tensor"):
            len(x)
        return tf.cast(tf.shape(x)[0], tf.float32) + tf.cast(tf.size(x), tf.float32)

    assert f(tf.ones([4])).numpy() == 8.0
    assert f(tf.ones([0])).numpy() == 0.0
    assert seen["shape"] == (None,) and seen["first"] is None
    assert seen["as_list"] == [None] and seen["rank"] == 1
    assert seen["shape_t"].dtype == tf.int32 and seen["shape_t"].shape == (1,)
    assert seen["size_t"].dtype == tf.int32 and seen["size_t"].shape == ()
    assert str(seen["shape_t"]).startswith('Tensor("Shape') and not hasattr(seen["shape_t"], "_value")


def test_tf_shape_of_a_known_shape_is_a_constant():
    """TensorFlow's tf.shape folds a fully known shape to a constant while tracing."""
    @tf.function
    def f(x):
        return tf.reshape(x, [tf.shape(x)[1], -1])

    assert f(tf.ones([2, 3])).shape == (3, 2)
    ops = [n.op for n in f.get_concrete_function(tf.TensorSpec([2, 3])).graph.nodes]
    assert ops == ["Reshape"]


def test_reduce_retracing_generalises_on_the_second_distinct_shape():
    # TensorFlow 2.21 gives [TensorShape([3]), TensorShape([None])] and a count of 2 for sizes
    # 3, 5, 7, 2
    calls = []

    @tf.function(reduce_retracing=True)
    def g(x):
        calls.append(x.shape)
        return tf.reduce_sum(x)

    for n in [3, 5, 7, 2]:
        assert g(tf.ones([n])).numpy() == n
    assert calls == [(3,), (None,)]
    assert g.experimental_get_tracing_count() == 2


def test_reduce_retracing_generalises_each_dimension_and_argument():
    # TensorFlow 2.21, calls ([3], [2,2]), ([4], [2,2]), ([5], [3,2]): traces
    # [(3), (2,2)], [(None), (2,2)], [(None), (None,2)], count 3
    calls = []

    @tf.function(reduce_retracing=True)
    def g(x, y):
        calls.append((x.shape, y.shape))
        return tf.reduce_sum(x) + tf.reduce_sum(y)

    g(tf.ones([3]), tf.ones([2, 2]))
    g(tf.ones([4]), tf.ones([2, 2]))
    g(tf.ones([5]), tf.ones([3, 2]))
    g(tf.ones([6]), tf.ones([7, 2]))
    assert calls == [((3,), (2, 2)), ((None,), (2, 2)), ((None,), (None, 2))]
    assert g.experimental_get_tracing_count() == 3


def test_a_concrete_function_of_none_dims_serves_later_calls():
    # TensorFlow 2.21: get_concrete_function(TensorSpec([None, 3])) traces (None, 3) once, runs
    # [4, 3] (12.0) and [0, 3] (0.0), and a later call f(ones([4, 3])) does not trace again
    calls = []

    @tf.function
    def k(x):
        calls.append(x.shape)
        return tf.reduce_sum(x)

    c = k.get_concrete_function(tf.TensorSpec([None, 3]))
    assert c(tf.ones([4, 3])).numpy() == 12.0 and c(tf.ones([0, 3])).numpy() == 0.0
    assert k(tf.ones([4, 3])).numpy() == 12.0
    assert calls == [(None, 3)] and k.experimental_get_tracing_count() == 1
    assert "TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)" in c.pretty_printed_signature()


def test_shapes_built_from_run_time_sizes_keep_what_is_known():
    # TensorFlow 2.21 gives these static shapes for x: (None, 3), y: (None,)
    shapes = {}

    @tf.function(input_signature=[tf.TensorSpec([None, 3]), tf.TensorSpec([None])])
    def g(x, y):
        shapes.update(zeros_like=tf.zeros_like(x).shape, zeros=tf.zeros(tf.shape(x)).shape,
                      ones=tf.ones([tf.shape(x)[0], 2]).shape, flat=tf.reshape(x, [-1]).shape,
                      by6=tf.reshape(x, [-1, 6]).shape, fill=tf.fill(tf.shape(y), 2.0).shape,
                      bcast=tf.broadcast_to(y[:, None], tf.shape(x)).shape,
                      add=(x + y[:, None]).shape, mean=tf.reduce_mean(x, 0).shape)
        return tf.reduce_sum(x + y[:, None]) + tf.reduce_sum(tf.reshape(x, [-1, 6]))

    assert g(tf.ones([4, 3]), tf.ones([4])).numpy() == 36.0
    assert shapes == {"zeros_like": (None, 3), "zeros": (None, 3), "ones": (None, 2),
                      "flat": (None,), "by6": (None, 6), "fill": (None,), "bcast": (None, 3),
                      "add": (None, 3), "mean": (3,)}


# -- calls whose sizes break what the graph relies on ----------------------------------------

def _g(x, y):
    z = x + y[:, None]                       # the broadcast line
    return tf.reduce_sum(z) + tf.reduce_sum(tf.reshape(x, [-1, 6]))   # the reshape line


def test_a_broadcast_that_no_longer_holds_names_the_users_line():
    # TensorFlow 2.21: InvalidArgumentError "Incompatible shapes: [5,1] vs. [4,3]" at node add,
    # naming the line of `x + y[:, None]`
    g = tf.function(_g, input_signature=[tf.TensorSpec([None, 3]), tf.TensorSpec([None])])
    assert g(tf.ones([4, 3]), tf.ones([4])).numpy() == 36.0
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Add: .*test_none_dims.py:\d+: "
                                                             r"z = x \+ y\[:, None\]"):
        g(tf.ones([4, 3]), tf.ones([5]))


def test_a_reshape_that_no_longer_fits_names_the_users_line():
    # TensorFlow 2.21: InvalidArgumentError "Input to reshape is a tensor with 9 values, but the
    # requested shape requires a multiple of 6" at node Reshape
    g = tf.function(_g, input_signature=[tf.TensorSpec([None, 3]), tf.TensorSpec([None])])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Reshape: .*size 9.*tf.reshape"):
        g(tf.ones([3, 3]), tf.ones([3]))


def test_run_time_sizes_against_a_size_the_graph_knows():
    @tf.function(input_signature=[tf.TensorSpec([None]), tf.TensorSpec([None])])
    def g(x, y):
        return tf.broadcast_to(x, [2, tf.shape(y)[0]])

    assert g(tf.ones([1]), tf.ones([4])).shape == (2, 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="DynamicBroadcastTo"):
        g(tf.ones([3]), tf.ones([4]))


# -- gradients of one trace at every size, against eager ----------------------------------------

def _mlp(x, w, b):
    """A layer, softmax cross-entropy against the first class, a mean over the batch."""
    h = tf.nn.relu(tf.matmul(x, w) + b)
    labels = tf.one_hot(tf.zeros([tf.shape(x)[0]], tf.int32), 3, dtype=x.dtype)
    loss = tf.nn.softmax_cross_entropy_with_logits(labels, h)
    return tf.reduce_mean(loss) + tf.reduce_mean(tf.square(x)) * tf.reduce_sum(b)


def _broadcasts(x, y):
    """Every kind of size the trace cannot know: x and y broadcast both ways at run time."""
    z = x * y + tf.reduce_max(x, axis=-1, keepdims=True)
    z = tf.concat([z, tf.sin(z)], axis=0)
    return tf.reduce_sum(tf.reshape(z, [-1]) ** 2) / tf.cast(tf.size(z) + 1, z.dtype)


def _slices(x):
    """Slicing, padding, tiling, gathering and stacking over an unknown leading dim."""
    y = tf.pad(x[1:, ::-1], [[1, 0], [0, 2]]) + tf.tile(x[:1], [tf.shape(x)[0], 2])[:, :5]
    rows = tf.gather(x, tf.zeros([2], tf.int32))
    return tf.reduce_sum(y * y) + tf.reduce_mean(rows ** 3) + tf.reduce_sum(tf.stack([x, x]) ** 2)


def _second_order(fn, args):
    """(value, first-order gradients, gradient of their sum) of ``fn`` at ``args``."""
    xs = [tf.constant(a) for a in args]
    with tf.GradientTape() as outer:
        outer.watch(xs)
        with tf.GradientTape() as inner:
            inner.watch(xs)
            y = fn(*xs)
        g = inner.gradient(y, xs)
        total = tf.add_n([tf.reduce_sum(gi * gi) for gi in g if gi is not None])
    g2 = outer.gradient(total, xs)
    return [y] + list(g) + list(g2)


def _reference(fn, args):
    """Eager; for an empty input, a trace of its concrete shapes: through a function, the
    second order of a mean over an empty batch is nan where eager gives 0 (the recorded call
    recomputes the nan mean), with a known shape too, so that is what one trace must match."""
    if all(np.size(a) for a in args):
        return fn
    return tf.function(fn, input_signature=[tf.TensorSpec(np.shape(a), np.asarray(a).dtype)
                                            for a in args])


def _check(fn, signature, sizes_args, jit_compile=None):
    f = tf.function(fn, input_signature=signature, jit_compile=jit_compile)
    for args in sizes_args:
        want = _second_order(_reference(fn, args), args)
        got = _second_order(f, args)
        for w, g in zip(want, got, strict=True):
            assert (w is None) == (g is None) or (w is None and not np.any(g.numpy()))
            if w is not None and g is not None:
                np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)
                assert g.shape == w.shape
    assert f.experimental_get_tracing_count() == 1
    return f


MLP_ARGS = [(R.uniform(-1, 1, (n, 4)), R.uniform(-1, 1, (4, 3)), R.uniform(-1, 1, 3))
            for n in (5, 1, 0, 3)]
MLP_SIG = [tf.TensorSpec([None, 4], tf.float64), tf.TensorSpec([4, 3], tf.float64),
           tf.TensorSpec([3], tf.float64)]


def test_gradients_of_an_mlp_at_every_batch_size():
    _check(_mlp, MLP_SIG, MLP_ARGS)


@pytest.mark.parametrize("shapes", [((3, 4), (3, 1)), ((1, 4), (3, 4)), ((3, 1), (1, 1)),
                                    ((0, 4), (1, 4)), ((2, 1), (2, 5))])
def test_broadcasts_decided_at_run_time(shapes):
    """One trace with every dim unknown; each call broadcasts differently (0 and 1 sizes too)."""
    sig = [tf.TensorSpec([None, None], tf.float64)] * 2
    args = [R.uniform(-1, 1, s) for s in shapes]
    _check(_broadcasts, sig, [args])


def test_slices_pads_tiles_and_gathers_at_every_size():
    _check(_slices, [tf.TensorSpec([None, 3], tf.float64)],
           [(R.uniform(-1, 1, (n, 3)),) for n in (4, 1, 2)])


def test_the_gradient_reads_sizes_not_tensors():
    """Only the int32 sizes of an unknown shape cross from the forward to the backward: the
    gradient of a sum reads no float tensor of the forward."""
    f = tf.function(lambda x: tf.reduce_sum(x, axis=0),
                    input_signature=[tf.TensorSpec([None, 3], tf.float64)])
    forward, backward, n_res = f.get_concrete_function().tape_pair()
    residuals = forward.graph.outputs[len(forward.graph.outputs) - n_res:]
    assert [r.aval.dtype for r in residuals] == [tf.int32]


def test_a_logistic_regression_loss_traced_with_an_unknown_batch():
    """tapeflow.distribute's loss: one trace for every chunk size, gradient against eager."""
    def loss(x, y, w, b):
        logits = tf.matmul(x, w)[:, 0] + b
        return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))

    sig = [tf.TensorSpec([None, 32], tf.float64), tf.TensorSpec([None], tf.float64),
           tf.TensorSpec([32, 1], tf.float64), tf.TensorSpec([], tf.float64)]
    args = [(R.uniform(-1, 1, (n, 32)), R.integers(0, 2, n).astype(float),
             R.uniform(-1, 1, (32, 1)), np.float64(0.3)) for n in (7, 1, 0, 12)]
    _check(loss, sig, args)


def test_a_training_step_inside_the_function():
    """A tape inside a function traced with an unknown batch: the step serves every batch."""
    w = tf.Variable(R.uniform(-1, 1, (4, 3)))
    b = tf.Variable(np.zeros(3))

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float64)])
    def step(x):
        with tf.GradientTape() as tape:
            loss = _mlp(x, w, b)
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        return loss

    for n in (6, 1, 3):
        x = R.uniform(-1, 1, (n, 4))
        w0, b0 = w.numpy().copy(), b.numpy().copy()
        with tf.GradientTape() as tape:
            wv, bv = tf.Variable(w0), tf.Variable(b0)
            want = _mlp(tf.constant(x), wv, bv)
        gw, gb = tape.gradient(want, [wv, bv])
        got = step(tf.constant(x))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
        np.testing.assert_allclose(w.numpy(), w0 - 0.1 * gw.numpy(), rtol=1e-12)
        np.testing.assert_allclose(b.numpy(), b0 - 0.1 * gb.numpy(), rtol=1e-12, atol=1e-15)
    assert step.experimental_get_tracing_count() == 1


# -- on Numba: one trace, a program per input shape until codegen compiles unknown dims ------

@pytest.fixture
def numba_backend():
    tf.set_backend("numba")   # the autouse numpy_backend fixture restores the interpreter after


def _first_order(fn, args):
    xs = [tf.constant(a) for a in args]
    with tf.GradientTape() as tape:
        tape.watch(xs)
        y = fn(*xs)
    return [y] + list(tape.gradient(y, xs))


def test_gradients_on_numba_at_two_batch_sizes(numba_backend):
    f = tf.function(_mlp, input_signature=MLP_SIG)
    for args in MLP_ARGS[:2]:     # batches of 5 and 1
        for g, w in zip(_first_order(f, args), _first_order(_mlp, args), strict=True):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)
    assert f.experimental_get_tracing_count() == 1


@pytest.mark.slow
def test_second_order_on_numba_at_every_batch_size(numba_backend):
    _check(_mlp, MLP_SIG, MLP_ARGS)
