"""Python ``for`` inside tapeflow.function: over tf.range (tensor or Python bounds, negative
steps), a tensor's rows, enumerate/zip of those -> one While node; Python iterables unrolled.
Each function is checked against the same code run eagerly."""
import inspect

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.tracer.context import DecisionLimitError


def ops_of(fn, *args):
    return [node.op for node in fn.get_concrete_function(*args).graph.nodes]


def same_as_eager(fn, *args):
    got = tf.function(fn)(*args)
    want = fn(*args)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12)
    return got


def range_sum(x, n):
    s = tf.zeros_like(x)
    for i in tf.range(n):
        s = s + x * tf.cast(i, x.dtype)
    return s


@pytest.mark.parametrize("n", [0, 1, 5])
def test_for_over_tf_range_of_a_tensor_is_one_while_node(n):
    x, nt = tf.constant([1.0, 2.0]), tf.constant(n)
    same_as_eager(range_sum, x, nt)
    assert ops_of(tf.function(range_sum), x, nt).count("While") == 1


def test_for_over_range_of_a_shape_and_gradient():
    def f(x):
        s = tf.constant(0.0, dtype=x.dtype)
        for i in tf.range(tf.shape(x)[0]):
            s = s + tf.reduce_sum(tf.gather(x, i) ** 2) * tf.cast(i + 1, x.dtype)
        return s
    x = tf.constant(np.arange(6.0).reshape(3, 2))
    same_as_eager(f, x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.function(f)(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(),
                               2 * x.numpy() * np.arange(1, 4)[:, None])


@pytest.mark.parametrize("start,limit,delta", [(5, 0, -2), (0, 7, 3), (2, 2, 1), (0, 5, -1),
                                               (10, -3, -4)])
def test_for_over_tf_range_with_tensor_bounds_and_negative_steps(start, limit, delta):
    def f(a, b, d):
        out = tf.constant(0)
        count = 0
        for i in tf.range(a, b, d):
            out = out * 10 + i
            count += 1
        return out * 100 + count
    args = [tf.constant(v) for v in (start, limit, delta)]
    want = 0
    for i in range(start, limit, delta):
        want = want * 10 + i
    assert int(tf.function(f)(*args)) == want * 100 + len(range(start, limit, delta))
    assert int(f(*args)) == want * 100 + len(range(start, limit, delta))
    assert ops_of(tf.function(f), *args).count("While") == 1     # one trace for every bound


def test_python_bounds_of_tf_range_make_a_while_too_and_builtin_range_of_a_tensor():
    def f(x, n):
        s = x
        for i in tf.range(4):
            s = s * 2.0
        for i in range(n):
            s = s + 1.0
        return s
    x, n = tf.constant([1.0]), tf.constant(3)
    assert float(tf.function(f)(x, n)[0]) == 19.0
    assert ops_of(tf.function(f), x, n).count("While") == 2


def test_python_range_stays_an_unrolled_python_loop():
    def f(x):
        for i in range(3):
            x = x * 2.0 + i
        return x
    x = tf.constant([1.0])
    same_as_eager(f, x)
    assert "While" not in ops_of(tf.function(f), x)


def test_for_over_rows_enumerate_zip_with_break_continue_else():
    def f(x, n):
        total = tf.constant(0.0, dtype=x.dtype)
        for k, row in enumerate(x):
            if k == 1:
                continue
            total = total + tf.reduce_sum(row) * tf.cast(k, x.dtype)
        for i, row in zip(tf.range(n), x):
            if tf.reduce_sum(row) > 10.0:
                break
            total = total + tf.cast(i, x.dtype)
        else:
            total = total + 1000.0
        for row in x:
            total = total - tf.reduce_max(row)
        return total
    x = tf.constant(np.arange(12.0).reshape(4, 3))
    for n in (1, 3, 10):
        same_as_eager(f, x, tf.constant(n))
    assert ops_of(tf.function(f), x, tf.constant(3)).count("While") == 3


def test_for_over_a_python_list_with_break_and_else_keeps_python_semantics():
    def f(x):
        seen = []
        for w in [1.0, 2.0, 3.0, 4.0]:
            if w > 2.5:
                break
            seen.append(w)
            x = x * w
        else:
            x = x * 0.0
        for a, b in [(1, 2), (3, 4)]:
            x = x + a * b
        return x, len(seen)
    x = tf.constant([1.5])
    got, n = tf.function(f)(x)
    assert float(got[0]) == 1.5 * 2.0 + 14 and n == 2


def test_gradient_of_a_for_loop_matches_the_eager_loop_second_order_too():
    def f(x, w):
        h = x
        for t in tf.range(6):
            h = tf.tanh(h * w + tf.cast(t, x.dtype) * 0.1)
        return tf.reduce_sum(h * h)
    x, w = tf.constant([0.3, -0.2]), tf.constant([0.9, 1.1])

    def grads(fn):
        with tf.GradientTape(persistent=True) as outer:
            outer.watch([x, w])
            with tf.GradientTape() as inner:
                inner.watch([x, w])
                y = fn(x, w)
            g = inner.gradient(y, [x, w])
            s = tf.reduce_sum(g[0]) + tf.reduce_sum(g[1])
        return g + outer.gradient(s, [x, w])
    for got, want in zip(grads(tf.function(f)), grads(f), strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)


# -- errors, and what TensorFlow 2.21 answers (asked of TensorFlow, written here as facts) -------

def line_of(fn, text):
    """'file:line' of the first line of ``fn``'s source containing ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return f"{__file__}:{first + next(k for k, s in enumerate(lines) if text in s)}"


def dtype_change(x, n):
    s = tf.constant(0)
    for i in tf.range(n):
        s = tf.cast(s, tf.float32) + x
    return s


def shape_change(x, n):
    s = x
    for i in tf.range(n):
        s = tf.concat([s, [1.0]], 0)
    return s


def rank_change(x, n):
    s = x
    for i in tf.range(n):
        s = tf.expand_dims(s, 0)
    return s


def while_shape_change(x, n):
    i = 0
    while i < n:
        x = tf.concat([x, x], 0)
        i += 1
    return x


def while_loop_shape_change(x, n):
    def grow(i, s):
        return i + 1, tf.concat([s, [1.0]], 0)
    return tf.while_loop(lambda i, s: i < n, grow, (0, x))[1]


def while_loop_dtype_change(x, n):
    def widen(i, s):
        return i + 1, tf.cast(s, tf.float64)
    return tf.while_loop(lambda i, s: i < n, widen, (0, x))[1]


def defined_on_one_path(x, n):
    s = x
    for i in tf.range(n):
        if tf.reduce_sum(s) > 0:
            t = s * 2.0
        s = s + t                                  # noqa: F821
    return s


def read_before_assigned(x, n):
    for i in tf.range(n):
        x = x + prev                               # noqa: F821
        prev = x                                   # noqa: F841
    return x


def undefined_in_the_test(x, n):
    while tf.reduce_sum(y) < 10.0:                 # noqa: F821
        y = x * 2.0
        x = y
    return x


def over_a_scalar(x, n):
    s = x
    for r in tf.reduce_sum(x):
        s = s + r
    return s


# (function, TensorFlow 2.21's exception type, text of the line the message names, and what
# the message says); TF's own texts: "'s' has dtype int32 before the loop, but dtype float32
# after one iteration" (TypeError), "'s' has shape (2,) before the loop, but shape (3,) after
# one iteration" (ValueError), tf.while_loop's "enters the loop with shape (2,), but has shape
# (3,)" (ValueError) and "... type should remain constant" (TypeError), "'t' must be defined
# before the loop" (ValueError), "'y' is used before assignment" (UnboundLocalError), "len
# requires a non-scalar tensor" (ValueError)
LOOP_ERRORS = [
    (dtype_change, TypeError, "for i in tf.range(n)", "'s' from int32[] to float32[2]"),
    (shape_change, ValueError, "for i in tf.range(n)", "'s' from float32[2] to float32[3]"),
    (rank_change, ValueError, "for i in tf.range(n)", "'s' from float32[2] to float32[1, 2]"),
    (while_shape_change, ValueError, "while i < n", "'x' from float32[2] to float32[4]"),
    (while_loop_shape_change, ValueError, "return tf.while_loop", "from float32[2] to float32[3]"),
    (while_loop_dtype_change, TypeError, "return tf.while_loop", "from float32[2] to float64[2]"),
    (defined_on_one_path, ValueError, "for i in tf.range(n)", "'t' must be defined before"),
    (read_before_assigned, ValueError, "for i in tf.range(n)", "'prev' must be defined before"),
    (undefined_in_the_test, UnboundLocalError, "while tf.reduce_sum(y)", "'y' must be defined"),
    (over_a_scalar, ValueError, "for r in tf.reduce_sum(x)", "scalar tensor"),
]


@pytest.mark.parametrize("fn,error,line,says", LOOP_ERRORS, ids=[c[0].__name__ for c in LOOP_ERRORS])
def test_loop_errors_have_tensorflows_types_and_name_the_users_line(fn, error, line, says):
    with pytest.raises(error) as e:
        tf.function(fn)(tf.constant([1.0, 2.0]), tf.constant(3))
    assert line_of(fn, line) in str(e.value) and says in str(e.value)


def test_shape_invariants_that_hold_are_accepted_and_ones_that_do_not_allow_a_change_say_so():
    """TensorFlow 2.21 raises ValueError "Input tensor ... enters the loop with shape (2,), but
    has shape (3,) after one iteration. To allow the shape to vary across iterations, use the
    `shape_invariants` argument of tf.while_loop to specify a less-specific shape." for an
    invariant [2] (or none) on a loop variable that grows, and for a change of rank under
    [None]. An invariant that does not fit the initial value ([3] for a [2] value) TensorFlow
    2.21 accepts (the result's static shape is then [3] for a value of 2 elements); a static
    shape is a type here, so it raises ValueError."""
    def keeps(x, n):
        return tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * 2.0), (0, x),
                             shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])))[1]

    def grows(x, n):
        return tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, tf.concat([s, [1.0]], 0)),
                             (0, x), shape_invariants=(tf.TensorShape([]), tf.TensorShape([2])))[1]

    def rank(x, n):
        return tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, tf.reshape(s, [1, -1])),
                             (0, x), shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])))[1]

    def does_not_fit(x, n):
        return tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s), (0, x),
                             shape_invariants=(tf.TensorShape([]), tf.TensorShape([3])))[1]
    x = tf.constant([1.0, 2.0])
    np.testing.assert_array_equal(tf.function(keeps)(x, tf.constant(3)).numpy(), [8.0, 16.0])
    for fn, says in ((grows, r"from float32\[2\] to float32\[3\]"),
                     (rank, r"from float32\[None\] to float32\[1, None\].*its rank cannot change"),
                     (does_not_fit, r"shape invariant \[3\] of loop variable 1 does not fit its "
                                    r"initial value's shape \[2\]")):
        with pytest.raises(ValueError, match=says) as e:
            tf.function(fn)(x, tf.constant(3))
        assert line_of(fn, "shape_invariants=(") in str(e.value)   # the call's last line
    assert "shape_invariants" in str(pytest.raises(ValueError, tf.function(grows), x,
                                                   tf.constant(3)).value)


def test_shape_invariants_let_a_loop_variable_grow():
    """TensorFlow 2.21: [0, 0, 1, 1, 1] (tf.while_loop with shape_invariants [None]); the
    result's static shape is [None]; with s -> concat([s, 2 * s[-1:]]) from [1, 2], three
    times: [1, 2, 4, 8, 16], and the gradient of sum(y * y) with respect to the start is
    [2, 340], through the function and with the tape inside it."""
    def grows(n):
        return tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, tf.concat([s, [1.0]], 0)),
                             (0, tf.zeros([2])),
                             shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])))[1]

    def doubles(x, n):
        return tf.while_loop(lambda i, s: i < n,
                             lambda i, s: (i + 1, tf.concat([s, s[-1:] * 2.0], 0)), (0, x),
                             shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])))[1]

    def inside(x, n):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(doubles(x, n) ** 2)
        return tape.gradient(loss, x)
    np.testing.assert_array_equal(tf.function(grows)(tf.constant(3)).numpy(), [0, 0, 1, 1, 1])
    np.testing.assert_array_equal(tf.function(grows)(tf.constant(0)).numpy(), [0, 0])
    inlined = tf.function(lambda n: tf.function(grows)(n) * 2.0)   # replayed into another trace
    np.testing.assert_array_equal(inlined(tf.constant(3)).numpy(), [0, 0, 2, 2, 2])
    assert tf.function(doubles).get_concrete_function(
        tf.TensorSpec([2]), tf.TensorSpec([], tf.int32)).graph.outputs[0].aval.shape == (None,)
    x, n = tf.constant([1.0, 2.0]), tf.constant(3)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.function(doubles)(x, n)
        loss = tf.reduce_sum(y * y)
    np.testing.assert_array_equal(y.numpy(), [1, 2, 4, 8, 16])
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [2, 340])
    np.testing.assert_array_equal(tf.function(inside)(x, n).numpy(), [2, 340])


def test_set_loop_options_shape_invariants_let_a_converted_loop_variable_grow():
    """TensorFlow 2.21: [1, 2, 1, 1, 1] for the `for` and [1, 2, 1, 1, 1, 1, 1, 1, 1] for the
    `while` below; without the invariant, ValueError "'s' has shape (2,) before the loop, but
    shape (3,) after one iteration. Use tf.autograph.experimental.set_loop_options to set
    shape invariants."; with s -> concat([s, 2 * s[-1:]]), sum(s * s) is 341 and its
    gradient [2, 340]."""
    def grows(x, n):
        s = x
        for i in tf.range(n):
            tf.autograph.experimental.set_loop_options(shape_invariants=[(s, tf.TensorShape([None]))])
            s = tf.concat([s, [1.0]], 0)
        return s

    def grows_while(x):
        s = x
        while tf.reduce_sum(s) < 10.0:
            tf.autograph.experimental.set_loop_options(shape_invariants=[(s, tf.TensorShape([None]))])
            s = tf.concat([s, [1.0]], 0)
        return s

    def doubles(x, n):
        s = x
        for i in tf.range(n):
            tf.autograph.experimental.set_loop_options(shape_invariants=[(s, tf.TensorShape([None]))])
            s = tf.concat([s, s[-1:] * 2.0], 0)
        return tf.reduce_sum(s * s)

    def not_a_loop_variable(x, n):
        s = x
        for i in tf.range(n):
            tf.autograph.experimental.set_loop_options(shape_invariants=[(x, tf.TensorShape([None]))])
            s = tf.concat([s, [1.0]], 0)
        return s
    x = tf.constant([1.0, 2.0])
    np.testing.assert_array_equal(tf.function(grows)(x, tf.constant(3)).numpy(), [1, 2, 1, 1, 1])
    np.testing.assert_array_equal(grows(x, tf.constant(3)).numpy(), [1, 2, 1, 1, 1])   # eagerly
    np.testing.assert_array_equal(tf.function(grows_while)(x).numpy(), [1, 2] + [1] * 7)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.function(doubles)(x, tf.constant(3))
    assert float(y) == 341.0
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2, 340])
    with pytest.raises(ValueError, match="names a value that is not one of its loop variables") as e:
        tf.function(not_a_loop_variable)(x, tf.constant(3))
    assert line_of(not_a_loop_variable, "for i in tf.range(n)") in str(e.value)
    with pytest.raises(ValueError, match=r"changes 's' from float32\[2\] to float32\[3\].*"
                                         r"set_loop_options\(shape_invariants="):
        tf.function(shape_change)(x, tf.constant(3))


def test_a_name_assigned_only_inside_the_loop_is_its_last_value_after_it():
    """TensorFlow 2.21 defines ``t`` after the loop as its last value (it stages the body once
    to learn its type and starts it from zeros of that type) and, when the loop runs zero
    times, raises InvalidArgumentError "assertion failed: [loop must iterate at least once to
    initialize t]" when the function runs (one Assert for all such names: "... initialize t,
    u"); a Python number is carried as a tensor (``t = 3`` gives int32 3)."""
    def last(x, n):
        for i in tf.range(n):
            t = x * 2.0
        return t                                   # noqa: F821

    def two(x, n):
        for i in tf.range(n):
            t = x * 2.0
            u = (3, tf.cast(i, tf.float32))
        return t, u                                # noqa: F821
    f = tf.function(last)
    np.testing.assert_array_equal(f(tf.constant([1.0]), tf.constant(3)).numpy(), [2.0])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="loop must iterate at least once to initialize t") as e:
        f(tf.constant([1.0]), tf.constant(0))
    assert line_of(last, "for i in tf.range(n)") in str(e.value)
    assert f.experimental_get_tracing_count() == 1
    g = tf.function(two)
    t, (three, i) = g(tf.constant([1.0]), tf.constant(4))
    assert (t.numpy().tolist(), int(three), three.dtype, float(i)) == ([2.0], 3, tf.int32, 3.0)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="loop must iterate at least once to initialize t, u"):
        g(tf.constant([1.0]), tf.constant(0))


