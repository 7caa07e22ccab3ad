"""A Python-counter ``while`` with a ``break`` on a tensor (issue 18): the loop runs as Python
until the break flag becomes a tensor, then the rest of the loop is one While node.

The break flag is set in a converted ``if`` (an If node), so the loop's test becomes a
tensor after the first iteration, and ``pywhile._python_loop`` hands the remaining
iterations to a While node. Before, each way out of the loop was a traced path: two such
loops in sequence made 25 paths, a 77 KB graph and an 87 KB program. TensorFlow's AutoGraph
raises NotImplementedError for this loop ("the condition of while loop started as
non-Tensor, then changed to Tensor"); tapeflow's values are eager's.
"""
import re
from collections import Counter

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ir.graph import print_graph


def two_break_loops(x):
    t1 = tf.sin(x)
    i = 0
    while i < 4:
        t1 = tf.tanh(t1) * 0.9 + 0.1
        i += 1
        if tf.reduce_max(t1) > 0.6:
            break
    t2 = t1 * x
    i = 0
    while i < 4:
        t2 = tf.sin(t2) * 0.9 + 0.1
        i += 1
        if tf.reduce_max(t2) > 0.6:
            break
    return tf.reduce_sum(t2) + tf.reduce_sum(t1 * t1)


def value_and_grad(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = two_break_loops(x)
    return y, tape.gradient(y, x)


INPUTS = ([0.1, -0.5, 0.3], [0.9, 0.8, 0.7], [-1.0, 0.2, 0.0], [3.0, 3.0, 3.0])


def _ops(fn, x):
    text = print_graph(tf.function(fn).get_concrete_function(tf.constant(x)).graph)
    return Counter(re.findall(r"= (\w+)", text)), len(text)


def test_each_loop_is_one_while_node(numpy_backend):
    ops, size = _ops(value_and_grad, INPUTS[0])
    assert ops["While"] == 2
    assert ops["If"] <= 6          # the break ifs of the first, Python, iterations and the gradient's
    assert size < 12_000           # was 76,882 characters (25 paths)


@pytest.mark.parametrize("x", INPUTS)
def test_values_and_gradients_are_eagers(numpy_backend, x):
    want_y, want_g = value_and_grad(tf.constant(x))
    got_y, got_g = tf.function(value_and_grad)(tf.constant(x))
    np.testing.assert_allclose(got_y.numpy(), want_y.numpy(), rtol=1e-6)
    np.testing.assert_allclose(got_g.numpy(), want_g.numpy(), rtol=1e-6)
    with tf.GradientTape() as tape:      # through the function
        xx = tf.constant(x)
        tape.watch(xx)
        y = tf.function(two_break_loops)(xx)
    np.testing.assert_allclose(tape.gradient(y, xx).numpy(), want_g.numpy(), rtol=1e-6)


def test_generated_source_stays_small(sources):
    tf.function(value_and_grad)(tf.constant(INPUTS[0]))
    # issue 18's bound for a program of <= 12 ops. 32 KB when written, 42 KB with shape-free
    # source, 90 KB since each loop and its gradient are one op whose source also holds the
    # checkpointed fallback (passes/share_loops.py), 102 KB since the loop template computes
    # its memory plan at run time and adds weight products per block (codegen/templates/
    # loops.py); traced path by path it was 87 KB
    assert sources and max(len(s) for s in sources.values()) < 110 * 1024


def test_a_counter_loop_without_a_tensor_break_stays_python(numpy_backend):
    def f(x):
        i = 0
        while i < 3:
            x = x * 2.0
            i += 1
            if i == 2:
                break
        return x
    ops, _ = _ops(f, [1.0])
    assert ops["While"] == 0 and ops["If"] == 0
    assert tf.function(f)(tf.constant([1.0])).numpy().tolist() == [4.0]
