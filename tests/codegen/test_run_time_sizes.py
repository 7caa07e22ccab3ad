"""Sizes only the run knows compile (codegen/shape_free.py, ``RunDim``): a dynamic-size
TensorArray written in a loop whose trip count is data (``tf.range(n)`` of an argument, a
data-dependent ``while``, ``tf.while_loop``) and its gradients, with a tape inside the function
or outside it, to second order.

Each test runs the function on the Numba backend and on the interpreter (the reference) for
trip counts 0, 1 and several, and checks that every program ran compiled: no fallback, no
call sent back to the interpreter by a failed size check (``Program.reruns``), and one
program (one Numba compile) for every trip count.
"""
import re

import numpy as np
import pytest

import tapeflow as tf
import tapeflow.tracer.engine as backend
from tapeflow.codegen.generate import generate
from tapeflow.errors import InvalidArgumentError
from tapeflow.tracer.engine import optimize

TRIPS = (0, 1, 2, 5)
X = np.array([[0.5, -1.0], [0.25, 2.0], [-0.75, 0.1], [1.5, -0.3], [0.2, 0.9], [-1.1, 0.4]],
             np.float32)


@pytest.fixture
def programs(monkeypatch):
    """The Programs the Numba backend compiles while the test runs, in order."""
    made = []
    compile_numba = backend.compile_numba

    def recording(graph, name="program", *args, **kwargs):
        prog = compile_numba(graph, name, *args, **kwargs)
        made.append(prog)
        return prog
    monkeypatch.setattr(backend, "compile_numba", recording)
    return made


def rnn(x, n):
    """TensorFlow's RNN pattern: a recurrence over a sequence of run-time length, its outputs
    collected in a dynamic-size TensorArray."""
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    h = tf.zeros_like(x[0])
    for i in tf.range(n):
        h = tf.tanh(0.5 * h + x[i])
        ta = ta.write(i, h)
    return tf.reduce_sum(ta.stack() ** 2), ta.size()


def until(x, n):
    """A while whose stop is data (a sum against n): the trip count is not n."""
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    i = tf.constant(0)
    s = x[0]
    while tf.reduce_sum(s * s) < tf.cast(n, tf.float32):
        s = s * 1.5 + 0.25
        ta = ta.write(i, s)
        i += 1
    return tf.reduce_sum(tf.sin(ta.stack())), ta.size()


def api(x, n):
    """tf.while_loop carrying a TensorArray that reads its previous element."""
    ta = tf.TensorArray(tf.float32, size=1, dynamic_size=True, clear_after_read=False).write(0, x[0])

    def body(i, t):
        return i + 1, t.write(i + 1, tf.sin(t.read(i)) * x[1])
    _, ta = tf.while_loop(lambda i, t: i < n, body, [tf.constant(0), ta])
    return tf.reduce_sum(ta.stack()), ta.size()


def tape_inside(fn, order):
    def grads(x, n):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y, size = fn(x, n)
            g = inner.gradient(y, x)
        return (y, size, g) + ((outer.gradient(g, x),) if order == 2 else ())
    return grads


def tape_outside(fn, order):
    f = tf.function(fn)

    def grads(x, n):
        if order == 1:      # one tape: a forward and a backward program
            with tf.GradientTape() as tape:
                tape.watch(x)
                y, size = f(x, n)
            return y, size, tape.gradient(y, x)
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y, size = f(x, n)
            g = inner.gradient(y, x)
        return y, size, g, outer.gradient(g, x)
    return grads


def run_both(make, trips=TRIPS, x=X):
    """{trip count: (compiled results, interpreter results)}: ``make()`` gives the callable
    (a fresh tf.function per backend)."""
    out = {}
    for backend_name in ("numba", "numpy"):
        tf.set_backend(backend_name)
        try:
            call = make()
            for n in trips:
                res = call(tf.constant(x), tf.constant(n))
                out.setdefault(n, []).append([r.numpy() for r in res])
        finally:
            tf.set_backend("numba")
    return out


def assert_same(results):
    for n, (got, want) in results.items():
        assert len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            assert a.shape == b.shape and a.dtype == b.dtype, n
            np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6, err_msg=f"trip count {n}")


def assert_compiled(progs, one_program=()):
    """Every program compiled and served every call; those named in ``one_program`` are one
    Numba compile for all trip counts (the same dispatchers)."""
    assert progs
    for p in progs:
        assert p.fallback is None, (p.name, p.fallback)
        assert p.reruns == 0, p.name
    for name in one_program:
        named = [p for p in progs if p.name == name]
        assert named and all(p.kernels == named[0].kernels for p in named), name
        # each kernel compiled (or loaded from Numba's disk cache) once for all trip counts
        assert sum(named[0].stats().values()) == len(named[0].kernels), name