def test_a_name_defined_after_the_loop_is_differentiable_through_and_inside_the_function():
    def last(x, n):
        for i in tf.range(n):
            t = x * x + tf.cast(i, x.dtype)
        return t                                   # noqa: F821

    def inside(x, n):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = last(x, n)
        return tape.gradient(y, x)
    x, n = tf.constant([1.5, -2.0]), tf.constant(3)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.function(last)(x, n)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [3.0, -4.0])
    np.testing.assert_allclose(tf.function(inside)(x, n).numpy(), [3.0, -4.0])

    @tf.function
    def jacobian(x, n):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = last(x, n)
        return tape.jacobian(y, x)
    np.testing.assert_allclose(jacobian(x, n).numpy(), np.diag([3.0, -4.0]))


def test_a_name_defined_in_the_loop_with_a_size_unknown_while_tracing():
    """TensorFlow's placeholder has 0 where the first iteration's shape is unknown, and the
    loop variable that size relaxed; here too (an EnsureShape on the zeros)."""
    def last(x, n):
        for i in tf.range(n):
            t = x * 2.0
        return t                                   # noqa: F821
    f = tf.function(last, input_signature=[tf.TensorSpec([None]), tf.TensorSpec([], tf.int32)])
    x = tf.constant([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(f(x, tf.constant(3)).numpy(), [2.0, 4.0, 6.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="initialize t"):
        f(x, tf.constant(0))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(f(x, tf.constant(2)) ** 2)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [8.0, 16.0, 24.0])


def test_a_name_the_loop_defines_on_one_path_only_must_be_defined_before_it():
    """TensorFlow 2.21: ValueError "'t' must be defined before the loop" (AutoGraph tried to
    define it and ran into "'t' must also be initialized in the else branch"), at trace time."""
    def one_path(x, n):
        for i in tf.range(n):
            if x[0] > 0:
                t = x * 2.0
        return t                                   # noqa: F821
    with pytest.raises(ValueError, match="'t' must be defined before the loop") as e:
        tf.function(one_path)(tf.constant([1.0]), tf.constant(3))
    assert line_of(one_path, "for i in tf.range(n)") in str(e.value)
    assert line_of(one_path, "return t") in str(e.value)
    assert "not assign it on every path" in str(e.value)


def test_return_inside_a_for_over_tf_range_runs_per_path_as_the_readme_says():
    """TensorFlow 2.21 raises NotImplementedError ("a return statement cannot be placed inside
    this TensorFlow loop") for both; here a loop returning in its first iteration traces per
    path, and one that may run on past the decision limit raises naming the line and why."""
    def once(x, n):
        for i in tf.range(n):
            return x * 2.0
        return x

    def first_positive(x, n):
        for i in tf.range(n):
            if tf.gather(x, i) > 0:
                return tf.gather(x, i)
        return tf.constant(-1.0)
    f = tf.function(once)
    for n in (0, 1, 3):
        assert float(f(tf.constant(1.5), tf.constant(n))) == float(once(tf.constant(1.5),
                                                                        tf.constant(n)))
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises(DecisionLimitError, match="has a `return`.*cannot be placed inside this "
                                                 "TensorFlow loop") as e:
        tf.function(first_positive)(tf.constant([-1.0, 3.0]), tf.constant(2))
    assert line_of(first_positive, "for i in tf.range(n)") in str(e.value)


def none_or_zeros(x, u, z, n):
    """``u`` is read only in the loop body, ``z`` nowhere."""
    h = x
    ta = tf.TensorArray(tf.float64, size=3, element_shape=[2])
    for i in tf.range(n):
        h = h * 0.5 + u
        ta = ta.write(i, h)
    return tf.reduce_sum(ta.stack()) + tf.reduce_sum(h)


def _first(fn, n):
    x, u, z = (tf.constant(v, tf.float64) for v in ([0.5, -1.0], [0.2, 0.3], [1.0, 2.0]))
    with tf.GradientTape() as t:
        t.watch([x, u, z])
        y = fn(x, u, z, tf.constant(n))
    return [None if g is None else g.numpy().tolist() for g in t.gradient(y, [x, u, z])]


def _second(fn, n):
    """d/d(x, u, z) of sum((dy/du)^2), y taken at (x*x, u*u, z); "g None" if dy/du is None."""
    x, u, z = (tf.constant(v, tf.float64) for v in ([0.5, -1.0], [0.2, 0.3], [1.0, 2.0]))
    with tf.GradientTape() as t2:
        t2.watch([x, u, z])
        with tf.GradientTape() as t1:
            t1.watch([x, u, z])
            y = fn(x * x, u * u, z, tf.constant(n))
        g = t1.gradient(y, u)
        if g is None:
            return "g None"
        s = tf.reduce_sum(g * g)
    return [None if v is None else v.numpy().tolist() for v in t2.gradient(s, [x, u, z])]


@tf.function
def _inside(n):
    return [tf.constant(-99.0, tf.float64) if g is None else g    # -99: None inside
            for g in _inside_grads(n)]


def _inside_grads(n):
    x, u, z = (tf.constant(v, tf.float64) for v in ([0.5, -1.0], [0.2, 0.3], [1.0, 2.0]))
    with tf.GradientTape() as t:
        t.watch([x, u, z])
        y = none_or_zeros(x, u, z, n)
    return t.gradient(y, [x, u, z])


def test_none_versus_zeros_through_a_loop_are_tensorflows():
    """TensorFlow 2.21's answers: eagerly a loop that runs zero times leaves ``u`` unconnected
    (None); through and inside a function the While connects it (zeros); ``z`` is None
    everywhere. At second order through the function, x gets zeros where eager has None."""
    f = tf.function(none_or_zeros)
    assert _first(none_or_zeros, 0) == [[1.0, 1.0], None, None]
    assert _first(f, 0) == [[1.0, 1.0], [0.0, 0.0], None]
    assert [g.numpy().tolist() for g in _inside(tf.constant(0))] == [[1.0, 1.0], [0.0, 0.0], -99.0]
    assert _first(none_or_zeros, 2) == _first(f, 2) == [[1.0, 1.0], [4.0, 4.0], None]
    assert [g.numpy().tolist() for g in _inside(tf.constant(2))] == [[1.0, 1.0], [4.0, 4.0], -99.0]
    assert _second(none_or_zeros, 0) == "g None"
    assert _second(f, 0) == [[0.0, 0.0], [0.0, 0.0], None]
    want = [[0.0, 0.0], [25.6, 38.4], None]
    got = _second(f, 2)
    assert got[0] == want[0] and got[2] is None
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    got = _second(none_or_zeros, 2)
    assert got[0] is None and got[2] is None
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
