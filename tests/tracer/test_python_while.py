"""Python `while` on tensors inside tapeflow.function: converted to one While node (convert.py,
pywhile.py), decided per loop at its first test as TensorFlow's AutoGraph does.

Every traced result is compared with the same Python function run eagerly (a plain Python
loop on concrete tensors); gradients also with central finite differences in float64.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import _nest, cli
from tapeflow.testing import check_gradients
from tapeflow.tracer import TracingError, convert

HERE = __file__


def line_of(fn, text):
    """'file:line' of the first line of ``fn``'s source containing ``text``."""
    import inspect
    lines, first = inspect.getsourcelines(fn)
    k = next(i for i, s in enumerate(lines) if text in s)
    return f"{HERE}:{first + k}"


def ops_of(f, *args):
    return [n.op for n in f.get_concrete_function(*args).graph.nodes]


def same(got, want):
    """Structures of tensors / Python values equal leaf for leaf (tensors as arrays)."""
    got, want = _nest.flatten(got), _nest.flatten(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


# -- values: the trace follows the data, one trace ------------------------------------------

def counted(x, n):
    i = 0
    s = tf.zeros_like(x)
    while i < n:
        t = x * tf.cast(i, x.dtype)      # a temporary of the body only: not a loop variable
        s = s + t
        i += 1
    return s, i


def test_trip_count_follows_the_data_at_every_call_with_one_trace():
    f = tf.function(counted)
    x = tf.constant([1.0, 2.0])
    for n in (3, 0, 5, 1):
        out = f(x, tf.constant(n))
        same(out, counted(x, tf.constant(n)))
        assert int(out[1]) == n
    assert f.experimental_get_tracing_count() == 1
    assert "While" in ops_of(f, x, tf.constant(3))


def several(x, y):
    a, b, k = x, y, 0
    scratch = None                         # assigned before read in the body, unread after
    while tf.reduce_sum(a) < 50.0:
        scratch = a * b                    # noqa: F841
        a, b = a + tf.abs(b), b * 1.5
        k = k + 1
    return a, b, k


@pytest.mark.parametrize("x, y", [([1.0, 2.0], [0.5, 1.0]), ([30.0, 30.0], [1.0, 1.0]),
                                  ([0.1, 0.2], [0.1, 0.1])])
def test_several_loop_variables_and_temporaries_match_eager(x, y):
    f = tf.function(several)
    x, y = tf.constant(x), tf.constant(y)
    same(f(x, y), several(x, y))


def nested(x, n):
    i = 0
    total = tf.zeros_like(x)
    while i < n:
        j = tf.constant(0)
        while j < i:                       # inner trip count depends on the outer variable
            total = total + x * tf.cast(j + 1, x.dtype)
            j += 1
        i += 1
    return total


def test_nested_whiles_match_eager():
    f = tf.function(nested)
    x = tf.constant([1.0, -2.0])
    for n in (0, 1, 4):
        same(f(x, tf.constant(n)), nested(x, tf.constant(n)))
    assert f.experimental_get_tracing_count() == 1
    body = f.get_concrete_function(x, tf.constant(1)).graph.nodes
    inner = [n for n in body if n.op == "While"][0].attrs["body_graph"].nodes
    assert "While" in [n.op for n in inner]


def if_inside(x):
    while tf.reduce_sum(x) < 20.0:
        if x[0] > 2.0:                     # a Python `if` on a tensor inside the body
            x = x * 1.5
        else:
            x = x + 1.0
    return x


def while_inside_if(x):
    if tf.reduce_sum(x) > 0:
        while tf.reduce_sum(x) < 20.0:
            x = x * 2.0
    else:
        x = -x
    return x


@pytest.mark.parametrize("fn", [if_inside, while_inside_if])
def test_python_if_around_and_inside_a_converted_loop(fn):
    f = tf.function(fn)
    for v in ([1.0, 2.0], [3.0, 2.0], [-1.0, -2.0], [25.0, 1.0]):
        same(f(tf.constant(v)), fn(tf.constant(v)))
    assert f.experimental_get_tracing_count() == 1


def jumps(x, n):
    i = 0
    s = tf.zeros_like(x)
    while i < n:
        i += 1
        if tf.reduce_sum(s) > 10.0:
            break
        s = s + x
        if i == 2:
            continue
        s = s * 1.5
    else:                                  # runs unless the loop ended by `break`
        s = s - 100.0
    return s, i


@pytest.mark.parametrize("x, n", [([1.0, 2.0], 0), ([1.0, 2.0], 3), ([1.0, 2.0], 10),
                                  ([0.1, 0.1], 4)])
def test_break_continue_and_else_match_eager(x, n):
    f = tf.function(jumps)
    x = tf.constant(x)
    same(f(x, tf.constant(n)), jumps(x, tf.constant(n)))
    assert "While" in ops_of(f, x, tf.constant(n))


def test_break_in_nested_loops_leaves_the_innermost_loop():
    def g(x, start):
        i = start
        out = tf.zeros_like(x)
        while i < 6:
            j = i * 0
            while j < 100:
                j += 1
                if j >= i:
                    break
                out = out + x
            if tf.reduce_sum(out) > 20.0:
                break
            i += 1
        return out, i
    f = tf.function(g)
    for v in ([1.0, 2.0], [0.1, 0.1], [5.0, 5.0]):
        same(f(tf.constant(v), tf.constant(0)), g(tf.constant(v), tf.constant(0)))
    outer = [n for n in f.get_concrete_function(tf.constant([1.0, 1.0]), tf.constant(0)).graph.nodes
             if n.op == "While"]
    assert len(outer) == 1 and "While" in [n.op for n in outer[0].attrs["body_graph"].nodes]
    assert f.experimental_get_tracing_count() == 1


def logic(x, n):
    i = 0
    done = False
    while i < n and not done or (i == 0 and n > 100):
        x = x * 2.0
        i += 1
        done = tf.reduce_sum(x) > 50.0
    return x, i


@pytest.mark.parametrize("n", [0, 2, 10])
def test_and_or_not_in_the_test_combine_tensors(n):
    f = tf.function(logic)
    x = tf.constant([1.0, 2.0])
    same(f(x, tf.constant(n)), logic(x, tf.constant(n)))
    ops = ops_of(f, x, tf.constant(n))
    assert "While" in ops and "If" not in ops           # no path per `and`: logical ops


def test_walrus_and_annotations_in_a_converted_loop():
    def g(x):
        total: float = 0.0
        while (s := tf.reduce_sum(x)) < 10.0:
            total: float = total + s
            x = x + 1.0
        return x, total, s                 # s: the value of the last (failing) test
    f = tf.function(g)
    for v in ([1.0, 2.0], [20.0, 0.0]):
        same(f(tf.constant(v)), g(tf.constant(v)))
    assert "While" in ops_of(f, tf.constant([1.0, 2.0]))


def test_loops_inside_for_with_and_try_are_converted():
    def g(x):
        log = []
        for k in range(2):                  # a Python `for`: two loops in the graph
            try:
                with tf.name_scope("grow"):
                    while tf.reduce_sum(x) < 10.0 * (k + 1):
                        x = x * 2.0
            finally:
                log.append(k)
        return x, len(log)
    f = tf.function(g)
    for v in ([1.0, 2.0], [0.25, 0.5], [30.0, 1.0]):
        same(f(tf.constant(v)), g(tf.constant(v)))
    assert ops_of(f, tf.constant([1.0, 2.0])).count("While") == 2


def test_loops_in_nested_functions_defined_inside_are_converted():
    def g(x):
        def grow(y):
            while tf.reduce_sum(y) < 10.0:
                y = y * 2.0
            return y
        return grow(x) + grow(x * 3.0)
    f = tf.function(g)
    for v in ([1.0, 2.0], [0.25, 0.5]):
        same(f(tf.constant(v)), g(tf.constant(v)))
    assert ops_of(f, tf.constant([1.0, 2.0])).count("While") == 2


# -- Python values: unchanged Python semantics ---------------------------------------------

def test_loop_on_python_ints_stays_a_python_loop_without_a_while_node():
    def g(x, n):
        i = 0
        while i < n:                       # Python ints: unrolled at trace time
            x = x * 2.0
            i += 1
        return x, i
    f = tf.function(g)
    out = f(tf.constant(1.5), 3)
    assert float(out[0]) == 12.0 and int(out[1]) == 3
    assert ops_of(f, tf.constant(1.5), 3).count("Mul") == 3 and "While" not in ops_of(f, tf.constant(1.5), 3)


def test_test_becoming_a_tensor_after_a_python_first_test_continues_as_a_while_node():
    def g(x):
        go = True
        while go:                          # a Python first test: a Python loop, until
            x = x * 2.0
            go = tf.reduce_sum(x) < 10.0   # the test is a tensor: the rest is a While node
        return x
    f = tf.function(g)
    # TensorFlow's AutoGraph raises NotImplementedError ("the condition of while loop started
    # as non-Tensor, then changed to Tensor"); tapeflow gives eager's value (it traced one path
    # per iteration before, until the decision limit)
    assert f(tf.constant(1.0)).numpy() == 16.0
    assert f(tf.constant(20.0)).numpy() == 40.0
    assert "While" in str(f.get_concrete_function(tf.constant(1.0)).graph)


# -- state: variables, modules, closures ----------------------------------------------------

def test_variables_assigned_in_the_body_match_eager():
    total, steps = tf.Variable(0.0), tf.Variable(0)

    def g(x):
        while total < 10.0:
            total.assign_add(tf.reduce_sum(x))
            steps.assign_add(1)
            x = x * 2.0
        return x

    f = tf.function(g)
    for v in ([1.0, 0.5], [4.0, 4.0], [0.1, 0.1]):
        for var in (total, steps):
            var.assign(var.numpy() * 0)
        got = f(tf.constant(v))
        got_state = (float(total), int(steps))
        for var in (total, steps):
            var.assign(var.numpy() * 0)
        same(got, g(tf.constant(v)))
        assert got_state == (float(total), int(steps))
    assert f.experimental_get_tracing_count() == 1


def test_a_test_assigning_a_variable_raises_naming_the_line():
    counter = tf.Variable(0.0)

    def g(x):
        while counter.assign_add(1.0) < tf.reduce_sum(x):   # a While's condition cannot assign
            x = x + 1.0
        return x

    with pytest.raises(TracingError) as e:
        tf.function(g)(tf.constant([1.0, 2.0]))
    assert "condition of a while loop assigns a variable" in str(e.value)
    assert line_of(g, "while counter.assign_add") in str(e.value)
    assert float(counter) == 0.0


class Base(tf.Module):
    def step(self, x):
        return x * 2.0


class Doubler(Base):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(1.5)
        self.__offset = 3.0                # a private (mangled) name

    def run(self, x):
        while tf.reduce_sum(x) < 100.0:
            x = super().step(x) * self.w + self.__offset
        return x

    traced = tf.function(run)


def test_loop_in_a_method_of_a_module_with_super_and_private_names():
    m = Doubler()
    x = tf.constant([1.0, 2.0])
    same(m.traced(x), m.run(x))
    m.w.assign(1.0)
    same(m.traced(x), m.run(x))
    assert m.traced.experimental_get_tracing_count() == 1


def test_closures_are_the_original_live_cells():
    limit = 10.0
    w = tf.Variable(2.0)

    def g(x):
        while tf.reduce_sum(x) < limit:
            x = x * w
        return x

    f = tf.function(g)
    same(f(tf.constant([1.0])), g(tf.constant([1.0])))
    w.assign(3.0)                          # a variable: read at every call
    same(f(tf.constant([1.0])), g(tf.constant([1.0])))
    limit = 1000.0                         # a Python value: read when tracing (a new shape)
    same(f(tf.constant([1.0, 1.0])), g(tf.constant([1.0, 1.0])))
    assert f.experimental_get_tracing_count() == 2
    new = convert.converted(g)
    assert new is not g and new.__code__ is not g.__code__
    cells = dict(zip(new.__code__.co_freevars, new.__closure__))
    assert all(cells[name] is cell for name, cell in zip(g.__code__.co_freevars, g.__closure__))


def test_the_rewritten_function_keeps_names_defaults_and_attributes():
    def g(x, k=2.0, *, m=3.0):
        """Doc."""
        while tf.reduce_sum(x) < m:
            x = x * k
        return x
    g.extra = "kept"
    new = convert.converted(g)
    assert (new.__name__, new.__qualname__, new.__doc__, new.__defaults__, new.__kwdefaults__,
            new.extra) == (g.__name__, g.__qualname__, "Doc.", (2.0,), {"m": 3.0}, "kept")
    assert new.__code__.co_filename == g.__code__.co_filename
    assert convert.converted(g) is new    # cached per function


def halve_until_small(x, rounds):
    while tf.reduce_sum(x) > 1.0:
        x = x * 0.5
    if rounds > 1:
        return halve_until_small(x + 10.0, rounds - 1)   # the global name, as before
    return x


def test_recursive_module_level_function_is_converted_and_calls_the_global():
    assert convert.status(halve_until_small).startswith("converted")
    new = convert.converted(halve_until_small)
    assert "halve_until_small" not in new.__code__.co_freevars
    for v in ([4.0, 8.0], [0.1, 0.2]):     # eagerly (Python loops), recursion included
        same(new(tf.constant(v), 3), halve_until_small(tf.constant(v), 3))
        same(tf.function(halve_until_small)(tf.constant(v), 1),
             halve_until_small(tf.constant(v), 1))


def test_functions_without_source_or_without_while_are_unchanged():
    lam = lambda x: x * 2.0                # noqa: E731
    ns = {}
    exec("def h(x):\n    while x > 0:\n        x = x - 1\n    return x\n", ns)
    def plain(x):
        return x + 1.0
    for fn in (lam, ns["h"], plain, print):
        assert convert.converted(fn) is fn
    assert "no source" in convert.status(ns["h"]) and "no `while`" in convert.status(plain)


# -- gradients ------------------------------------------------------------------------------

def powers(x, n):
    i = tf.constant(0)
    s = tf.ones_like(x)
    while i < n:
        s = s * x + tf.sin(x)
        i += 1
    return tf.reduce_sum(s * s)


def tape_grads(fn, x, n):
    x = tf.constant(x)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = fn(x, n)
        g = inner.gradient(y, x)
        gs = tf.reduce_sum(g * g)
    return y, g, outer.gradient(gs, x)


@pytest.mark.parametrize("n", [1, 3])
def test_gradients_through_the_function_match_eager_to_second_order(n):
    f = tf.function(powers)
    x = np.array([0.5, -1.2])
    for got, want in zip(tape_grads(f, x, tf.constant(n)), tape_grads(powers, x, tf.constant(n))):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)
    check_gradients(lambda a: f(a, tf.constant(n)), x, order=2)