@pytest.mark.parametrize("fn, sizes", [(rnn, [0, 1, 2, 5]), (until, [0, 0, 1, 2]),
                                       (api, [1, 2, 3, 6])])
def test_a_tensor_array_of_run_time_size_compiles(fn, sizes, programs):
    """The values and the TensorArray's size (``until`` stops on its data: 0, 0, 1, 2 trips;
    ``api`` starts with one element) are the interpreter's; one program for every trip
    count."""
    results = run_both(lambda: tf.function(fn))
    assert_same(results)
    assert [int(results[n][0][1]) for n in TRIPS] == sizes
    assert_compiled(programs, [fn.__name__])
    assert len(programs) == 1


# Second order through a loop of run-time trip count costs 15-40 s of cold Numba compile per
# program: the default run compiles rnn's (inside a function); the others run under -m slow.
SECOND = pytest.param(2, marks=pytest.mark.slow, id="2")


@pytest.mark.parametrize("fn, order", [
    pytest.param(fn, order, id=f"{fn.__name__}-{order}",
                 marks=[pytest.mark.slow] if order == 2 and fn is not rnn else [])
    for fn in (rnn, until, api) for order in (1, 2)])
def test_its_gradients_with_a_tape_inside_compile(fn, order, programs):
    results = run_both(lambda: tf.function(tape_inside(fn, order)))
    assert_same(results)
    assert_compiled(programs, ["grads"])


@pytest.mark.parametrize("order", [1, SECOND])
@pytest.mark.parametrize("fn", [rnn, api])
def test_its_gradients_with_a_tape_outside_compile(fn, order, programs):
    """The forward program (a WhileStacks returning stacks as long as the trip count) and the
    backward one (read the stacks, grow and shrink the list's cotangent) are compiled; the
    forward is one program, the backward one source whatever the trip count (its inputs, the
    stacks, have it as their size)."""
    results = run_both(lambda: tape_outside(fn, order))
    assert_same(results)
    one = [f"{fn.__name__}_forward"] + ([f"{fn.__name__}_backward"] if order == 1 else [])
    assert_compiled(programs, one)


def test_values_gradients_and_static_shape_are_tensorflows():
    """TensorFlow 2.21 (x = X[:3]): stack() has static shape (None, 2); n=3 gives y 2.3408923
    and dy/dx [[0.8917117, -0.5717809], [0.4192262, 0.3234439], [-0.7404422, 0.7545431]];
    n=1 y 0.7935779, dy/dx [[0.72686195, -0.6397], [0, 0], [0, 0]]; n=0 zeros."""
    shapes = []

    def rnn_shape(x, n):
        y, size = rnn(x, n)
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(n):
            ta = ta.write(i, x[i])
        shapes.append(tuple(ta.stack().shape))
        return y, size
    f = tf.function(tape_inside(rnn_shape, 1))
    y, size, g = f(tf.constant(X[:3]), tf.constant(3))
    np.testing.assert_allclose(float(y), 2.3408923, rtol=1e-6)
    np.testing.assert_allclose(g.numpy(), [[0.8917117, -0.5717809], [0.4192262, 0.3234439],
                                           [-0.7404422, 0.7545431]], rtol=1e-5)
    y, size, g = f(tf.constant(X[:3]), tf.constant(1))
    np.testing.assert_allclose(float(y), 0.7935779, rtol=1e-6)
    np.testing.assert_allclose(g.numpy(), [[0.72686195, -0.6397], [0, 0], [0, 0]], rtol=1e-5)
    y, size, g = f(tf.constant(X[:3]), tf.constant(0))
    assert float(y) == 0 and int(size) == 0 and not g.numpy().any()
    assert shapes == [(None, 2)]


