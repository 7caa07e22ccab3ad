"""Two loops with different bodies are not one (found by tests/compiler/test_tf_answers.py).

CSE keyed a node's graph attributes by ``repr``, which became a summary (inputs, node count,
outputs): two While nodes on the same inputs whose bodies differ only in an op merged, and
the function returned the first loop's value for the second. Graph attributes are now keyed
by structure (``passes.cse.graph_key``). TensorFlow 2.21, like eager, gives [2, 4, 6].
"""
import numpy as np

import tapeflow as tf
from tapeflow.passes.cse import cse, graph_key


def two_loops(x, k):
    t3 = x
    i = tf.constant(0)
    while i < k:
        t3 = t3 + 1.0
        i += 1
        if tf.reduce_sum(t3) > 100.0:
            break
    t8 = x
    i = tf.constant(0)
    while i < k:
        t8 = t8 * 2.0
        i += 1
        if tf.reduce_sum(t8) > 100.0:
            break
    return t8


def test_loops_with_different_bodies_stay_apart(numpy_backend):
    x, k = tf.constant([1.0, 2.0, 3.0]), tf.constant(1)
    assert two_loops(x, k).numpy().tolist() == [2.0, 4.0, 6.0]
    assert tf.function(two_loops)(x, k).numpy().tolist() == [2.0, 4.0, 6.0]


def test_equal_loops_still_merge(numpy_backend):
    def same_twice(x):
        a = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x)
        b = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x)
        return a + b
    graph = tf.function(same_twice).get_concrete_function(tf.constant([1.0])).graph
    ifs = [n for n in graph.nodes if n.op == "If"]
    assert len(ifs) == 2
    assert graph_key(ifs[0].attrs["then_graph"]) == graph_key(ifs[1].attrs["then_graph"])
    assert sum(n.op == "If" for n in cse(graph).nodes) == 1
    np.testing.assert_allclose(tf.function(same_twice)(tf.constant([1.5])).numpy(), [6.0])


def test_constants_of_nested_graphs_count(numpy_backend):
    def two_scales(x):
        a = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x)
        b = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 3.0, lambda: x)
        return a + b
    assert tf.function(two_scales)(tf.constant([1.0])).numpy().tolist() == [5.0]