def test_gradient_of_a_loop_that_does_not_run_is_zero_through_the_function():
    f = tf.function(powers)
    y, g, h = tape_grads(f, np.array([0.5, -1.2]), tf.constant(0))
    assert float(y) == 2.0 and np.all(g.numpy() == 0) and np.all(h.numpy() == 0)


def test_gradients_taken_inside_the_function_match_eager_to_second_order():
    def g(x, n):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                i = n * 0
                s = x
                while i < n:
                    s = tf.tanh(s) * x
                    i += 1
                y = tf.reduce_sum(s)
            dy = t1.gradient(y, x)
            d = tf.reduce_sum(dy * dy)
        return y, dy, t2.gradient(d, x)
    f = tf.function(g)
    x = tf.constant(np.array([0.3, -0.7]))
    for n in (2, 4):
        same(f(x, tf.constant(n)), g(x, tf.constant(n)))
    assert f.experimental_get_tracing_count() == 1


# -- errors name the user's line ------------------------------------------------------------

def with_return(x):
    while x > 0:
        x = x - 1.0
        if x > 100.0:
            return x
    return x


COUNT = 0


def with_global(x):
    global COUNT
    while x > 0:
        x = x - 1.0
        COUNT = COUNT + 1
    return x


def make_with_nonlocal():
    count = 0

    def with_nonlocal(x):
        nonlocal count
        while x > 0:
            x = x - 1.0
            count = count + 1
        return x
    return with_nonlocal


