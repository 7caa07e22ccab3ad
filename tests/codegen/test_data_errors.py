"""Ops that reject their data raise the same error eagerly, on the interpreter and compiled.

For every op whose kernel can fail on values (not shapes): an index out of range, integer
division by zero, a negative integer power, a singular or indefinite matrix. TensorFlow
raises ``InvalidArgumentError`` naming the op in each case; so must a ``tapeflow.function``
on either backend, never a bare IndexError, a LinAlgError or a Numba traceback.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tapeflow.tracer import engine as backend

P = tf.constant([1.0, 2.0, 3.0])
I = tf.constant([0, 5])        # 5 is out of range for every length-3 axis below

# name -> (function of (p, i), what the message must say)
CASES = {
    "gather": (lambda p, i: tf.gather(p, i), r"GatherV2: indices\[1\] = 5 is not in \[0, 3\)"),
    "gather_axis1": (lambda p, i: tf.gather(tf.reshape(tf.concat([p, p], 0), [2, 3]), i, axis=1),
                     r"GatherV2: indices\[1\] = 5 is not in \[0, 3\)"),
    "gather_negative": (lambda p, i: tf.gather(p, i - 10),
                        r"GatherV2: indices\[0\] = -10 is not in \[0, 3\)"),
    "unsorted_segment_sum": (lambda p, i: tf.math.unsorted_segment_sum(p[:2], i, 3),
                             r"UnsortedSegmentSum: segment_ids\[1\] = 5 is out of range \[0, 3\)"),
    "floordiv": (lambda p, i: tf.math.floordiv(i, i - i), "FloorDiv: Integer division by zero"),
    "floormod": (lambda p, i: tf.math.floormod(i, i - i), "FloorMod: Integer division by zero"),
    "pow": (lambda p, i: tf.pow(i, i - 10), "Pow: Integers to negative integer powers"),
    "inv": (lambda p, i: tf.linalg.inv(tf.zeros([2, 2]) * p[0]), "MatrixInverse: Singular matrix"),
    "solve": (lambda p, i: tf.linalg.solve(tf.zeros([2, 2]) * p[0], tf.ones([2, 1])),
              "MatrixSolve: Singular matrix"),
    # (Cholesky of a matrix that is not positive definite is no error in TF 2.21: NaN, as
    # tests/ops/test_linalg_gp.py checks)
}


@pytest.fixture(params=["numpy", "numba"])
def engine(request):
    old = backend.get_backend()
    tf.set_backend(request.param)
    yield request.param
    tf.set_backend(old)


def _raised(call):
    with pytest.raises(Exception) as info:  # noqa: PT011 - the type is what is compared
        call()
    return info.value


@pytest.mark.parametrize("name", sorted(CASES))
def test_function_raises_what_eager_raises(name, engine):
    fn, message = CASES[name]
    eager = _raised(lambda: fn(P, I))
    assert type(eager) is InvalidArgumentError
    traced = _raised(lambda: tf.function(fn)(P, I))
    assert type(traced) is type(eager)
    assert _body(traced) == _body(eager)
    assert traced.__cause__ is None and traced.__suppress_context__   # no Numba traceback chained
    with pytest.raises(InvalidArgumentError, match=message):
        raise traced


def _body(err):
    """The message without the user's line (eager names the op's line, a function its call)."""
    return str(err).split(" [at ")[0]


def test_the_error_names_the_line_calling_the_function(engine):
    f = tf.function(lambda p, i: tf.gather(p, i))
    err = _raised(lambda: f(P, I))
    assert f"[at {__file__}:" in str(err) and str(err).endswith("_raised(lambda: f(P, I))]")


def _scaled_gather(p, i):
    q = p * 2.0
    return tf.gather(q, i)      # the op that fails


def test_the_error_names_the_line_inside_the_function_that_traced_the_op(engine):
    """Each traced node keeps its user line: the message names it, then the calling line."""
    line = _scaled_gather.__code__.co_firstlineno + 2
    err = _raised(lambda: tf.function(_scaled_gather)(P, I))
    assert (f"[at {__file__}:{line}: return tf.gather(q, i)      # the op that fails, "
            f"called from {__file__}:") in str(err)
    assert _body(err) == _body(_raised(lambda: _scaled_gather(P, I)))


def test_a_compiled_scalar_program_reports_through_its_fast_path(engine):
    """All-scalar programs are called through Numba's entry point once warm (tracer/fastcall.py)."""
    f = tf.function(lambda a, b: tf.math.floordiv(a, b))
    a, b, zero = tf.constant(7), tf.constant(2), tf.constant(0)
    assert int(f(a, b)) == 3 and int(f(a, b)) == 3          # warm: the generated fast caller
    if engine == "numba":
        assert "failed(" in f.get_concrete_function(a, b).fast.__source__   # via the entry point
    with pytest.raises(InvalidArgumentError, match="FloorDiv: Integer division by zero"):
        f(a, zero)
    assert int(f(-a, b)) == -4                                # the function still works afterwards


