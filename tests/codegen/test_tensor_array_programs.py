"""A TensorArray loop and its gradient (TensorListSetItem inside While and WhileGrad) compiled
by Numba agree with the interpreter; an index out of range raises in compiled code too."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.codegen import compile_graph
from tapeflow.runtime.interpret import run_graph

R = np.random.default_rng(12)


def rnn_gradient(x, w, n):
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        ta = tf.TensorArray(x.dtype, size=5)
        h = tf.zeros_like(tf.gather(x, 0))
        for i in tf.range(n):
            h = tf.tanh(tf.linalg.matvec(w, h) + x[i])      # a gather at run time
            ta = ta.write(i, h)
        y = tf.reduce_sum(ta.stack() ** 2)
    return [y] + tape.gradient(y, [x, w])


def test_compiled_tensor_array_loop_gradient_matches_the_interpreter():
    x, w = R.normal(size=(7, 3)), 0.5 * R.normal(size=(3, 3))
    args = (tf.constant(x), tf.constant(w), tf.constant(4))
    graph = tf.function(rnn_gradient).get_concrete_function(*args).graph
    prog = compile_graph(graph, "tensor_array_rnn")
    assert prog.fallback is None
    got = prog(x, w, np.int32(4))
    want = run_graph(graph, x, w, np.int32(4))
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="Trying to modify element 5 in a list with 5 elements"):
        prog(x, w, np.int32(6))


def grown(x, n):
    ta = tf.TensorArray(x.dtype, size=0, dynamic_size=True)
    h = tf.zeros_like(tf.gather(x, 0))
    for i in tf.range(n):
        h = tf.tanh(0.5 * h + x[i])
        ta = ta.write(i, h)
    return tf.reduce_sum(ta.stack() ** 2)


def test_a_tensor_array_grown_in_a_loop_of_run_time_length_matches_the_eager_loop():
    """Its tensor's leading dim is None (a size the data decides), read from the array at run
    time in the compiled program (test_run_time_sizes.py): the same values and gradients as
    the eager loop (for n=0 the eager gradient is None and the function's zeros, as
    TensorFlow 2.21's)."""
    x = tf.constant(R.normal(size=(6, 3)))
    f = tf.function(grown)
    for n in (0, 2, 5):
        with tf.GradientTape() as t:
            t.watch(x)
            y = f(x, tf.constant(n))
        with tf.GradientTape() as e:
            e.watch(x)
            ye = grown(x, tf.constant(n))
        np.testing.assert_allclose(y.numpy(), ye.numpy(), rtol=1e-12)
        g, ge = t.gradient(y, x), e.gradient(ye, x)
        if n == 0:
            assert ge is None and not g.numpy().any()
        else:
            np.testing.assert_allclose(g.numpy(), ge.numpy(), rtol=1e-12, atol=1e-14)


def _loop_copies(source):
    """Lines copying a whole list inside a loop of the generated program (a copy per
    iteration makes a TensorArray loop quadratic in its trip count)."""
    return [ln for ln in source.splitlines() if ".copy()" in ln and "TensorListSetItem" in ln
            and len(ln) - len(ln.lstrip()) > 4]


@pytest.mark.parametrize("budget", [None, 0])
def test_a_tensor_array_loop_writes_its_list_in_place(budget):
    """The forward loop's list and the backward loop's list cotangent are the loops' own
    (copied once before them), so each iteration writes one element, not a copy of the list;
    past the memory budget (checkpoints, segments recomputed) too. Compiled == interpreter."""
    x, w = R.normal(size=(7, 3)), 0.5 * R.normal(size=(3, 3))
    args = (tf.constant(x), tf.constant(w), tf.constant(4))
    if budget is None:
        graph = tf.function(rnn_gradient).get_concrete_function(*args).graph
    else:
        with tf.config.loop_memory(budget):
            graph = tf.function(rnn_gradient).get_concrete_function(*args).graph
    prog = compile_graph(graph, "tensor_array_rnn")
    assert _loop_copies(prog.source) == []
    got = prog(x, w, np.int32(4))
    want = run_graph(graph, x, w, np.int32(4))
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