def with_global_statement(x):
    while x > 0:
        global COUNT
        x = x - 1.0
    return x


@pytest.mark.parametrize("fn, reason", [
    (with_return, "has a `return`"), (with_global_statement, "has a `global` or `nonlocal`"),
    (with_global, "assigns 'COUNT', declared global"),
    (make_with_nonlocal(), "assigns 'count', declared nonlocal")])
def test_loops_that_are_not_converted_raise_naming_the_line_and_why(fn, reason):
    with pytest.raises(TracingError) as e:
        tf.function(fn)(tf.constant(3.0))
    msg = str(e.value)
    assert line_of(fn, "while x > 0") in msg and reason in msg and "not converted" in msg


def test_not_converted_loop_with_few_decisions_still_traces_by_paths():
    def g(x):
        while x > 0:                       # `return` after one step: two paths, no loop
            x = x * 2.0
            return x
        return x
    f = tf.function(g)
    for v in (1.5, -1.5):
        assert float(f(tf.constant(v))) == float(g(tf.constant(v)))
    assert f.experimental_get_tracing_count() == 1


def halve(x):
    while tf.reduce_sum(x) > 1.0:
        x = x * 0.5
    return x


def test_a_loop_in_a_called_function_is_not_converted_and_the_error_says_so():
    with pytest.raises(TracingError) as e:
        tf.function(lambda x: halve(x) + 1.0)(tf.constant([4.0, 8.0]))
    assert line_of(halve, "while tf.reduce_sum") in str(e.value)
    assert "Decorate 'halve' with tapeflow.function" in str(e.value)
    nested = tf.function(halve)                     # ... which works: converted and inlined
    f = tf.function(lambda x: nested(x) + 1.0)
    same(f(tf.constant([4.0, 8.0])), halve(tf.constant([4.0, 8.0])) + 1.0)


