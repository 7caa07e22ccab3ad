"""tf.debugging: the checks' messages eagerly (TensorFlow 2.21's, asked of TensorFlow), and
inside functions as Assert/CheckNumerics ops that check when the program runs, interpreted
and compiled (no interpreter fallback), with TensorFlow's graph text "assertion failed: ..."."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ops import debug as debug_ops
from tapeflow.runtime.kernels.debug import summarize_value

IAE = tf.errors.InvalidArgumentError
X, Y = [1.0, 2.0, 3.0], [1.0, 5.0, 3.0]
d = debug_ops   # tapeflow.ops.debug: the Assert/CheckNumerics ops' functions

# (call, error type, message) from TF 2.21, eagerly
EAGER = [
    (lambda: d.assert_equal(tf.constant(X), tf.constant(Y)), IAE,
     "Condition x == y did not hold.\nIndices of first 1 different values:\n[[1]]\n"
     "Corresponding x values:\n[2.]\nCorresponding y values:\n[5.]\nFirst 3 elements of x:\n"
     "[1. 2. 3.]\nFirst 3 elements of y:\n[1. 5. 3.]"),
    (lambda: d.assert_equal(tf.constant(X), tf.constant(Y), message="hey", summarize=1), IAE,
     "hey\nCondition x == y did not hold.\nIndices of first 1 different values:\n[[1]]\n"
     "Corresponding x values:\n[2.]\nCorresponding y values:\n[5.]\nFirst 1 elements of x:\n"
     "[1.]\nFirst 1 elements of y:\n[1.]"),
    (lambda: d.assert_less(tf.constant(X), tf.constant(Y)), IAE,
     "Condition x < y did not hold.\nIndices of first 2 different values:\n[[0]\n [2]]\n"
     "Corresponding x values:\n[1. 3.]\nCorresponding y values:\n[1. 3.]\nFirst 3 elements of "
     "x:\n[1. 2. 3.]\nFirst 3 elements of y:\n[1. 5. 3.]"),
    (lambda: d.assert_greater_equal(tf.constant(X), tf.constant(Y)), IAE,
     "Condition x >= y did not hold.\nIndices of first 1 different values:\n[[1]]\n"
     "Corresponding x values:\n[2.]\nCorresponding y values:\n[5.]\nFirst 3 elements of x:\n"
     "[1. 2. 3.]\nFirst 3 elements of y:\n[1. 5. 3.]"),
    (lambda: d.assert_none_equal(tf.constant(X), tf.constant(Y)), IAE,
     "Condition x != y did not hold.\nIndices of first 2 different values:\n[[0]\n [2]]\n"
     "Corresponding x values:\n[1. 3.]\nCorresponding y values:\n[1. 3.]\nFirst 3 elements of "
     "x:\n[1. 2. 3.]\nFirst 3 elements of y:\n[1. 5. 3.]"),
    (lambda: d.assert_greater(tf.constant(X), tf.constant(Y)), IAE,
     "Condition x > y did not hold.\nIndices of first 3 different values:\n[[0]\n [1]\n [2]]\n"
     "Corresponding x values:\n[1. 2. 3.]\nCorresponding y values:\n[1. 5. 3.]\nFirst 3 "
     "elements of x:\n[1. 2. 3.]\nFirst 3 elements of y:\n[1. 5. 3.]"),
    (lambda: d.assert_equal(tf.range(30), tf.range(30) + 1), IAE,
     "Condition x == y did not hold.\nIndices of first 3 different values:\n[[0]\n [1]\n [2]]\n"
     "Corresponding x values:\n[0 1 2]\nCorresponding y values:\n[1 2 3]\nFirst 3 elements of "
     "x:\n[0 1 2]\nFirst 3 elements of y:\n[1 2 3]"),
    (lambda: d.assert_positive(tf.constant([1, -1])), IAE,
     "\nCondition x > 0 did not hold element-wise:\nx (shape=(2,) dtype=int32) = \n['1', '-1']"),
    (lambda: d.assert_negative(tf.constant([1, -1])), IAE,
     "\nCondition x < 0 did not hold element-wise:\nx (shape=(2,) dtype=int32) = \n['1', '-1']"),
    (lambda: d.assert_non_negative(tf.constant([1, -1])), IAE,
     "\nCondition x >= 0 did not hold element-wise:\nx (shape=(2,) dtype=int32) = \n['1', '-1']"),
    (lambda: d.assert_non_positive(tf.constant([1, -1])), IAE,
     "\nCondition x <= 0 did not hold element-wise:x (shape=(2,) dtype=int32) = \n['1', '-1']"),
    (lambda: d.assert_near(tf.constant(X), tf.constant(Y)), IAE,
     "Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: b''\n"
     "b'x and y not equal to tolerance rtol = tf.Tensor(1.1920929e-06, shape=(), dtype=float32), "
     "atol = tf.Tensor(1.1920929e-06, shape=(), dtype=float32)'\nb'x (shape=(3,) dtype=float32) "
     "= '\n1.0, 2.0, 3.0\nb'y (shape=(3,) dtype=float32) = '\n1.0, 5.0, 3.0"),
    (lambda: d.Assert(False, [tf.constant(X), "hi", 3]), IAE,
     "Expected 'False' to be true. Summarized data: 1.0, 2.0, 3.0\nb'hi'\n3"),
    (lambda: d.Assert(tf.constant(False), [tf.constant(X), "hi", 3], summarize=2), IAE,
     "Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: 1.0, 2.0, "
     "...\nb'hi'\n3"),
    (lambda: d.assert_integer(tf.constant(X)), TypeError,
     "Expected \"x\" to be integer type.  Found: tensor of dtype <dtype: 'float32'>"),
    (lambda: d.assert_rank(tf.constant(X), 2), ValueError,
     "Tensor  must have rank 2.  Received rank 1, shape (3,)"),
    (lambda: d.assert_rank(tf.constant(X), 2, message="m"), ValueError,
     "m.  Tensor  must have rank 2.  Received rank 1, shape (3,)"),
    (lambda: d.assert_rank_at_least(tf.constant(X), 2), ValueError,
     "Tensor  must have rank at least 2.  Received rank 1, shape (3,)"),
    (lambda: d.assert_rank_in(tf.constant(X), [0, 2]), ValueError,
     "Tensor  must have rank in (0, 2).  Received rank 1, shape (3,)"),
    (lambda: d.assert_scalar(tf.constant(X)), ValueError, "Expected scalar shape, saw shape: (3,)."),
    (lambda: d.assert_type(tf.constant(X), tf.int32), TypeError,
     "tensor must be of type tf.int32; got tf.float32"),
    (lambda: d.assert_same_float_dtype([tf.constant(X), tf.constant([1.0], tf.float64)]),
     ValueError, "tf.Tensor([1.], shape=(1,), dtype=float64), type=<dtype: 'float64'>, must be "
     "of the same type (<dtype: 'float32'>) as tf.Tensor([1. 2. 3.], shape=(3,), "
     "dtype=float32)."),
    (lambda: d.assert_same_float_dtype([tf.constant([1])]), ValueError,
     "Expected floating point type, got <dtype: 'int32'>."),
    (lambda: d.assert_proper_iterable("abc"), TypeError,
     "Expected argument \"values\" to be a \"proper\" iterable.  Found: <class 'str'>"),
    (lambda: d.assert_shapes([(tf.constant(X), ("N",)), (tf.ones([2, 3]), ("N", "M"))]),
     ValueError, "Specified by tensor shape=(3,) dtype=float32 dimension 0.  Tensor shape=(2, 3) "
     "dtype=float32 dimension 0 must have size 3.  Received size 2, shape (2, 3)"),
    (lambda: d.assert_shapes([(tf.constant(X), (2,))]), ValueError,
     "Specified explicitly.  Tensor shape=(3,) dtype=float32 dimension 0 must have size 2.  "
     "Received size 3, shape (3,)"),
    (lambda: d.assert_shapes([(tf.constant(X), ())]), ValueError,
     "Specified explicitly.  Tensor shape=(3,) dtype=float32 dimension 0 must have size 1.  "
     "Received size 3, shape (3,)"),
]


@pytest.mark.parametrize("i", range(len(EAGER)))
def test_eager_messages_are_tensorflows(i):
    call, kind, message = EAGER[i]
    with pytest.raises(kind) as e:
        call()
    assert str(e.value) == message


def test_passing_checks_and_answers():
    x = tf.constant(X)
    for call in (lambda: d.assert_equal(x, x), lambda: d.assert_less(x, x + 1),
                 lambda: d.assert_near(x, x + 1e-7), lambda: d.Assert(True, [x]),
                 lambda: d.assert_rank(x, 1), lambda: d.assert_scalar(tf.constant(1.0)),
                 lambda: d.assert_integer(tf.constant([1])), lambda: d.assert_type(x, tf.float32),
                 lambda: d.assert_proper_iterable([1]),
                 lambda: d.assert_shapes([(x, ("N",)), (tf.ones([3, 3]), ("N", 3))])):
        assert call() is None
    assert d.assert_same_float_dtype([x, x]) == tf.float32
    assert [d.is_numeric_tensor(v) for v in (x, tf.constant([True]), np.ones(2))] == \
        [True, False, False]
    np.testing.assert_array_equal(d.check_numerics(x, "m").numpy(), X)


@pytest.mark.parametrize("values, problem", [([1.0, np.nan], "NaN"), ([1.0, np.inf], "Inf"),
                                             ([np.inf, np.nan], "Inf and NaN")])
def test_check_numerics_eagerly(values, problem):
    with pytest.raises(IAE, match=f"boom : Tensor had {problem} values"):
        d.check_numerics(tf.constant(values), "boom")
    with pytest.raises(IAE, match=f"boom : Tensor had {problem} values"):
        d.assert_all_finite(tf.constant(values), "boom")


def test_check_numerics_takes_floats_only():
    with pytest.raises(IAE, match="Value for attr 'T' of int32 is not in the list"):
        d.check_numerics(tf.constant([1, 2]), "boom")


# TF 2.21: Tensor::SummarizeValue as tf.debugging.Assert prints it in a function
SUMMARIES = [
    (np.array([1.5, 2.25, 1e-8, 1e10, 0.1], np.float32), 3, "1.5 2.25 1e-08..."),
    (np.array([1.5, 2.25, 1e-8, 1e10, 0.1], np.float32), 10, "1.5 2.25 1e-08 1e+10 0.1"),
    (np.array([1.5, 2.25, 1e-8, 1e10, 0.1]), -1, "1.5 2.25 1e-08 10000000000 0.1"),
    (np.array([[1, 2], [3, 4]], np.int32), 3, "[1 2][3...]..."),
    (np.int32(7), 3, "7"), (np.array([True, False]), 3, "1 0"),
    (np.array([[1, 2, 3], [3, 4, 5]], np.int32), 4, "[1 2 3][3...]..."),
    (np.arange(24).reshape(2, 3, 4), 5, "[[0 1 2 3][4...]]..."),
    (np.zeros((0, 3)), 3, ""),
    (np.array([np.nan, np.inf, -np.inf, -0.0, 123456789.0], np.float32), 5,
     "nan inf -inf -0 123456792"),
]


@pytest.mark.parametrize("i", range(len(SUMMARIES)))
def test_summaries_are_tensorflows(i):
    value, summarize, text = SUMMARIES[i]
    assert summarize_value(value, summarize) == text


def _checked(a, b):
    d.assert_shapes([(a, ("N",)), (b, ("N",))])
    d.assert_less(a, b, message="in fn")
    d.assert_positive(a - 2.0)
    d.Assert(tf.reduce_all(a < 10.0), [a, "big {x}", tf.shape(a)], summarize=2)
    return d.check_numerics(tf.math.log(a - 2.5), "log of a") * 2.0


SIG = [tf.TensorSpec([None], tf.float32)] * 2
FAILURES = [  # (a, b, message): TF 2.21's text after "assertion failed: " (names are ours)
    ([3.0, 4.0], [1.0, 6.0], "Assert: assertion failed: [in fn] [Condition x < y did not hold "
     "element-wise:] [x (a:0) = ] [3 4] [y (b:0) = ] [1 6]"),
    ([1.0, 4.0], [5.0, 6.0], "Assert: assertion failed: [] [Condition x > 0 did not hold "
     "element-wise:] [x (Sub:0) = ] [-1 2]"),
    ([11.0, 12.0, 13.0], [20.0, 20.0, 20.0], "Assert: assertion failed: [11 12...] [big {x}] [3]"),
    ([3.0, 2.25], [5.0, 5.0], "CheckNumerics: log of a : Tensor had NaN values"),
    ([3.0, 4.0], [7.0], "Assert: assertion failed: [] [Specified by tensor a:0 "
     "dimension 0] [Tensor b:0 dimension] [0] [must have size] [2] [Received shape: ] [1]"),
]


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_checks_run_inside_functions(backend):
    tf.set_backend(backend)
    f = tf.function(_checked, input_signature=SIG, jit_compile=backend == "numba")
    got = f(tf.constant([3.0, 4.0]), tf.constant([5.0, 6.0]))
    np.testing.assert_allclose(got.numpy(), 2 * np.log([0.5, 1.5]), rtol=1e-6)
    for a, b, message in FAILURES:
        with pytest.raises(IAE) as e:
            f(tf.constant(a), tf.constant(b))
        assert str(e.value).startswith(message + "; inputs: ")
        assert "test_debugging.py" in str(e.value)           # the user's line
    if backend == "numba":
        programs = f.get_concrete_function()._specialized.values()
        assert programs and all(p.fallback is None for p in programs)


def test_check_numerics_gradient_is_checked_too():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = d.check_numerics(x * 2.0, "fwd") * np.inf
    with pytest.raises(IAE, match="Not a number \\(NaN\\) or infinity \\(Inf\\) values detected "
                                  "in gradient. fwd : Tensor had Inf values"):
        tape.gradient(y, x)


def test_vectorized_checks():
    out = tf.vectorized_map(lambda r: d.check_numerics(r * 2.0, "v"), tf.ones([3, 2]))
    np.testing.assert_array_equal(out.numpy(), np.full((3, 2), 2.0))
    with pytest.raises(IAE, match="v : Tensor had Inf values"):
        tf.vectorized_map(lambda r: d.check_numerics(r / 0.0, "v"), tf.ones([3, 2]))

    @tf.function
    def f(x):
        return tf.vectorized_map(lambda r: (d.Assert(tf.reduce_all(r < 2.0), [r]), r * 3.0)[1], x)

    np.testing.assert_array_equal(f(tf.ones([2, 2])).numpy(), np.full((2, 2), 3.0))
    with pytest.raises(IAE, match="assertion failed"):
        f(tf.constant([[1.0, 1.0], [5.0, 1.0]]))


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_enable_check_numerics_names_the_op_and_the_line(backend):
    tf.set_backend(backend)
    x = tf.constant([0.0, 1.0])

    def f(a):
        b = a * 2.0
        return tf.math.log(b) + 1.0   # the line named

    d.enable_check_numerics()
    try:
        with pytest.raises(IAE) as e:
            tf.math.log(x)
        # TF 2.21's eager text, then the user's line
        assert str(e.value).startswith(
            "\n\n!!! Detected Infinity or NaN in output 0 of eagerly-executing op \"Log\" (# of "
            "outputs: 1) !!!\n  dtype: <dtype: 'float32'>\n  shape: (2,)\n  # of -Inf elements: "
            "1\n\n  Input tensor: tf.Tensor([0. 1.], shape=(2,), dtype=float32)\n\n : Tensor had "
            "-Inf values [at ")
        assert "tf.math.log(x)" in str(e.value)
        g = tf.function(f, jit_compile=backend == "numba")
        with pytest.raises(IAE) as e:
            g(x)
        text = str(e.value)
        assert "of graph op \"Log\"" in text and "Tensor had Inf values" in text
        assert "return tf.math.log(b) + 1.0   # the line named" in text
        np.testing.assert_allclose(g(tf.constant([1.0, 2.0])).numpy(), np.log([2.0, 4.0]) + 1,
                                   rtol=1e-6)
    finally:
        d.disable_check_numerics()
    np.testing.assert_array_equal(tf.math.log(x).numpy(), [-np.inf, 0.0])