def test_a_failed_size_check_runs_the_call_on_the_interpreter(programs):
    """``stack() * w`` with w [3, 2]: the program assumes the stack has 3 rows (checked); at one
    row it broadcasts, so that call's results are the interpreter's (``reruns``); at two rows
    the interpreter's error is the call's."""
    w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2))

    def scaled(x, n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(n):
            ta = ta.write(i, x[i])
        return ta.stack() * w
    f = tf.function(scaled)
    np.testing.assert_array_equal(f(tf.constant(X), tf.constant(3)).numpy(), X[:3] * w.numpy())
    assert programs[0].fallback is None and programs[0].reruns == 0
    np.testing.assert_array_equal(f(tf.constant(X), tf.constant(1)).numpy(), X[:1] * w.numpy())
    assert programs[0].reruns == 1
    with pytest.raises(InvalidArgumentError, match="could not be broadcast") as compiled:
        f(tf.constant(X), tf.constant(2))
    tf.set_backend("numpy")
    try:
        with pytest.raises(InvalidArgumentError) as interpreted:
            tf.function(scaled)(tf.constant(X), tf.constant(2))
    finally:
        tf.set_backend("numba")
    # the same op, shapes and user line (the caller's line differs: another call)
    assert str(compiled.value).split(", called from")[0] == str(interpreted.value).split(", called from")[0]
    assert len(programs) == 1


def test_reading_past_the_end_is_tensorflows_error(programs):
    """TensorListGetItem past the run-time size: the compiled program raises the interpreter's
    InvalidArgumentError, TensorFlow's text."""
    def past(x, n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(n):
            ta = ta.write(i, x[i])
        return ta.read(n)
    with pytest.raises(InvalidArgumentError,
                       match=r"Trying to access element 2 in a list with 2 elements\."):
        tf.function(past)(tf.constant(X), tf.constant(2))
    assert programs and programs[0].fallback is None


def test_the_source_reads_run_time_sizes_from_arrays():
    """The list's size is read from the arrays the program makes (no literal trip count, no
    None, every ``$id$`` placeholder resolved), and the entry check reads the arguments only:
    no decision on a run-time size is taken on entry."""
    graph = optimize(tf.function(rnn).get_concrete_function(tf.constant(X), tf.constant(4)).graph)
    source = generate(graph, "rnn").source
    body = source.split("import math")[1].split("def make_call")[0]
    code = [ln.split("  # ")[0] for ln in body.splitlines()]
    params = set(re.search(r"def rnn\((.*)\):", body).group(1).split(", "))
    read = set(re.findall(r"\b(v[a-z]+)\.shape\[", " ".join(code)))
    assert read - params                                    # sizes of arrays made while running
    assert not any("None" in ln or "$" in ln for ln in code)
    (entry,) = [ln for ln in code if ln.lstrip().startswith("if (not")]
    assert set(re.findall(r"\b(v[a-z]+)\.shape\[", entry)) <= params


def _loop_lines(gen, op):
    """Code lines of ``op``'s nodes inside a loop (indented past the function body)."""
    lines = gen.source.splitlines()
    return [lines[n - 1].split("  # ")[0] for n, node in sorted(gen.line_nodes.items())
            if node.op == op and len(lines[n - 1]) - len(lines[n - 1].lstrip()) > 4]


def test_the_list_grows_into_spare_rows_and_is_written_in_place():
    """Each iteration's write past the end appends into the list's capacity buffer, which is
    reallocated only when full, at twice its rows (amortised O(1) per write, not a copy of the
    list per iteration), and the element is written in place."""
    graph = optimize(tf.function(rnn).get_concrete_function(tf.constant(X), tf.constant(4)).graph)
    gen = generate(graph, "rnn")
    concat, write = _loop_lines(gen, "ConcatV2"), _loop_lines(gen, "TensorListSetItem")
    allocs = [ln for ln in concat if "np.empty(" in ln]
    assert len(allocs) == 1 and "2 * cap" in allocs[0]
    depth = len(allocs[0]) - len(allocs[0].lstrip())
    guard = next(ln for ln in reversed(concat[:concat.index(allocs[0])])
                 if len(ln) - len(ln.lstrip()) < depth)
    assert re.search(r"if need\d+ > cap\d+\.shape\[0\]:", guard)
    assert write and not any(".copy()" in ln for ln in write)


@pytest.mark.parametrize("fn", [rnn, api])
def test_past_the_memory_budget_the_checkpointed_plan_compiles(fn, programs):
    """A zero budget: the loop gradient keeps checkpoints of the list (a list of copies, since
    its size changes) and recomputes segments from them; the capacity buffer is not the
    restored list's, so it starts again from it."""
    with tf.config.loop_memory(0):
        results = run_both(lambda: tf.function(tape_inside(fn, 1)), trips=(0, 1, 5))
    assert_same(results)
    assert_compiled(programs, ["grads"])
    # the list's checkpoints: a list of arrays, restored by copy at each segment
    assert any(re.search(r"(stack\d+) = \[np\.empty\(\(0, 0, \).* for _ in range\(max\(segs", p.source)
               and re.search(r"rt\.fresh_copy\(stack\d+\[segs\d+\]\)", p.source) for p in programs)


# -- loop variables whose size changes across iterations (shape_invariants) -----------------

def grow_rows(x, n):
    """AutoGraph's set_loop_options: a loop variable gains a row per iteration."""
    v = x[:1]
    for i in tf.range(n):
        tf.autograph.experimental.set_loop_options(shape_invariants=[(v, tf.TensorShape([None, 2]))])
        v = tf.concat([v, tf.sin(v[-1:]) * x[1]], 0)
    return tf.reduce_sum(v ** 2), tf.shape(v)


def shrink(x, n):
    """A loop variable that loses its first element per iteration."""
    v = tf.reshape(x, [-1])
    for i in tf.range(n):
        tf.autograph.experimental.set_loop_options(shape_invariants=[(v, tf.TensorShape([None]))])
        v = v[1:] * 2.0
    return tf.reduce_sum(v), tf.shape(v)


def while_loop_concat(x, n):
    """tf.while_loop's shape_invariants: the first row appended, halved, per iteration."""
    def body(i, v):
        return i + 1, tf.concat([v, v[:1] * 0.5], 0)
    _, v = tf.while_loop(lambda i, v: i < n, body, [tf.constant(0), x[:2]],
                         shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, 2])])
    return tf.reduce_sum(tf.tanh(v)), tf.shape(v)


