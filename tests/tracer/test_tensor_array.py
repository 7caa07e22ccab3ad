"""tf.TensorArray eagerly and inside tapeflow.function (loops included).

Expected values and error texts are TensorFlow 2.21's, asked of TensorFlow itself and written
here as facts. Functions run on the NumPy interpreter (tests/tracer/conftest.py); the
compiled path is tests/codegen/test_tensor_array_programs.py.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError, OutOfRangeError
from tapeflow.testing import check_gradients
from tapeflow.tracer.symbolic_tensor import TracingError

X = tf.constant([1.0, 2.0])


def ops_of(fn, *args):
    return [node.op for node in fn.get_concrete_function(*args).graph.nodes]


# -- eager ------------------------------------------------------------------------------------

def test_eager_write_read_stack_size_element_shape():
    ta = tf.TensorArray(tf.float32, 3)
    ta.write(0, [1.0, 2.0])                       # eagerly a write mutates (and returns) ta
    assert ta.write(2, X * 2.0) is ta
    np.testing.assert_array_equal(ta.stack().numpy(), [[1, 2], [0, 0], [2, 4]])
    assert ta.size().numpy() == 3 and ta.size().dtype == tf.int32
    assert ta.element_shape == [2] and ta.dtype == tf.float32
    np.testing.assert_array_equal(ta.read(1).numpy(), [0, 0])     # unwritten, shape known
    assert tf.TensorArray(tf.float32, 2).write(0, 1).read(0).dtype == tf.float32


def test_eager_unknown_element_shape_cannot_make_zeros():
    with pytest.raises(ValueError):
        tf.TensorArray(tf.float32, 3).read(1)
    with pytest.raises(ValueError):
        tf.TensorArray(tf.float32, 3).stack()
    assert tf.TensorArray(tf.float32, 0).stack().shape == [0]
    assert tf.TensorArray(tf.float32, 0, element_shape=[2]).stack().shape == [0, 2]


def test_eager_write_twice_overwrites():
    """TensorFlow 2.21's eager TensorArray overwrites (no "already written" error)."""
    assert tf.TensorArray(tf.float32, 3).write(0, 1.0).write(0, 2.0).read(0).numpy() == 2.0


def test_eager_errors_are_tensorflows():
    ta = tf.TensorArray(tf.float32, 3).write(0, 1.0)
    with pytest.raises(OutOfRangeError, match=r"Tried to read from index 5 but array size is: 3"):
        ta.read(5)
    with pytest.raises(OutOfRangeError, match=r"Reading from negative indices \(index -1\)"):
        ta.read(-1)
    with pytest.raises(OutOfRangeError,
                       match="Tried to write to index 5 but array is not resizeable and size is: 3"):
        ta.write(5, 1.0)
    with pytest.raises(ValueError, match=r"Incompatible shape for value \(\(3,\)\), expected \(\(2,\)\)"):
        tf.TensorArray(tf.float32, 3).write(0, [1.0, 2.0]).write(1, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"expected \(\(2,\)\)"):
        tf.TensorArray(tf.float32, 3, element_shape=[2]).write(1, [1.0, 2.0, 3.0])
    with pytest.raises(InvalidArgumentError,
                       match="TensorArray dtype is float32 but Op is trying to write dtype int32"):
        tf.TensorArray(tf.float32, 3).write(0, tf.constant(1, tf.int32))


def test_eager_clear_after_read():
    ta = tf.TensorArray(tf.float32, 3).write(0, 1.0)
    ta.read(0)
    with pytest.raises(InvalidArgumentError, match="Could not read index 0 twice because it was "
                                                   "cleared after a previous read"):
        ta.read(0)
    ta = tf.TensorArray(tf.float32, 3, clear_after_read=False).write(0, 1.0)
    assert ta.read(0).numpy() == ta.read(0).numpy() == 1.0


def test_eager_dynamic_size_grows_with_zeros():
    ta = tf.TensorArray(tf.float32, 3, dynamic_size=True).write(5, 1.0)
    np.testing.assert_array_equal(ta.stack().numpy(), [0, 0, 0, 0, 0, 1])
    assert tf.TensorArray(tf.float32, 0, dynamic_size=True).write(4, 1.0).size().numpy() == 5


