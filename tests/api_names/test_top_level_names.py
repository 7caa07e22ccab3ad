"""Top-level names that are not numeric primitives: tf.gradients/tf.hessians inside functions,
recompute_grad, grad_pass_through, no_gradient, switch_case/case, get_static_value, grouping,
shape broadcasting, scopes. The facts are TensorFlow 2.21's answers."""
import numpy as np
import pytest

import tapeflow as tf


@tf.function
def _graph_gradients(x):
    y = x * x * x
    g1 = tf.gradients(y, x)
    g2 = tf.gradients([y, x * 2], [x], grad_ys=[tf.constant([1., 2.]), tf.constant([3., 4.])])
    a = x * 2.0
    g3 = tf.gradients(a * x, x, stop_gradients=[a])
    g4 = tf.gradients(y, [x, tf.constant(1.)], unconnected_gradients="zero")
    h = tf.hessians(tf.reduce_sum(y), x)
    c = tf.cond(x[0] > 0, lambda: tf.sin(x), lambda: x * x)
    i, z = tf.constant(0), x
    while i < 3:
        z = z * x
        i += 1
    return g1, g2, g3, g4, h, tf.gradients(c, x), tf.gradients(z, x), tf.gradients(1.0, x)


@pytest.mark.usefixtures("numpy_backend")   # ordinary ops: the codegen tests compile them
def test_gradients_and_hessians_inside_a_function():
    g1, g2, g3, g4, h, gc, gz, gnone = _graph_gradients(tf.constant([1., 2.]))
    # TF 2.21
    np.testing.assert_allclose(g1[0].numpy(), [3., 12.])
    np.testing.assert_allclose(g2[0].numpy(), [9., 32.])
    np.testing.assert_allclose(g3[0].numpy(), [2., 4.])
    np.testing.assert_allclose(g4[0].numpy(), [3., 12.])
    assert float(g4[1]) == 0.0
    np.testing.assert_allclose(h[0].numpy(), [[6., 0.], [0., 12.]])
    np.testing.assert_allclose(gc[0].numpy(), np.cos([1., 2.]), rtol=1e-6)
    np.testing.assert_allclose(gz[0].numpy(), [4., 32.])
    assert gnone == [None]
    _, _, _, _, _, gc, _, _ = _graph_gradients(tf.constant([-1., 2.]))
    np.testing.assert_allclose(gc[0].numpy(), [-2., 4.])


def test_gradients_eagerly_is_tensorflows_error():
    with pytest.raises(RuntimeError, match="tf.gradients is not supported when eager execution "
                                           "is enabled. Use tf.GradientTape instead."):
        tf.gradients(tf.constant(1.), tf.constant(1.))


def test_grad_pass_through_recompute_grad_no_gradient():
    x = tf.constant(3.)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.grad_pass_through(lambda v: tf.round(v * 1.3))(x)
        z = tf.recompute_grad(lambda v: tf.sin(v) * v)(x)
    assert (float(y), float(tape.gradient(y, x))) == (4.0, 1.0)          # TF 2.21
    np.testing.assert_allclose([float(z), float(tape.gradient(z, x))], [0.42336, -2.8288574],
                               rtol=1e-5)

    @tf.function
    def f(v):
        with tf.GradientTape() as t:
            t.watch(v)
            out = tf.recompute_grad(lambda u: tf.sin(u) * u)(v)
        return t.gradient(out, v)

    np.testing.assert_allclose(float(f(x)), -2.8288574, rtol=1e-5)
    with pytest.raises(KeyError, match="Registering two gradient with name 'Sin'!"):
        tf.no_gradient("Sin")
    with pytest.raises(TypeError, match="op_type must be a string"):
        tf.no_gradient(3)
    tf.no_gradient("TestNoGradSin")
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.gradient_override_map({"Sin": "TestNoGradSin"}):
            y = tf.sin(x) + x
    assert float(tape.gradient(y, x)) == 1.0
    assert (tf.AggregationMethod.ADD_N, tf.AggregationMethod.DEFAULT,
            tf.AggregationMethod.EXPERIMENTAL_TREE,
            tf.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N) == (0, 0, 1, 2)


def _cases(i, x):
    branches = [lambda: tf.constant(10), lambda: tf.constant(20)]
    return (tf.switch_case(i, branches),
            tf.switch_case(i, branches, default=lambda: tf.constant(-1)),
            tf.case([(x > 5, lambda: tf.constant(1)), (x > 2, lambda: tf.constant(2))],
                    default=lambda: tf.constant(3)))