CHANGING = [grow_rows, shrink, while_loop_concat]


@pytest.mark.parametrize("fn", CHANGING)
def test_a_loop_variable_that_changes_size_compiles(fn, programs):
    results = run_both(lambda: tf.function(fn))
    assert_same(results)
    assert_compiled(programs, [fn.__name__])
    assert len(programs) == 1


@pytest.mark.parametrize("order", [1, SECOND])
@pytest.mark.parametrize("fn", CHANGING)
def test_its_gradients_compile(fn, order, programs):
    results = run_both(lambda: tf.function(tape_inside(fn, order)))
    assert_same(results)
    assert_compiled(programs, ["grads"])


@pytest.mark.parametrize("fn", [shrink, while_loop_concat])
def test_its_gradients_through_the_function_compile(fn, programs):
    results = run_both(lambda: tape_outside(fn, 1))
    assert_same(results)
    assert_compiled(programs, [f"{fn.__name__}_forward", f"{fn.__name__}_backward"])


def test_a_stack_of_rows_of_changing_size_leaves_the_forward_on_the_interpreter(programs):
    """Through the function the loop's stacks are tensors (residuals of the call); the grown
    variable's own rows, which its gradient reads, have one size per iteration: no tensor
    holds them, so that forward program runs on the interpreter (saying why), the backward
    compiled, and the values are the interpreter's."""
    results = run_both(lambda: tape_outside(grow_rows, 1))
    assert_same(results)
    forward = [p for p in programs if p.name == "grow_rows_forward"]
    assert forward and all("stack of rows whose size changes" in p.fallback for p in forward)
    assert_compiled([p for p in programs if p.name == "grow_rows_backward"])


def test_changing_sizes_are_tensorflows():
    """TensorFlow 2.21 (x = X): the grown variable's static shape is (None, 2); n=3 gives y
    11.392415, shape [4, 2], dy/dx[:2] [[1.0560509, -5.3918667], [0.13052458, 6.9940987]];
    the shrinking one at n=3 y 23.6, shape [9], dy/dx[:2] [[0, 0], [0, 8]], at n=1 y 4.4,
    dy/dx[:2] [[0, 2], [2, 2]]. (The gradient of the shrinking loop is the case whose seed,
    a broadcast 1, must not be taken for a size read from the inputs.)"""
    shapes = []

    def grow_shape(x, n):
        y, s = grow_rows(x, n)
        v = x[:1]
        for i in tf.range(n):
            tf.autograph.experimental.set_loop_options(shape_invariants=[(v, tf.TensorShape([None, 2]))])
            v = tf.concat([v, v[-1:]], 0)
        shapes.append(tuple(v.shape))
        return y, s
    y, s, g = tf.function(tape_inside(grow_shape, 1))(tf.constant(X), tf.constant(3))
    np.testing.assert_allclose(float(y), 11.392415, rtol=1e-6)
    assert s.numpy().tolist() == [4, 2] and shapes == [(None, 2)]
    np.testing.assert_allclose(g.numpy()[:2], [[1.0560509, -5.3918667], [0.13052458, 6.9940987]],
                               rtol=1e-5)
    f = tf.function(tape_inside(shrink, 1))
    y, s, g = f(tf.constant(X), tf.constant(3))
    np.testing.assert_allclose(float(y), 23.6, rtol=1e-6)
    assert s.numpy().tolist() == [9]
    np.testing.assert_allclose(g.numpy()[:2], [[0, 0], [0, 8]])
    y, s, g = f(tf.constant(X), tf.constant(1))
    np.testing.assert_allclose(float(y), 4.4, rtol=1e-6)
    np.testing.assert_allclose(g.numpy()[:2], [[0, 2], [2, 2]])