def test_eager_unstack_gather_scatter_concat_split():
    ta = tf.TensorArray(tf.float32, 3).unstack([[1.0], [2.0], [3.0]])
    np.testing.assert_array_equal(ta.read(2).numpy(), [3.0])
    ta = tf.TensorArray(tf.float32, 3).unstack([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(ta.gather([2, 0]).numpy(), [3.0, 1.0])
    np.testing.assert_array_equal(
        tf.TensorArray(tf.float32, 3).scatter([2, 0], [5.0, 6.0]).stack().numpy(), [6, 0, 5])
    ta = tf.TensorArray(tf.float32, 2, infer_shape=False).write(0, [1.0]).write(1, [2.0, 3.0])
    np.testing.assert_array_equal(ta.concat().numpy(), [1, 2, 3])
    ta = tf.TensorArray(tf.float32, 2).split([1.0, 2.0, 3.0], [1, 2])
    assert [ta.read(i).numpy().tolist() for i in range(2)] == [[1.0], [2.0, 3.0]]
    with pytest.raises(ValueError, match="Cannot unstack 3 tensors into a TensorArray of static size 2"):
        tf.TensorArray(tf.float32, 2).unstack([[1.0], [2.0], [3.0]])
    with pytest.raises(InvalidArgumentError, match="Expected sum of lengths to be equal to "
                                                   "values.shape\\[0\\], but sum of lengths is 2"):
        tf.TensorArray(tf.float32, 2).split([1.0, 2.0, 3.0], [1, 1])


def test_eager_iteration_beyond_tensorflow():
    """TensorFlow's TensorArray is not iterable (TypeError); here it yields its elements."""
    ta = tf.TensorArray(tf.float32, 2).unstack([1.0, 2.0])
    assert [float(e) for e in ta] == [1.0, 2.0]


def test_eager_gradients_and_none():
    with tf.GradientTape(persistent=True) as t:
        t.watch(X)
        ta = tf.TensorArray(tf.float32, 3).write(1, X * 2.0)
        stacked = tf.reduce_sum(ta.stack() ** 2)
        other = tf.TensorArray(tf.float32, 3).write(1, X).read(0)
        read = tf.reduce_sum(tf.TensorArray(tf.float32, 3).write(1, X * 2.0).read(1))
    np.testing.assert_array_equal(t.gradient(stacked, X).numpy(), [8.0, 16.0])   # TF's values
    assert t.gradient(other, X) is None             # TF eager: the zeros are not connected
    np.testing.assert_array_equal(t.gradient(read, X).numpy(), [2.0, 2.0])


def test_eager_gradients_against_finite_differences():
    def f(x, y):
        ta = tf.TensorArray(tf.float64, 3, clear_after_read=False)
        ta = ta.write(0, x * y).write(2, tf.sin(x))
        ta = ta.scatter([1], tf.expand_dims(y * y, 0))
        return ta.stack() * ta.read(0) + tf.reduce_sum(ta.gather([2, 2]))
    check_gradients(f, np.array([0.3, -1.2]), np.array([0.7, 0.4]))


# -- inside tapeflow.function ------------------------------------------------------------------

def rnn(x, n):
    """The classic loop: one element per step, then stack."""
    ta = tf.TensorArray(x.dtype, size=3)
    h = tf.zeros_like(tf.gather(x, 0))
    for i in tf.range(n):
        h = tf.tanh(h * 0.5 + tf.gather(x, i))
        ta = ta.write(i, h)
    return ta.stack()


def test_loop_write_then_stack_is_one_while_and_equals_the_eager_loop():
    x = tf.constant(np.arange(6.0).reshape(3, 2) / 4)
    n = tf.constant(3)
    f = tf.function(rnn)
    np.testing.assert_allclose(f(x, n).numpy(), rnn(x, n).numpy(), rtol=1e-12)
    ops = ops_of(f, x, n)
    assert ops.count("While") == 1
    np.testing.assert_allclose(f(x, tf.constant(2)).numpy()[2], [0, 0])   # unwritten: zeros


def test_loop_gradients_first_and_second_order():
    f = tf.function(rnn)
    check_gradients(lambda x: f(x, tf.constant(3)), np.arange(6.0).reshape(3, 2) / 4)
    check_gradients(lambda x: f(x, tf.constant(2)), np.arange(6.0).reshape(3, 2) / 4)


@tf.function
def cubes(x, n):
    ta = tf.TensorArray(tf.float32, size=3)
    for i in tf.range(n):
        ta = ta.write(i, x * tf.cast(i, tf.float32))
    return ta.stack()


def test_loop_gradients_are_tensorflows():
    with tf.GradientTape() as t2:
        t2.watch(X)
        with tf.GradientTape() as t1:
            t1.watch(X)
            y = tf.reduce_sum(cubes(X, tf.constant(3)) ** 3)
        g = t1.gradient(y, X)
    np.testing.assert_allclose(g.numpy(), [27.0, 108.0])            # TensorFlow's values
    np.testing.assert_allclose(t2.gradient(g, X).numpy(), [54.0, 108.0])


def test_function_semantics_are_tensorlists():
    """In a function TensorFlow's TensorArray is a TensorList: an unwritten element reads as
    zeros (gradient zeros, not None), a second write overwrites, clear_after_read is ignored,
    and a write not assigned back is lost."""
    @tf.function
    def unwritten(x):
        return tf.TensorArray(tf.float32, 3).write(1, x).read(0)

    @tf.function
    def twice(x):
        ta = tf.TensorArray(tf.float32, 3)
        ta = ta.write(1, x)
        ta = ta.write(1, x * 2)
        return ta.stack()

    @tf.function
    def read_twice(x):
        ta = tf.TensorArray(tf.float32, 2, clear_after_read=True).write(0, x)
        return ta.read(0) + ta.read(0)

    @tf.function
    def not_reassigned(x):
        ta = tf.TensorArray(tf.float32, size=2)
        ta.write(0, x)
        return ta.stack()

    with tf.GradientTape() as t:
        t.watch(X)
        y = unwritten(X)
    np.testing.assert_array_equal(y.numpy(), [0, 0])
    np.testing.assert_array_equal(t.gradient(y, X).numpy(), [0, 0])
    np.testing.assert_array_equal(twice(X).numpy(), [[0, 0], [2, 4], [0, 0]])
    np.testing.assert_array_equal(read_twice(X).numpy(), [2, 4])
    np.testing.assert_array_equal(not_reassigned(X).numpy(), [[0, 0], [0, 0]])


def test_function_errors():
    @tf.function
    def static_oob(x):
        return tf.TensorArray(tf.float32, 3).write(1, x).read(7)

    @tf.function
    def loop_oob(x, n):
        ta = tf.TensorArray(tf.float32, size=2)
        for i in tf.range(n):
            ta = ta.write(i, x)
        return ta.stack()

    @tf.function
    def wrong_shape(x):
        ta = tf.TensorArray(tf.float32, size=2)
        ta = ta.write(0, x)
        return ta.write(1, [1.0, 2.0, 3.0]).stack()

    with pytest.raises(InvalidArgumentError, match="Trying to access element 7 in a list with 3"):
        static_oob(X)
    np.testing.assert_array_equal(loop_oob(X, tf.constant(2)).numpy(), [[1, 2], [1, 2]])
    with pytest.raises(InvalidArgumentError,
                       match="Trying to modify element 2 in a list with 2 elements.*ta.write"):
        loop_oob(X, tf.constant(3))
    with pytest.raises(ValueError, match=r"Inconsistent shapes: saw \(3,\) but expected \(2,\)"
                                         r".*ta.write\(1"):     # TF 2.21's text in a function
        wrong_shape(X)


def test_dynamic_size_with_a_constant_trip_count_is_sized_before_the_loop():
    """Beyond TensorFlow (whose stack has static shape (None, 2) here): the constant trip
    count sizes the tensor before the loop, so its shape stays static and compiles."""
    shapes = []

    @tf.function
    def constant_trips(x):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(3):
            ta = ta.write(i, x * tf.cast(i, tf.float32))
        shapes.append(tuple(ta.stack().shape))
        return ta.stack(), ta.size()

    stacked, size = constant_trips(X)
    np.testing.assert_array_equal(stacked.numpy(), [[0, 0], [1, 2], [2, 4]])
    assert size.numpy() == 3 and shapes == [(3, 2)]


def test_element_shape_learned_from_the_loop_body():
    """No element_shape and no write before the loop: the first write in the body tells it."""
    @tf.function
    def f(x, n):
        ta = tf.TensorArray(tf.float64, size=4)
        for i in tf.range(n):
            ta = ta.write(i, tf.sin(x) * tf.cast(i, tf.float64))
        return ta.stack()

    x = tf.constant([0.5, -1.0, 2.0], tf.float64)
    np.testing.assert_allclose(f(x, tf.constant(3)).numpy(),
                               np.sin(x.numpy()) * np.array([0, 1, 2, 0.0])[:, None])
    check_gradients(lambda x: f(x, tf.constant(3)), x.numpy())


def test_for_over_a_tensor_array_and_its_other_methods_in_a_function():
    def body(x):
        # eagerly a read clears the element (clear_after_read): the later concat would see zeros
        ta = tf.TensorArray(tf.float64, size=3, element_shape=[2], clear_after_read=False)
        ta = ta.unstack(tf.stack([x, x * x, -x]))
        s = tf.zeros_like(x)
        for e in ta:                              # one While over its elements
            s = s + e * e
        other = tf.TensorArray(tf.float64, size=3, clear_after_read=False)
        other = other.scatter([2, 0], tf.stack([x, 2 * x]))
        return (s + tf.reduce_sum(ta.gather([0, 2]), 0) + ta.read(1) + other.read(0)
                + tf.reduce_sum(ta.concat()) + tf.reduce_sum(other.stack(), 0))

    f = tf.function(body)
    x = tf.constant([0.3, -0.8], tf.float64)
    np.testing.assert_allclose(f(x).numpy(), body(x).numpy(), rtol=1e-12)
    assert "While" in ops_of(f, x)
    check_gradients(f, x.numpy())


def test_tensor_array_through_a_converted_if_and_nested_loops():
    def body(x, n):
        ta = tf.TensorArray(tf.float64, size=4, element_shape=[2])
        for i in tf.range(n):
            acc = tf.zeros_like(x)
            for j in tf.range(i + 1):
                acc = acc + x * tf.cast(j, tf.float64)
            if tf.reduce_sum(acc) > 0:
                ta = ta.write(i, acc)
            else:
                ta = ta.write(i, -acc * acc)
        return ta.stack()

    f = tf.function(body)
    x, n = tf.constant([0.3, -0.8], tf.float64), tf.constant(4)
    np.testing.assert_allclose(f(x, n).numpy(), body(x, n).numpy(), rtol=1e-12)
    check_gradients(lambda x: f(x, n), x.numpy())


def test_jacobian_through_a_tensor_array_loop_is_batched():
    x = tf.constant(np.arange(6.0).reshape(3, 2) / 4)
    f = tf.function(rnn)
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x, tf.constant(3))
    jac = t.jacobian(y, x)
    with tf.GradientTape() as t:
        t.watch(x)
        y = rnn(x, tf.constant(3))
    np.testing.assert_allclose(jac.numpy(), t.jacobian(y, x).numpy(), rtol=1e-10)


def test_tensor_array_as_a_tf_while_loop_variable_eagerly_and_in_a_function():
    def run(x):
        ta = tf.TensorArray(tf.float32, size=3, element_shape=[2])
        _, ta = tf.while_loop(lambda i, ta: i < 3,
                              lambda i, ta: (i + 1, ta.write(i, x * tf.cast(i, tf.float32))),
                              [0, ta])
        return ta.stack()
    want = [[0, 0], [1, 2], [2, 4]]
    np.testing.assert_array_equal(run(X).numpy(), want)
    np.testing.assert_array_equal(tf.function(run)(X).numpy(), want)


# -- more of TensorFlow 2.21's answers (asked of TensorFlow, written here as facts) ------------

X4 = tf.constant([1.0, 2.0, 3.0, 4.0])


def _second_order(loss, x):
    """(d loss/dx, d(sum of it)/dx) by nested tapes."""
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = loss(x)
        g = t1.gradient(y, x)
    return g, t2.gradient(g, x)


def _split_loss(x):
    ta = tf.TensorArray(tf.float32, 2).split(x * x * x, [2, 2])
    return tf.reduce_sum(ta.read(0) * ta.read(1))


def _scatter_concat_loss(x):
    ta = tf.TensorArray(tf.float32, 4, clear_after_read=False)
    ta = ta.scatter([3, 0], tf.reshape(x * x, [2, 2]))
    return tf.reduce_sum(ta.stack() ** 3) + tf.reduce_sum(ta.concat())


def _write_read_loss(x):
    return tf.reduce_sum(tf.TensorArray(tf.float32, 3).write(1, x * x).read(1))


def split_second_order(x):
    return _second_order(_split_loss, x)


def scatter_concat_second_order(x):
    return _second_order(_scatter_concat_loss, x)


def write_read_second_order(x):
    return _second_order(_write_read_loss, x)


SECOND_ORDER = [  # TensorFlow 2.21's (first, second) order, eagerly and in tf.function alike
    (split_second_order, [[81, 768, 27, 384], [243, 1344, 99, 768]]),
    (scatter_concat_second_order, [[8, 196, 1464, 6152], [32, 482, 2432, 7682]]),
    (write_read_second_order, [[2, 4, 6, 8], [2, 2, 2, 2]]),
]


@pytest.mark.parametrize("fn,want", SECOND_ORDER, ids=[c[0].__name__ for c in SECOND_ORDER])
def test_second_order_of_methods_eagerly_and_in_a_function_are_tensorflows(fn, want):
    for run in (fn, tf.function(fn)):
        got = run(X4)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-6)