def test_switch_case_and_case_eager_and_traced():
    f = tf.function(_cases)
    for run in (_cases, f):
        # TF 2.21: an index out of range runs the default, or the last branch
        assert [int(v) for v in run(tf.constant(1), tf.constant(3.))] == [20, 20, 2]
        assert [int(v) for v in run(tf.constant(5), tf.constant(9.))] == [20, -1, 1]
        assert [int(v) for v in run(tf.constant(-1), tf.constant(0.))] == [20, -1, 3]
    with pytest.raises(TypeError, match="'branch_index' must be a Tensor, got <class 'int'>"):
        tf.switch_case(1, [lambda: tf.constant(1)])
    x = tf.constant(3.)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.case([(x > 1, lambda: tf.constant(1)), (x > 2, lambda: tf.constant(2))],
                default=lambda: tf.constant(3), exclusive=True)
    assert str(e.value) == ("Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. "
                            "Summarized data: b'Input error: exclusive=True: more than 1 "
                            "conditions (?, ?) evaluated as True:'\nTrue, True")
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.case([(x > 5, lambda: tf.constant(1))])
    assert str(e.value) == ("Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. "
                            "Summarized data: b'Input error: None of conditions evaluated as "
                            "True:'\nFalse")
    assert int(tf.case([(x > 1, lambda: tf.constant(1))])) == 1


def test_static_values_and_tensor_predicates():
    assert tf.get_static_value(tf.constant([1, 2])).tolist() == [1, 2]
    assert tf.get_static_value(3) == 3 and tf.get_static_value([1, 2]) == [1, 2]

    seen = []

    @tf.function
    def f(x):
        seen.append((tf.get_static_value(x) is None,
                     tf.get_static_value(tf.shape(tf.zeros([2, 3]))).tolist(),
                     tf.get_static_value(tf.shape(x)).tolist(), tf.inside_function(),
                     tf.is_symbolic_tensor(x), tf.is_tensor(x)))
        return x

    f(tf.constant([1., 2.]))
    assert seen == [(True, [2, 3], [2], True, True, True)]
    assert (tf.inside_function(), tf.is_symbolic_tensor(tf.constant(1.)),
            tf.is_tensor(tf.constant(1.)), tf.is_tensor(np.ones(2)),
            tf.is_tensor(tf.Variable(1.))) == (False, False, True, False, True)


def test_grouping_names():
    assert tf.group(tf.constant(1.), tf.constant(2.)) is None and tf.no_op() is None
    a, b = tf.tuple([tf.constant(1.), tf.constant(2.)])
    assert (float(a), float(b)) == (1.0, 2.0)
    p, q = tf.identity_n([tf.constant(1.), tf.constant([2, 3])])
    assert float(p) == 1.0 and q.numpy().tolist() == [2, 3]
    s = tf.shape_n([tf.zeros([2, 3]), tf.zeros([4])])
    assert [v.numpy().tolist() for v in s] == [[2, 3], [4]]
    assert tf.shape_n([tf.zeros([2, 3])], out_type=tf.int64)[0].dtype == tf.int64
    called = []
    with tf.control_dependencies([tf.constant(1.), lambda: called.append(1)]):
        pass
    assert called == [1]
    with pytest.raises(TypeError, match="Control input must be Operation or Tensor"):
        with tf.control_dependencies([3]):
            pass


def test_shapes_and_scopes():
    assert tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3])) == \
        tf.TensorShape([2, 3])
    assert tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([None, 3])) == \
        tf.TensorShape([2, 3])
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting\. .* Received: "
                                         r"\(2,\) and \(3,\)\."):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))
    assert tf.broadcast_dynamic_shape(tf.constant([2, 1]), tf.constant([3])).numpy().tolist() == \
        [2, 3]
    assert tf.broadcast_dynamic_shape([2, 1], [4, 1, 3]).numpy().tolist() == [4, 2, 3]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Incompatible shapes: \[2\] vs. \[3\]"):
        tf.broadcast_dynamic_shape(tf.constant([2]), tf.constant([3]))
    f = tf.function(lambda a, b: tf.broadcast_dynamic_shape(tf.shape(a), tf.shape(b)),
                    input_signature=[tf.TensorSpec([None, 1]), tf.TensorSpec([None])])
    assert f(tf.zeros([2, 1]), tf.zeros([3])).numpy().tolist() == [2, 3]
    assert tf.get_current_name_scope() == ""
    with tf.name_scope("a"):
        with tf.name_scope("b"):
            assert tf.get_current_name_scope() == "a/b"
    assert tf.get_logger().name == "tapeflow"


def test_tensorflows_initializers():
    assert tf.zeros_initializer()([2], tf.int32).numpy().tolist() == [0, 0]
    assert tf.ones_initializer()([2, 1]).numpy().tolist() == [[1.0], [1.0]]
    c = tf.constant_initializer([1, 2])([2])
    assert c.dtype == tf.int32 and c.numpy().tolist() == [1, 2]
    assert tf.constant_initializer(2.0)([2]).numpy().tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match="has 2 elements, but got `shape` \\(3,\\) with 3"):
        tf.constant_initializer([1, 2])([3])
    # TF 2.21: seeded initializers are the stateless ops on [seed, 0]
    np.testing.assert_array_equal(tf.random_normal_initializer(seed=1)([3]).numpy(), np.array(
        [0.006332515273243189, -0.024650828912854195, 0.0315595380961895], np.float32))
    np.testing.assert_array_equal(tf.random_uniform_initializer(seed=1)([3]).numpy(), np.array(
        [0.0378488190472126, -0.004001975059509277, 0.010029125958681107], np.float32))
    assert tf.random_normal_initializer().get_config() == {"mean": 0.0, "stddev": 0.05,
                                                          "seed": None}
