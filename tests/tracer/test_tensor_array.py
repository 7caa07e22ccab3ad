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
from tapeflow.tracer.symbolic import TracingError

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


def test_dynamic_size_takes_a_static_trip_count_and_else_asks_for_a_size():
    @tf.function
    def constant_trips(x):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(3):
            ta = ta.write(i, x * tf.cast(i, tf.float32))
        return ta.stack(), ta.size()

    @tf.function
    def unknown_trips(x, n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(n):
            ta = ta.write(i, x)
        return ta.stack()

    stacked, size = constant_trips(X)
    np.testing.assert_array_equal(stacked.numpy(), [[0, 0], [1, 2], [2, 4]])
    assert size.numpy() == 3
    with pytest.raises(TracingError, match="'ta' has size 0 .* pass size="):
        unknown_trips(X, tf.constant(3))


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


def split_second_order(x):
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            ta = tf.TensorArray(tf.float32, 2).split(x * x * x, [2, 2])
            y = tf.reduce_sum(ta.read(0) * ta.read(1))
        g = t1.gradient(y, x)
    return g, t2.gradient(g, x)


def scatter_concat_second_order(x):
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            ta = tf.TensorArray(tf.float32, 4, clear_after_read=False)
            ta = ta.scatter([3, 0], tf.reshape(x * x, [2, 2]))
            y = tf.reduce_sum(ta.stack() ** 3) + tf.reduce_sum(ta.concat())
        g = t1.gradient(y, x)
    return g, t2.gradient(g, x)


def write_read_second_order(x):
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = tf.reduce_sum(tf.TensorArray(tf.float32, 3).write(1, x * x).read(1))
        g = t1.gradient(y, x)
    return g, t2.gradient(g, x)


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


@pytest.mark.xfail(strict=True, raises=ValueError, reason="a traced TensorArray is one dense "
                   "tensor: its elements share one shape (no ragged TensorList)")
def test_infer_shape_false_in_a_function_with_elements_of_different_shapes():
    """TensorFlow 2.21: [1, 2, 3, 4] (and the same for split(x, [1, 3]) then concat)."""
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, 2, infer_shape=False).write(0, x[:1]).write(1, x[1:])
        return ta.concat()
    assert f(X4).numpy().tolist() == [1.0, 2.0, 3.0, 4.0]


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


@pytest.mark.xfail(strict=True, raises=TracingError, reason="a traced TensorArray has a static "
                   "size: it cannot grow in a loop whose trip count is known only at run time")
def test_dynamic_size_grows_in_a_loop_of_run_time_length():
    """TensorFlow 2.21: [[0, 0, 0, 0], [1, 2, 3, 4], [2, 4, 6, 8]] and size 3."""
    @tf.function
    def grow(x, n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(n):
            ta = ta.write(i, x * tf.cast(i, tf.float32))
        return ta.stack(), ta.size()
    stacked, size = grow(X4, tf.constant(3))
    assert stacked.numpy().tolist() == [[0, 0, 0, 0], [1, 2, 3, 4], [2, 4, 6, 8]] and int(size) == 3


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