def test_split_size_and_gather_gradients_in_a_function():
    @tf.function
    def split(x):
        ta = tf.TensorArray(tf.float32, 2).split(x, [2, 2])
        return ta.read(1) * 2.0 + ta.read(0), ta.size(), ta.stack()

    @tf.function
    def gathered(x):
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            ta = tf.TensorArray(tf.float32, 4, element_shape=[]).unstack(x * x)
            y = tf.reduce_sum(ta.gather([3, 1]) ** 2) + tf.reduce_sum(ta.stack())
            r = ta.read(2)
        return t.gradient(y, x), t.gradient(r, x)

    first, size, stacked = split(X4)
    assert first.numpy().tolist() == [7.0, 10.0] and int(size) == 2
    assert stacked.numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    g, r = gathered(X4)
    assert g.numpy().tolist() == [2.0, 36.0, 6.0, 264.0] and r.numpy().tolist() == [0, 0, 6, 0]


def test_infer_shape_false_in_a_function_with_elements_of_one_shape():
    """TensorFlow 2.21: [1, 2, 3, 4]."""
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, 2, infer_shape=False).write(0, x[:2]).write(1, x[2:])
        return ta.concat()
    assert f(X4).numpy().tolist() == [1.0, 2.0, 3.0, 4.0]


def test_infer_shape_false_in_a_function_with_elements_of_different_shapes():
    """TensorFlow 2.21: concat [1, 2, 3, 4], read(1) [2, 3, 4], size 2 (and the same for
    split(x, [1, 3]) then concat; read(0) [1]); the gradient of sum(concat * [1, 2, 3, 4]) +
    sum(read(1)) with elements 2 * x[:1] and x[1:] ** 2 is [2, 12, 24, 40]; stack raises
    InvalidArgumentError "PartialTensorShape: Incompatible shapes during merge: [1] vs. [3]"
    (when the program runs; here while tracing, the shapes being known then). As a loop
    variable rewritten with x[:2] twice: concat [1, 2, 2, 3, 4], read(0) [1, 2], read(1)
    [2, 3, 4]; no iteration: [1, 2, 3, 4] and [1]."""
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, 2, infer_shape=False).write(0, x[:1]).write(1, x[1:])
        return ta.concat(), ta.read(1), ta.size()

    @tf.function
    def split(x):
        ta = tf.TensorArray(tf.float32, 2).split(x, [1, 3])
        return ta.concat(), ta.read(0)

    @tf.function
    def grad(x):
        with tf.GradientTape() as t:
            t.watch(x)
            ta = tf.TensorArray(tf.float32, 2, infer_shape=False)
            ta = ta.write(0, x[:1] * 2.0).write(1, x[1:] ** 2)
            y = tf.reduce_sum(ta.concat() * tf.constant([1.0, 2.0, 3.0, 4.0]))
            y = y + tf.reduce_sum(ta.read(1))
        return t.gradient(y, x)

    @tf.function
    def stacked(x):
        ta = tf.TensorArray(tf.float32, 2, infer_shape=False).write(0, x[:1]).write(1, x[1:])
        return ta.stack()

    @tf.function
    def in_a_loop(x, n):
        ta = tf.TensorArray(tf.float32, 2, infer_shape=False).write(0, x[:1]).write(1, x[1:])
        for i in tf.range(n):
            ta = ta.write(0, x[:2])
        return ta.concat(), ta.read(0), ta.read(1)

    c, r, k = f(X4)
    assert c.numpy().tolist() == [1.0, 2.0, 3.0, 4.0] and r.numpy().tolist() == [2, 3, 4]
    assert int(k) == 2
    c, r = split(X4)
    assert c.numpy().tolist() == [1.0, 2.0, 3.0, 4.0] and r.numpy().tolist() == [1.0]
    assert grad(X4).numpy().tolist() == [2.0, 12.0, 24.0, 40.0]
    with pytest.raises(InvalidArgumentError, match=r"Incompatible shapes during merge: \[1\] "
                                                   r"vs\. \[3\].*return ta.stack\(\)"):
        stacked(X4)
    c, r0, r1 = in_a_loop(X4, tf.constant(2))
    assert [c.numpy().tolist(), r0.numpy().tolist(), r1.numpy().tolist()] == \
        [[1.0, 2.0, 2.0, 3.0, 4.0], [1.0, 2.0], [2.0, 3.0, 4.0]]
    c, r0, r1 = in_a_loop(X4, tf.constant(0))
    assert [c.numpy().tolist(), r0.numpy().tolist()] == [[1.0, 2.0, 3.0, 4.0], [1.0]]