def test_a_forward_program_under_a_tape_and_nested_control_flow(engine):
    w = tf.Variable([1.0, 2.0, 3.0])

    @tf.function
    def f(i):
        return tf.cond(tf.reduce_sum(w) > 0, lambda: tf.reduce_sum(tf.gather(w, i)),
                       lambda: tf.constant(0.0))

    with tf.GradientTape() as tape:
        y = f(tf.constant([2, 0]))
    np.testing.assert_array_equal(tape.gradient(y, w).numpy(), [1.0, 0.0, 1.0])
    with tf.GradientTape():
        with pytest.raises(InvalidArgumentError, match=r"GatherV2: indices\[0\] = 3 is not in"):
            f(tf.constant([3, 0]))
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0, 3.0])      # no state lost


def test_sparse_cross_entropy_labels_out_of_range(engine):
    """Eagerly the labels are checked before any op runs (TF's message); traced, gathering them
    from range(depth) is the check, where a one-hot row of zeros would silently give a 0 loss."""
    def xent(labels, p):
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, tf.stack([p, p * p]))

    with pytest.raises(InvalidArgumentError, match=r"label value of 5 which is outside the valid range "
                                                   r"of \[0, 3\)"):
        xent(I, P)
    f = tf.function(xent)
    with pytest.raises(InvalidArgumentError, match=r"GatherV2: indices\[1\] = 5 is not in \[0, 3\)"):
        f(I, P)
    good = tf.constant([0, 2])
    logits = np.stack([P.numpy(), P.numpy() ** 2]).astype(np.float64)
    want = -(logits - np.log(np.exp(logits).sum(-1, keepdims=True)))[[0, 1], [0, 2]]
    np.testing.assert_allclose(f(good, P).numpy(), want, rtol=1e-5)


def _last(x, n):
    for i in tf.range(n):
        t = x * 2.0
    return t                                        # noqa: F821


def test_a_loop_that_ran_zero_times_leaves_a_name_it_defines_unset(engine):
    """CheckTripCount (TensorFlow 2.21's Assert "loop must iterate at least once to initialize
    t") raises when the compiled program runs, naming the loop's line; with iterations, ``t``
    is its last value."""
    f = tf.function(_last)
    np.testing.assert_array_equal(f(P, tf.constant(2)).numpy(), [2.0, 4.0, 6.0])
    err = _raised(lambda: f(P, tf.constant(0)))
    assert type(err) is InvalidArgumentError
    assert err.__cause__ is None and err.__suppress_context__
    line = _last.__code__.co_firstlineno + 1
    assert str(err).startswith("CheckTripCount: loop must iterate at least once to initialize t")
    assert f"[at {__file__}:{line}: for i in tf.range(n):, called from" in str(err)
    np.testing.assert_array_equal(f(P, tf.constant(1)).numpy(), [2.0, 4.0, 6.0])


def _read(x, i):
    ta = tf.TensorArray(tf.float32, size=3).unstack(x)
    return ta.read(i)


def test_a_tensor_array_read_out_of_range_has_tensorflows_text(engine):
    """TensorFlow 2.21, in a function: InvalidArgumentError "Trying to access element 5 in a
    list with 3 elements." (TensorListGetItem)."""
    f = tf.function(_read)
    assert float(f(P, tf.constant(2))) == 3.0
    err = _raised(lambda: f(P, tf.constant(5)))
    assert type(err) is InvalidArgumentError
    assert err.__cause__ is None and err.__suppress_context__
    assert str(err).startswith("TensorListGetItem: Trying to access element 5 in a list with 3 "
                               "elements.")
    line = _read.__code__.co_firstlineno + 2
    assert f"[at {__file__}:{line}: return ta.read(i), called from" in str(err)