def test_a_function_that_cannot_be_converted_says_why():
    ns = {"tf": tf}
    exec("def h(x):\n    while tf.reduce_sum(x) > 1.0:\n        x = x * 0.5\n    return x\n", ns)
    with pytest.raises(TracingError, match="not converted: no source"):
        tf.function(ns["h"])(tf.constant([4.0, 8.0]))


def test_name_assigned_only_in_the_loop_and_read_after_is_its_last_value_or_raises_at_run():
    """TensorFlow 2.21: ``t`` is its last value; a loop that ran zero times raises
    InvalidArgumentError "loop must iterate at least once to initialize t" when it runs."""
    def g(x):
        while x < 10.0:
            t = x * 2.0
            x = x + 1.0
        return t
    f = tf.function(g)
    assert float(f(tf.constant(3.0))) == 18.0
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="loop must iterate at least once to initialize t") as e:
        f(tf.constant(12.0))
    assert line_of(g, "while x < 10.0") in str(e.value)


def test_name_assigned_only_in_the_loop_as_a_python_object_raises_must_be_defined():
    def g(x):
        while x < 10.0:
            t = "text"
            x = x + 1.0
        return t
    with pytest.raises(TracingError) as e:
        tf.function(g)(tf.constant(3.0))
    msg = str(e.value)
    assert "'t' must be defined before the loop" in msg and "holds a str" in msg
    assert line_of(g, "while x < 10.0") in msg and line_of(g, "return t") in msg