def test_errors_inside_a_loop_body_are_tensorflows_and_name_the_line():
    """TensorFlow 2.21: ValueError "Inconsistent shapes: saw (4,) but expected (2,)" while
    tracing; InvalidArgumentError when the program runs for a read past the end ("Trying to
    access element 3 in a list with 3 elements.", or a later element: its iterations run in
    parallel) and for a write of another dtype."""
    @tf.function
    def wrong_shape(x, n):
        ta = tf.TensorArray(tf.float32, 3, element_shape=[2])
        for i in tf.range(n):
            ta = ta.write(i, tf.concat([x, x], 0))
        return ta.stack()

    @tf.function
    def read_past_the_end(x, n):
        ta = tf.TensorArray(tf.float32, 3, element_shape=[2]).unstack(tf.stack([x, x, x]))
        s = tf.zeros([2])
        for i in tf.range(n):
            s = s + ta.read(i)
        return s

    @tf.function
    def wrong_dtype(x, n):
        ta = tf.TensorArray(tf.float32, 3)
        for i in tf.range(n):
            ta = ta.write(i, tf.cast(x, tf.float64))
        return ta.stack()

    with pytest.raises(ValueError, match=r"Inconsistent shapes: saw \(4,\) but expected \(2,\).*"
                                         r"ta = ta.write\(i, tf.concat"):
        wrong_shape(X, tf.constant(2))
    np.testing.assert_array_equal(read_past_the_end(X, tf.constant(3)).numpy(), [3.0, 6.0])
    with pytest.raises(InvalidArgumentError, match=r"Trying to access element 3 in a list with 3 "
                                                   r"elements.*s = s \+ ta.read\(i\)"):
        read_past_the_end(X, tf.constant(5))
    with pytest.raises(InvalidArgumentError, match="TensorArray dtype is float32 but Op is trying "
                                                   "to write dtype float64"):
        wrong_dtype(X, tf.constant(2))


