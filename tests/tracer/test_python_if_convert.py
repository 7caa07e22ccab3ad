"""Python `if` on tensors inside tapeflow.function: converted to one If node per `if`
statement (if_rewrite.py, pyif.py), so sequential `if`s no longer multiply traced paths.

Every traced result is compared with the same Python function run eagerly (plain Python
`if`s on concrete tensors), gradients with eager tapes and central finite differences.
`if`s the If node cannot express fall back to per-path tracing and must still work.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import _nest
from tapeflow.testing import check_gradients
from tapeflow.tracer import TracingError, convert
from tapeflow.tracer.control import MAX_PATHS


def ops_of(f, *args):
    return [n.op for n in f.get_concrete_function(*args).graph.nodes]


def same(got, want):
    """Leaf for leaf equal; where eager says None (not connected) the If gives None or zeros:
    the untaken branch's gradient is zeros, as TensorFlow's cond gives."""
    got, want = _nest.flatten(got), _nest.flatten(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w is None:
            assert g is None or not np.any(np.asarray(g))
        else:
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def grads(fn, x, order=1):
    """d^order sum(fn(x)) / dx^order (diagonal), by nested tapes."""
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(fn(x))
        g = inner.gradient(y, x)
    return g if order == 1 else outer.gradient(g, x)


# -- the motivating loop: linear graph, one trace ----------------------------------------------

def doubling(x):
    for i in range(10):
        if x > 0:
            x = x * 2
        else:
            x = x - 1
    return x


def test_if_in_a_python_for_loop_converts_with_one_trace_and_eager_values():
    f = tf.function(doubling)
    for v in (0.3, -0.5, 1e-3, -2.0):
        x = tf.constant(v)
        same(f(x), doubling(x))
    assert f.experimental_get_tracing_count() == 1
    assert ops_of(f, tf.constant(1.0)).count("If") == 10
    assert "1 of 1 `if`" in convert.status(doubling)


@pytest.mark.parametrize("v", [0.3, -0.5])
def test_if_loop_gradients_first_and_second_order_equal_eager(v):
    f = tf.function(doubling)
    x = tf.constant(v, dtype=tf.float64)
    same(grads(f, x), grads(doubling, x))
    same(grads(f, x, 2), grads(doubling, x, 2))
    np.testing.assert_allclose(grads(f, x).numpy(), 1024.0 if v > 0 else 1.0)


def cubic_steps(x):
    for i in range(4):
        if tf.reduce_sum(x) > 0:
            x = x * x * 0.5
        else:
            x = tf.sin(x) - 0.25 * x
    return x


def test_gradients_of_converted_ifs_match_finite_differences():
    f = tf.function(cubic_steps)
    for v in ([0.4, 0.9], [-0.7, 0.2]):
        x = tf.constant(v, dtype=tf.float64)
        same(f(x), cubic_steps(x))
        check_gradients(f, [x])
        same(grads(f, x, 2), grads(cubic_steps, x, 2))


@pytest.mark.parametrize("n", [2, 4, 8, 16])
def test_graph_size_is_linear_in_the_number_of_ifs(n):
    def g(x):
        for i in range(n):
            if x > 1.0:
                x = x * 0.5
            else:
                x = x + 1.0
        return x
    f = tf.function(g)
    assert ops_of(f, tf.constant(1.0)).count("If") == n
    graph = f.get_concrete_function(tf.constant(1.0)).graph
    total = sum(1 + sum(len(gr.nodes) for gr in (n_.attrs["then_graph"], n_.attrs["else_graph"]))
                for n_ in graph.nodes if n_.op == "If")
    assert total <= 6 * n     # If, then (const, op, ...), else
    same(f(tf.constant(5.0)), g(tf.constant(5.0)))


def test_more_sequential_ifs_than_the_path_limit_used_to_allow():
    steps = MAX_PATHS.bit_length() + 2          # 2**steps paths per-path

    def g(x):
        for i in range(steps):
            if x > 0.0:
                x = x - 0.75
            else:
                x = x + 0.5
        return x
    f = tf.function(g)
    same(f(tf.constant(0.2)), g(tf.constant(0.2)))


# -- names, numbers, elif, nesting -----------------------------------------------------------

def numbers(x):
    if x > 0:
        k = 2.0
        s = 1.5
        same_py = "a"
    else:
        k = 3.0
        s = 1.5
        same_py = "a"
    return x * k * s, same_py


def test_python_numbers_that_differ_become_tensors_equal_ones_stay_python():
    f = tf.function(numbers)
    for v in (1.0, -1.0):
        out = f(tf.constant(v))
        same(out[0], numbers(tf.constant(v))[0])
        assert out[1] == "a"
    assert ops_of(f, tf.constant(1.0)).count("If") == 1


def test_python_ints_that_differ_become_int32_tensors_as_in_tensorflow():
    def g(x):
        if x > 0:
            k = 2
        else:
            k = 3
        return k
    f = tf.function(g)
    for v, want in ((1.0, 2), (-1.0, 3)):
        out = f(tf.constant(v))
        assert out.dtype == tf.int32 and int(out) == want


def elif_chain(x):
    if x > 2.0:
        y = x * 3.0
    elif x > 0.0:
        y = x * x
    elif x > -1.0:
        y = -x
    else:
        y = tf.exp(x)
    return y


def test_elif_chains_are_nested_ifs():
    f = tf.function(elif_chain)
    for v in (3.0, 1.0, -0.5, -2.0):
        x = tf.constant(v, dtype=tf.float64)
        same(f(x), elif_chain(x))
        same(grads(f, x), grads(elif_chain, x))
    assert f.experimental_get_tracing_count() == 1
    assert ops_of(f, tf.constant(1.0, dtype=tf.float64)).count("If") == 1   # the rest nested


def nested(x, y):
    if x > 0:
        if y > 0:
            z = x * y
        else:
            z = x - y
        w = z + 1.0
    else:
        z = x + y
        w = z * 2.0
    if tf.logical_and(x > 0, y > 0) and w > 1.0:
        w = w * w
    if not (x < 0) or y < -1.0:
        z = z - 0.5
    return z, w


def test_nested_ifs_and_boolean_tests():
    f = tf.function(nested)
    for a, b in ((1.0, 2.0), (1.0, -2.0), (-1.0, 0.5), (-1.0, -3.0), (0.2, 0.1)):
        x, y = tf.constant(a), tf.constant(b)
        same(f(x, y), nested(x, y))
    assert f.experimental_get_tracing_count() == 1


def test_walrus_in_the_test_binds_in_the_function():
    def g(x):
        if (m := tf.reduce_max(x)) > 1.0:
            x = x / m
        return x, m
    f = tf.function(g)
    for v in ([0.5, 3.0], [0.5, 0.25]):
        same(f(tf.constant(v)), g(tf.constant(v)))


def test_temporary_assigned_in_one_branch_only_needs_no_fallback():
    def g(x):
        if x > 0:
            t = x * 3.0
            y = t + 1.0
        else:
            y = x
        return y
    f = tf.function(g)
    for v in (2.0, -2.0):
        same(f(tf.constant(v)), g(tf.constant(v)))
    assert ops_of(f, tf.constant(1.0)).count("If") == 1


# -- fallbacks: per-path tracing as before -----------------------------------------------------

def one_sided(x):
    if x > 0:
        y = x * 2.0
    try:
        return y + 1.0
    except NameError:
        return x - 1.0


def test_name_defined_in_one_branch_only_falls_back_to_per_path():
    f = tf.function(one_sided)
    for v in (2.0, -2.0):
        same(f(tf.constant(v)), one_sided(tf.constant(v)))


def returns(x):
    for i in range(3):
        if x > 5.0:
            return x
        x = x * 2.0
    return -x


def test_return_inside_if_keeps_per_path_tracing():
    f = tf.function(returns)
    for v in (0.5, 3.0, 10.0):
        same(f(tf.constant(v)), returns(tf.constant(v)))
    # the `return` leaves the loop (return_rewrite: a flag and a `break`), so its `if` stays per
    # path; the `if not <returned>` guarding `return -x` converts
    assert "1 of 2 `if`" in convert.status(returns)


def test_different_shapes_or_dtypes_between_branches_fall_back():
    def g(x):
        if tf.reduce_sum(x) > 0:
            y = x[:2]
        else:
            y = x[:1]
        if x[0] > 0:
            k = 1
        else:
            k = 0.5
        return tf.reduce_sum(y) * k
    f = tf.function(g)
    for v in ([1.0, 2.0, 3.0], [-1.0, -2.0, 3.0], [1.0, -5.0, 0.0]):
        same(f(tf.constant(v)), g(tf.constant(v)))


def test_object_values_that_differ_fall_back():
    def g(x):
        if x > 0:
            mode = "up"
            y = x + 1.0
        else:
            mode = "down"
            y = x - 1.0
        return y * 2.0 if mode == "up" else y * 3.0
    f = tf.function(g)
    for v in (1.0, -1.0):
        same(f(tf.constant(v)), g(tf.constant(v)))


def test_mutating_branch_is_not_converted():
    def g(x):
        out = []
        if x > 0:
            out.append(x * 2.0)
        else:
            out.append(x)
        return out[0]
    f = tf.function(g)
    for v in (1.0, -1.0):
        same(f(tf.constant(v)), g(tf.constant(v)))
    assert "0 of 1 `if`" in convert.status(g)


def test_break_inside_if_keeps_per_path():
    def g(x):
        for i in range(3):
            if x > 4.0:
                break
            x = x * 2.0
        return x
    f = tf.function(g)
    for v in (1.0, 5.0, 3.0):
        same(f(tf.constant(v)), g(tf.constant(v)))


def test_a_non_scalar_test_still_names_the_problem():
    def g(x):
        if x > 0:
            x = x * 2.0
        return x
    with pytest.raises(TracingError, match="scalar"):
        tf.function(g)(tf.constant([1.0, 2.0]))


# -- tapes, variables, loops -----------------------------------------------------------------

def taped(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        if tf.reduce_sum(x) > 0:
            y = x * x
        else:
            y = tf.sin(x)
    g = tape.gradient(y, x)
    if g[0] > 1.0:
        with tf.GradientTape() as t2:
            t2.watch(x)
            z = tf.reduce_sum(x * x * x)
        h = t2.gradient(z, x)
    else:
        h = g
    return g, h


def test_tapes_around_and_inside_branches():
    f = tf.function(taped)
    for v in ([1.0, 2.0], [-1.0, -0.5], [0.2, 0.1]):
        x = tf.constant(v, dtype=tf.float64)
        same(f(x), taped(x))
    assert f.experimental_get_tracing_count() == 1
    assert "If" in ops_of(f, tf.constant([1.0, 2.0], dtype=tf.float64))


def watch_in_branch(x):
    with tf.GradientTape() as tape:
        if x > 0:
            tape.watch(x)
            y = x * x
        else:
            y = x * 3.0
    return tape.gradient(y, x)


def test_watch_on_an_enclosing_tape_inside_a_branch_falls_back_to_per_path():
    f = tf.function(watch_in_branch)
    same(f(tf.constant(2.0)), watch_in_branch(tf.constant(2.0)))
    # eager: None (x never watched); per-path tracing gives the If's zeros, not the
    # else branch's 3.0 (which tracing both branches under the watch would record)
    assert watch_in_branch(tf.constant(-2.0)) is None
    np.testing.assert_allclose(f(tf.constant(-2.0)).numpy(), 0.0)


def gradient_in_both_branches(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x * x
    if x > 0:
        d = tape.gradient(y, x)
    else:
        d = tape.gradient(y, x) * 2.0
    return d


def test_a_non_persistent_tape_used_up_in_both_branches_falls_back_to_per_path():
    f = tf.function(gradient_in_both_branches)
    for v in (2.0, -2.0):       # 3x^2, and twice that
        same(f(tf.constant(v)), gradient_in_both_branches(tf.constant(v)))
    np.testing.assert_allclose(f(tf.constant(-2.0)).numpy(), 24.0)


def test_variables_assigned_in_branches():
    v = tf.Variable(1.0)
    w = tf.Variable(0.0)

    def g(x):
        for i in range(6):
            if x > v:
                v.assign(v * 2.0)
            else:
                w.assign_add(x)
                x = x + 1.0
        return x + v + w

    f = tf.function(g)
    for x0 in (3.0, 0.5):
        v.assign(1.0), w.assign(0.0)
        want = g(tf.constant(x0)).numpy(), v.numpy(), w.numpy()
        v.assign(1.0), w.assign(0.0)
        got = f(tf.constant(x0)).numpy(), v.numpy(), w.numpy()
        np.testing.assert_allclose(got, want)
    assert f.experimental_get_tracing_count() == 1


def loops(x):
    i = tf.cast(x * 0.0, tf.int32)
    while i < 4:
        if x > 1.0:
            x = x * 0.5
        else:
            x = x + 0.75
        i += 1
    if x > 0.9:
        while x > 0.1:
            x = x * 0.5
    else:
        y = x
        while y < 2.0:
            y = y * 3.0
        x = y
    return x


def test_ifs_inside_converted_whiles_and_whiles_inside_ifs():
    f = tf.function(loops)
    for v in (5.0, 0.3, 1.0, -0.2):
        x = tf.constant(v, dtype=tf.float64)
        same(f(x), loops(x))
        same(grads(f, x), grads(loops, x))
    ops = ops_of(f, tf.constant(1.0, dtype=tf.float64))
    assert ops.count("While") == 1 and ops.count("If") == 1
    (loop,) = [n for n in f.get_concrete_function(tf.constant(1.0, dtype=tf.float64)).graph.nodes
               if n.op == "While"]
    assert "If" in [n.op for n in loop.attrs["body_graph"].nodes]
    assert f.experimental_get_tracing_count() == 1


class Scaler(tf.Module):
    def __init__(self):
        super().__init__()
        self.scale = 3.0

    @tf.function
    def __call__(self, x):
        if x > 0:
            y = x * self.scale
        else:
            y = x / self.scale
        return y


def test_method_with_attributes_read_in_branches():
    m = Scaler()
    for v in (2.0, -3.0):
        same(m(tf.constant(v)), tf.constant(v * 3.0 if v > 0 else v / 3.0))


def test_python_test_runs_one_branch_only():
    calls = []

    def g(x, flag):
        if flag:
            calls.append("then")
            x = x + 1.0
        else:
            x = x - 1.0
        return x
    f = tf.function(g)
    same(f(tf.constant(1.0), True), tf.constant(2.0))
    assert calls == ["then"]


# -- liveness: which names need a value after the `if` -----------------------------------------

def carried(x):
    t = x
    out = x * 0.0
    for i in range(3):
        out = out + t                     # reads the previous iteration's `t`
        if x > float(i):
            t = t * 2.0
    return out


def test_a_name_read_by_the_next_iteration_is_an_output_not_a_temporary():
    f = tf.function(carried)
    for v in (5.0, 1.5, -1.0):
        same(f(tf.constant(v)), carried(tf.constant(v)))
    np.testing.assert_allclose(f(tf.constant(5.0)).numpy(), 35.0)
    assert ops_of(f, tf.constant(1.0)).count("If") == 3


def test_temporaries_of_sibling_branches_in_a_loop_convert():
    def g(x):
        for i in range(8):                # 256 paths per-path
            if x > 1.0:
                if x > 2.0:
                    t = x * 0.5
                    x = t - 0.25
                elif x > 1.5:
                    x = x - 0.5
                else:
                    t = x * 0.75
                    x = t
            else:
                x = x + 0.75
        return x
    f = tf.function(g)
    for v in (5.0, 1.75, 0.1):
        same(f(tf.constant(v)), g(tf.constant(v)))
    assert ops_of(f, tf.constant(1.0)).count("If") == 8


def test_unconvertible_ifs_still_hit_the_path_limit_and_the_error_says_why():
    def g(x):
        log = []
        for i in range(7):
            if x > float(i):
                log.append(i)
                x = x * 0.5
        return x
    with pytest.raises(TracingError, match="mutates an object in place"):
        tf.function(g)(tf.constant(3.0))


def test_compiled_program_runs_the_converted_ifs():
    tf.set_backend("numba")                # restored by the conftest fixture
    f = tf.function(doubling)
    for v in (0.3, -0.5):
        same(f(tf.constant(v)), doubling(tf.constant(v)))
    program = f.get_concrete_function(tf.constant(0.3)).program
    assert program.fallback is None and program.source.count("if ") >= 10
    assert "If[" in f.lower(tf.constant(0.3)).traced