def test_name_read_by_the_test_and_undefined_before_the_loop_raises_must_be_defined():
    def g(x):
        while tf.reduce_sum(y) < 10.0:     # noqa: F821
            y = x * 2.0
            x = y
        return x
    with pytest.raises(TracingError) as e:
        tf.function(g)(tf.constant(3.0))
    assert "'y' must be defined before the loop" in str(e.value)
    assert line_of(g, "while tf.reduce_sum(y)") in str(e.value)


def test_name_read_before_assigned_across_iterations_raises_must_be_defined():
    def g(x):
        while x < 10.0:
            x = x + 1.0
            if x > 5.0:
                x = x + prev               # noqa: F821
            prev = x                       # noqa: F841
        return x
    with pytest.raises(TracingError) as e:
        tf.function(g)(tf.constant(3.0))
    assert "'prev' must be defined before the loop" in str(e.value)
    assert line_of(g, "while x < 10.0") in str(e.value)


def test_loop_variable_changing_shape_or_holding_a_python_object_raises_naming_it():
    def grows(x):
        while tf.reduce_sum(x) < 10.0:
            x = tf.concat([x, x], 0)
        return x

    def text(x):
        s = "a"
        while x < 10.0:
            x = x + 1.0
            s = s + "b"
        return x, s
    with pytest.raises(TracingError) as e:
        tf.function(grows)(tf.constant([1.0]))
    assert "changes 'x' from float32[1] to float32[2]" in str(e.value)
    assert line_of(grows, "while tf.reduce_sum") in str(e.value)
    with pytest.raises(TracingError) as e:
        tf.function(text)(tf.constant(1.0))
    assert "'s' is a loop variable" in str(e.value) and line_of(text, "while x < 10.0") in str(e.value)


def test_an_op_error_in_a_converted_body_names_the_users_line():
    def g(x):
        while tf.reduce_sum(x) < 10.0:
            x = x + tf.ones([3])
        return x
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.function(g)(tf.constant([1.0, 2.0]))
    assert line_of(g, "x = x + tf.ones([3])") in str(e.value)


# -- compiled, and inspected ------------------------------------------------------------------

def newton_sqrt(a):
    x = a
    it = 0
    while tf.reduce_max(tf.abs(x * x - a)) > 1e-5 and it < 50:
        x = 0.5 * (x + a / x)
        it += 1
    return x, it


def test_compiled_program_runs_the_converted_loop():
    tf.set_backend("numba")                # restored by the conftest fixture
    f = tf.function(newton_sqrt)
    for v in ([2.0, 9.0], [0.25, 100.0]):
        a = tf.constant(v)
        same(f(a), newton_sqrt(a))
        np.testing.assert_allclose(f(a)[0].numpy(), np.sqrt(v), rtol=1e-5)
    program = f.get_concrete_function(a).program
    assert program.fallback is None and program.kernels and "while " in program.source
    assert f.experimental_get_tracing_count() == 1


def test_dump_and_lower_show_the_while_node(capsys):
    assert "While[" in tf.function(newton_sqrt).lower(tf.constant([2.0])).traced
    assert cli.main(["dump", f"{HERE}:newton_sqrt", "--spec", "f32[2]"]) == 0
    out = capsys.readouterr().out
    assert "While[" in out and "cond_graph" in out