def test_the_jacobian_of_a_tensor_array_loop_is_one_batched_loop():
    from tapeflow.tracer import jacobian as jac
    x = tf.constant(np.arange(6.0).reshape(3, 2) / 4)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.function(rnn)(x, tf.constant(3))
    t.jacobian(y, x)
    assert [v.report().split(": ")[-1] for v in jac.LAST] == ["every op has a batching rule"]

    @tf.function
    def inside(x, n):
        with tf.GradientTape() as t:
            t.watch(x)
            y = rnn(x, n)
        return t.jacobian(y, x)
    text = inside.lower(x, tf.constant(3)).as_text(stages=("jacobians",))
    assert "every op has a batching rule" in text and "looped over the batch" not in text
    with tf.GradientTape() as t:
        t.watch(x)
        y = rnn(x, tf.constant(3))
    np.testing.assert_allclose(inside(x, tf.constant(3)).numpy(), t.jacobian(y, x).numpy(),
                               rtol=1e-10)


# -- dynamic size in a loop of run-time length: the leading dim None -------------------------

def test_dynamic_size_grows_in_a_loop_of_run_time_length():
    """TensorFlow 2.21: stack() has static shape (None, 4) inside the function; n=3 gives
    [[0, 0, 0, 0], [1, 2, 3, 4], [2, 4, 6, 8]] and size 3, n=1 [[0, 0, 0, 0]] and size 1, n=0
    an empty (0, 4) and size 0."""
    shapes = []

    @tf.function
    def grow(x, n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(n):
            ta = ta.write(i, x * tf.cast(i, tf.float32))
        shapes.append(tuple(ta.stack().shape))
        return ta.stack(), ta.size()
    stacked, size = grow(X4, tf.constant(3))
    assert stacked.numpy().tolist() == [[0, 0, 0, 0], [1, 2, 3, 4], [2, 4, 6, 8]] and int(size) == 3
    stacked, size = grow(X4, tf.constant(1))
    assert stacked.numpy().tolist() == [[0, 0, 0, 0]] and int(size) == 1
    stacked, size = grow(X4, tf.constant(0))
    assert stacked.shape == [0, 4] and int(size) == 0
    assert shapes == [(None, 4)]        # one trace: the size is data


def test_dynamic_size_grows_in_a_while_with_a_data_dependent_stop():
    """TensorFlow 2.21: static shape (None, 2); [1, 2] gives the 6 rows [2, 4] ... [64, 128]
    and size 6; [100, 2] stops at once: an empty (0, 2) and size 0."""
    shapes = []

    @tf.function
    def until(x):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        i = tf.constant(0)
        s = x
        while tf.reduce_sum(s) < 100.0:
            s = s * 2.0
            ta = ta.write(i, s)
            i += 1
        shapes.append(tuple(ta.stack().shape))
        return ta.stack(), ta.size()
    r, k = until(tf.constant([1.0, 2.0]))
    assert r.numpy().tolist() == [[2 ** j, 2 ** (j + 1)] for j in range(1, 7)] and int(k) == 6
    r, k = until(tf.constant([100.0, 2.0]))
    assert r.shape == [0, 2] and int(k) == 0
    assert shapes == [(None, 2)]


def test_dynamic_size_in_nested_loops_with_gaps_and_a_size_to_start_from():
    """TensorFlow 2.21 (static shape (None, 2) for each stack): nested loops writing j*n+i give
    the 6 rows; writing at 2*i leaves zeros between (size 5); a TensorArray of size 2 grows
    past it (n=4: 5 rows), and keeps its 2 rows when the loop does not run."""
    @tf.function
    def nested(x, m, n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for j in tf.range(m):
            for i in tf.range(n):
                ta = ta.write(j * n + i, x * tf.cast(10 * j + i, tf.float32))
        return ta.stack(), ta.size()

    @tf.function
    def gaps(x, n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(n):
            ta = ta.write(2 * i, x + tf.cast(i, tf.float32))
        return ta.stack(), ta.size()

    @tf.function
    def presized(x, n):
        ta = tf.TensorArray(tf.float32, size=2, dynamic_size=True)
        ta = ta.write(0, x)
        for i in tf.range(n):
            ta = ta.write(i + 1, x * 2.0)
        return ta.stack(), ta.size()

    s, k = nested(X, tf.constant(2), tf.constant(3))
    assert s.numpy().tolist() == [[0, 0], [1, 2], [2, 4], [10, 20], [11, 22], [12, 24]]
    assert int(k) == 6
    s, k = gaps(X, tf.constant(3))
    assert s.numpy().tolist() == [[1, 2], [0, 0], [2, 3], [0, 0], [3, 4]] and int(k) == 5
    s, k = presized(X, tf.constant(4))
    assert s.numpy().tolist() == [[1, 2]] + [[2, 4]] * 4 and int(k) == 5
    s, k = presized(X, tf.constant(0))
    assert s.numpy().tolist() == [[1, 2], [0, 0]] and int(k) == 2


def test_dynamic_size_written_at_an_index_the_trace_cannot_bound_grows():
    """TensorFlow 2.21: writing at 2*i for i in tf.range(3) (constant bounds) gives 5 rows,
    zeros between; writing at a tensor argument n=3 outside any loop (size 2) gives
    [[0, 0], [0, 0], [0, 0], [1, 2]], static shape (None, 2); a size-2 one with no element
    shape yet, written at i + 2 in a loop of n=1 gives [[0, 0], [0, 0], [1, 2]], of n=0 its
    two zero rows. Writing at the counter of a constant range keeps the static size (test
    above)."""
    shapes = []

    @tf.function
    def gaps3(x):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(3):
            ta = ta.write(2 * i, x)
        return ta.stack()

    @tf.function
    def at(x, n):
        ta = tf.TensorArray(tf.float32, size=2, dynamic_size=True)
        ta = ta.write(n, x)
        shapes.append(tuple(ta.stack().shape))
        return ta.stack()

    @tf.function
    def pre(x, n):
        ta = tf.TensorArray(tf.float32, size=2, dynamic_size=True)
        for i in tf.range(n):
            ta = ta.write(i + 2, x)
        return ta.stack()

    assert pre(X, tf.constant(1)).numpy().tolist() == [[0, 0], [0, 0], [1, 2]]
    assert pre(X, tf.constant(0)).numpy().tolist() == [[0, 0], [0, 0]]
    assert gaps3(X).numpy().tolist() == [[1, 2], [0, 0], [1, 2], [0, 0], [1, 2]]
    assert at(X, tf.constant(3)).numpy().tolist() == [[0, 0], [0, 0], [0, 0], [1, 2]]
    assert at(X, tf.constant(0)).numpy().tolist() == [[1, 2], [0, 0]]
    assert shapes == [(None, 2)]


def test_a_run_time_sized_tensor_array_is_read_by_a_later_loop():
    """TensorFlow 2.21: s = [6, 12], concat [1, 2, 2, 4, 3, 6] (static shape (None,)), gather
    of rows 0 and n-1 [[1, 2], [3, 6]]."""
    shapes = []

    @tf.function
    def reread(x, n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)
        for i in tf.range(n):
            ta = ta.write(i, x * tf.cast(i + 1, tf.float32))
        s = tf.zeros([2])
        for i in tf.range(ta.size()):
            s = s + ta.read(i)
        shapes.append(tuple(ta.concat().shape))
        return s, ta.concat(), ta.gather(tf.stack([0, n - 1]))
    s, c, g = reread(X, tf.constant(3))
    assert s.numpy().tolist() == [6, 12] and c.numpy().tolist() == [1, 2, 2, 4, 3, 6]
    assert g.numpy().tolist() == [[1, 2], [3, 6]] and shapes == [(None,)]


def _sin_rnn(x, n):
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    h = x
    for i in tf.range(n):
        h = tf.sin(h) * x
        ta = ta.write(i, h)
    return tf.reduce_sum(ta.stack() ** 2)


def test_dynamic_size_gradients_inside_and_through_to_second_order():
    """TensorFlow 2.21, x = [0.5, -1]: n=3 gives y 1.799358, dy/dx [0.6566834, -7.3921065],
    d(sum dy/dx)/dx [4.640198, 19.217407], tapes inside the function and through it alike;
    n=0 gives y 0 and zeros (not None) at both orders, inside and through."""
    @tf.function
    def inside(x, n):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t:
                t.watch(x)
                y = _sin_rnn(x, n)
            g = t.gradient(y, x)
        return y, g, t2.gradient(g, x)

    def through(x, n):
        f = tf.function(_sin_rnn)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t:
                t.watch(x)
                y = f(x, n)
            g = t.gradient(y, x)
        return y, g, t2.gradient(g, x)

    x = tf.constant([0.5, -1.0])
    for run in (inside, through):
        y, g, gg = run(x, tf.constant(3))
        np.testing.assert_allclose(y.numpy(), 1.799358, rtol=1e-5)
        np.testing.assert_allclose(g.numpy(), [0.6566834, -7.3921065], rtol=1e-5)
        np.testing.assert_allclose(gg.numpy(), [4.640198, 19.217407], rtol=1e-5)
        y, g, gg = run(x, tf.constant(0))
        assert float(y) == 0.0 and g.numpy().tolist() == [0, 0] and gg.numpy().tolist() == [0, 0]


def test_dynamic_size_gradient_of_a_while_with_a_data_dependent_stop_and_none():
    """TensorFlow 2.21: x = [2, 3] gives y 420 and dy/dx [128, 546]; x = [200, 3] (no
    iteration) y 0 and dy/dx [0, 0]; with w outside the loop, d(sum stack)/[x, w] is
    [[2, 2], None] and d(sum stack + w)/[x, w] [[2, 2], 1]."""
    @tf.function
    def until(x):
        with tf.GradientTape() as t:
            t.watch(x)
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            i = tf.constant(0)
            s = x
            while tf.reduce_sum(s) < 100.0:
                s = s * x
                ta = ta.write(i, s)
                i += 1
            y = tf.reduce_sum(ta.stack())
        return y, t.gradient(y, x)

    @tf.function
    def unused(x, w, n):
        with tf.GradientTape(persistent=True) as t:
            t.watch([x, w])
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            for i in tf.range(n):
                ta = ta.write(i, x)
            y = tf.reduce_sum(ta.stack())
            z = y + w
        return t.gradient(y, [x, w]), t.gradient(z, [x, w])

    y, g = until(tf.constant([2.0, 3.0]))
    assert float(y) == 420.0 and g.numpy().tolist() == [128, 546]
    y, g = until(tf.constant([200.0, 3.0]))
    assert float(y) == 0.0 and g.numpy().tolist() == [0, 0]
    (gx, gw), (zx, zw) = unused(X, tf.constant(1.0), tf.constant(2))
    assert gx.numpy().tolist() == [2, 2] and gw is None
    assert zx.numpy().tolist() == [2, 2] and float(zw) == 1.0


def test_dynamic_size_gradients_equal_the_eager_loop_and_finite_differences():
    x = tf.constant([0.3, -0.7], tf.float64)

    def f(x, n):
        ta = tf.TensorArray(tf.float64, size=0, dynamic_size=True)
        h = x
        for i in tf.range(n):
            h = tf.tanh(h * x + tf.cast(i, tf.float64))
            ta = ta.write(i, h)
        return tf.reduce_sum(ta.stack() * ta.stack()[::-1])

    for n in (1, 4):
        check_gradients(lambda x: tf.function(f)(x, tf.constant(n)), x.numpy(), order=2)
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.function(f)(x, tf.constant(n))
        with tf.GradientTape() as e:
            e.watch(x)
            ye = f(x, tf.constant(n))
        np.testing.assert_allclose(t.gradient(y, x).numpy(), e.gradient(ye, x).numpy(),
                                   rtol=1e-12)


def test_dynamic_size_with_break_beside_a_static_one_and_in_a_called_function():
    """TensorFlow 2.21: the loop breaks after i=2 (the dynamic one has 3 rows, the size-4 one
    keeps a zero row); a helper returning the TensorArray (converted, called from the
    function) gives y 7.67448 and dy/dx [4.54649, -3.78401] for x = [1, 2], n = 3."""
    @tf.function
    def two(x, n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, element_shape=[2])
        tb = tf.TensorArray(tf.float32, size=4)
        for i in tf.range(n):
            ta = ta.write(i, x * tf.cast(i, tf.float32))
            tb = tb.write(i, x + 1.0)
            if tf.reduce_sum(x * tf.cast(i, tf.float32)) > 5.0:
                break
        return ta.stack(), tb.stack()

    def helper(x, n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(n):
            ta = ta.write(i, tf.sin(x) * tf.cast(i, tf.float32))
        return ta

    @tf.function
    def called(x, n):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(helper(x, n).stack() ** 2)
        return y, t.gradient(y, x)

    a, b = two(X, tf.constant(4))
    assert a.numpy().tolist() == [[0, 0], [1, 2], [2, 4]]
    assert b.numpy().tolist() == [[2, 3], [2, 3], [2, 3], [0, 0]]
    y, g = called(X, tf.constant(3))
    np.testing.assert_allclose(y.numpy(), 7.67448, rtol=1e-5)
    np.testing.assert_allclose(g.numpy(), [4.54649, -3.78401], rtol=1e-5)


def test_dynamic_size_in_tf_while_loop_values_and_gradients():
    """TensorFlow 2.21, tf.while_loop with the TensorArray among its loop variables: static
    shape (None, 2), rows [[0, 0], [1, 2], [2, 4]] and size 3; with h = sin(h) * x written
    each step (x = [0.5, -1]): n=3 gives y 1.799358, dy/dx [0.6566834, -7.3921065] and
    d(sum dy/dx)/dx [4.640198, 19.217407]; n=0 gives 0 and zeros at both orders."""
    shapes = []

    @tf.function
    def api(x, n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        _, ta = tf.while_loop(lambda i, ta: i < n,
                              lambda i, ta: (i + 1, ta.write(i, x * tf.cast(i, tf.float32))),
                              [tf.constant(0), ta])
        shapes.append(tuple(ta.stack().shape))
        return ta.stack(), ta.size()

    @tf.function
    def api_grad(x, n):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t:
                t.watch(x)
                ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)

                def body(i, h, ta):
                    h = tf.sin(h) * x
                    return i + 1, h, ta.write(i, h)
                _, _, ta = tf.while_loop(lambda i, h, ta: i < n, body, [tf.constant(0), x, ta])
                y = tf.reduce_sum(ta.stack() ** 2)
            g = t.gradient(y, x)
        return y, g, t2.gradient(g, x)

    s, k = api(X, tf.constant(3))
    assert s.numpy().tolist() == [[0, 0], [1, 2], [2, 4]] and int(k) == 3
    assert shapes == [(None, 2)]
    x = tf.constant([0.5, -1.0])
    y, g, gg = api_grad(x, tf.constant(3))
    np.testing.assert_allclose(y.numpy(), 1.799358, rtol=1e-5)
    np.testing.assert_allclose(g.numpy(), [0.6566834, -7.3921065], rtol=1e-5)
    np.testing.assert_allclose(gg.numpy(), [4.640198, 19.217407], rtol=1e-5)
    y, g, gg = api_grad(x, tf.constant(0))
    assert float(y) == 0.0 and g.numpy().tolist() == [0, 0] and gg.numpy().tolist() == [0, 0]


def _grown_rows(x, n):
    ta = tf.TensorArray(x.dtype, size=0, dynamic_size=True)
    h = tf.zeros_like(tf.gather(x, 0))
    for i in tf.range(n):
        h = tf.tanh(0.5 * h + x[i])
        ta = ta.write(i, h)
    return tf.reduce_sum(ta.stack(), 0)


def test_the_jacobian_of_a_run_time_sized_tensor_array_loop():
    """Through the function (its backward replayed with the forward's concrete values: the
    While's graphs take the grown list as [None, 3]) and inside it: the eager loop's."""
    from tapeflow.tracer import jacobian as jac
    x = tf.constant(np.linspace(-1.0, 1.0, 12).reshape(4, 3))
    n = tf.constant(3)
    with tf.GradientTape() as t:
        t.watch(x)
        y = _grown_rows(x, n)
    want = t.jacobian(y, x).numpy()
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.function(_grown_rows)(x, n)
    np.testing.assert_allclose(t.jacobian(y, x).numpy(), want, rtol=1e-12, atol=1e-15)
    assert [v.report().split(": ")[-1] for v in jac.LAST] == ["every op has a batching rule"]

    @tf.function
    def inside(x, n):
        with tf.GradientTape() as t:
            t.watch(x)
            y = _grown_rows(x, n)
        return t.jacobian(y, x)
    np.testing.assert_allclose(inside(x, n).numpy(), want, rtol=1e-12, atol=1e-15)


def test_enumerate_and_zip_over_a_tensor_array_in_a_function():
    """Beyond TensorFlow (its TensorArray is not iterable): each loop is one While node."""
    def f(x, n):
        ta = tf.TensorArray(tf.float64, size=3, element_shape=[2]).unstack(x)
        s = tf.zeros([2], tf.float64)
        for k, e in enumerate(ta, start=1):
            s = s + e * tf.cast(k, tf.float64)
        for i, e in zip(tf.range(n), ta):
            s = s - e * tf.cast(i, tf.float64)
        return s
    x = tf.constant(np.arange(6.0).reshape(3, 2))
    for n in (0, 2, 5):
        np.testing.assert_array_equal(tf.function(f)(x, tf.constant(n)).numpy(),
                                      f(x, tf.constant(n)).numpy())
    assert ops_of(tf.function(f), x, tf.constant(2)).count("While") == 2
