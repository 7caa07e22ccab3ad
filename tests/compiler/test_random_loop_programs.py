"""Random loop programs drawn by hypothesis (issue 12): converted ``for`` over ``tf.range``
with ``break``/``continue`` on tensors and on the counter, a TensorArray written and read in
the loop, nested loops (a ``for`` over ``tf.range`` and a ``while`` on a tensor), a called
helper with its own ``if``/``while`` and ``return`` in a branch and in a Python loop, and a
``return`` in an ``if`` after the loop.

Each program runs eagerly (the Python loop) and as a ``function``: on the NumPy interpreter
for every drawn program, and compiled by Numba for a few. Values and gradients (first and
second order, under tapes through the function; first order with the tape inside it) equal
the eager ones, with TensorFlow's None versus zeros: ``z`` is read nowhere (None everywhere),
``u`` only in the loop body (None eagerly when the loop does not reach it, zeros through a
function: TensorFlow 2.21's answers, tests/tracer/test_loops_for.py); gradients match central
finite differences at first and second order. ``-m slow`` draws many more.
"""
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import tapeflow as tf
import tapeflow.tracer.engine as backend
from tapeflow.testing import check_gradients

SETTINGS = dict(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
SIZE = 5                       # the TensorArray's size; trip counts are at most SIZE
TRIPS = (0, 2, SIZE)
X = np.array([0.5, -0.9])
U = np.array([0.3, 0.2])
Z = np.array([1.5, -2.0])


def _c(integers, lo, hi):
    """A constant in [lo, hi] with three decimals."""
    return f"{lo + (hi - lo) * integers(0, 1000) / 1000:.3f}"


def _helper(integers, k):
    return "\n".join([
        f"def helper_{k}(v):",
        f"    if tf.reduce_sum(v) > {_c(integers, -1, 1)}:",
        f"        return tf.tanh(v * {_c(integers, 0.5, 1.5)})",
        "    for j in range(3):                     # a Python loop: return per Python",
        f"        if j == {integers(0, 3)}:",
        f"            return v * {_c(integers, 0.5, 1.0)} + 0.125 * j",
        "    w = v",
        f"    while tf.reduce_max(tf.abs(w)) > {_c(integers, 1.0, 2.0)}:",
        "        w = w * 0.5",
        "    return w - 0.125",
    ])


KINDS = ["affine", "if", "jump", "jump_i", "helper", "nested_for", "nested_while", "u", "read"]


def _body(integers, k, depth, kinds=None):
    """A loop body: 1 to 3 statements of drawn kinds, or each of ``kinds`` once, in a drawn
    order."""
    if kinds:
        left = list(kinds)
        order = [left.pop(integers(0, 2**20) % len(left)) for _ in range(len(kinds))]
    else:
        order = [None] * integers(1, 3)
    out = []
    for kind in order:
        kinds = KINDS if depth == 0 else ["affine", "if", "helper", "u"]
        kind = kind or kinds[integers(0, 2**20) % len(kinds)]
        if kind == "affine":
            out.append(f"h = h * {_c(integers, 0.5, 1.0)} + tf.sin(x) * {_c(integers, -1, 1)}")
        elif kind == "if":
            out += [f"if tf.reduce_sum(h) > {_c(integers, -2, 2)}:",
                    f"    h = h * {_c(integers, 0.5, 1.5)}", "else:", "    h = tf.tanh(h + x)"]
        elif kind == "jump":
            out += [f"if tf.reduce_max(h) > {_c(integers, 0.5, 3)}:",
                    f"    {['break', 'continue'][integers(0, 1)]}"]
        elif kind == "jump_i":
            out += [f"if i == {integers(0, SIZE)}:", f"    {['break', 'continue'][integers(0, 1)]}"]
        elif kind == "helper":
            out.append(f"h = helper_{k}(h) + x * 0.25")
        elif kind == "nested_for":
            out += [f"for j in tf.range({integers(1, 3)}):"]
            out += ["    " + line for line in _body(integers, k, depth + 1)]
        elif kind == "nested_while":
            out += ["m = h", f"while tf.reduce_sum(tf.abs(m)) > {_c(integers, 0.5, 1.5)}:",
                    "    m = m * 0.5", "h = h + m * 0.25"]
        elif kind == "u":
            out.append(f"h = h + u * {_c(integers, -1, 1)}")
        else:      # element i - 1 (or the unwritten element 0: zeros)
            out.append(f"h = h + ta.read(tf.maximum(i - 1, 0)) * {_c(integers, -0.5, 0.5)}")
    return out


def generate(integers, k, kinds=None):
    """The source of ``helper_k`` and ``prog_k(x, u, z, n)`` (``kinds``: see ``_body``)."""
    lines = [f"def prog_{k}(x, u, z, n):",
             f"    ta = tf.TensorArray(x.dtype, size={SIZE}, element_shape=[2], "
             f"clear_after_read=False)",
             "    h = x * 0.5",
             "    for i in tf.range(n):"]
    lines += ["        " + line for line in _body(integers, k, 0, kinds)]
    lines += ["        ta = ta.write(i, h)",
              "    s = ta.stack()",
              f"    if tf.reduce_sum(s) > {_c(integers, -2, 2)}:",
              "        return s * s",
              "    return s + tf.reduce_sum(h)"]
    return _helper(integers, k) + "\n\n\n" + "\n".join(lines) + "\n"


@st.composite
def programs(draw, kinds=None):
    return generate(lambda lo, hi: draw(st.integers(lo, hi)), 0, kinds)


_modules = itertools.count()


def load(source, directory):
    """``prog_0`` of ``source`` written to a file and imported (conversion reads the source)."""
    import importlib.util
    path = directory / f"random_loop_program_{next(_modules)}.py"
    path.write_text("import tapeflow as tf\n\n\n" + source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.source = source
    return module.prog_0


def _arrays(values):
    return [None if v is None else np.asarray(v.numpy()) for v in values]


def gradients(fn, n):
    """y, first-order gradients w.r.t. (x, u, z), and the gradients of the sum of the first
    ones w.r.t. (x, u, z) (second order), tapes outside ``fn``."""
    x, u, z = (tf.constant(v) for v in (X, U, Z))
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([x, u, z])
        with tf.GradientTape() as inner:
            inner.watch([x, u, z])
            y = fn(x, u, z, tf.constant(n))
        first = inner.gradient(y, [x, u, z])
        total = sum(tf.reduce_sum(g) for g in first if g is not None)
    second = ([None] * 3 if isinstance(total, int) else outer.gradient(total, [x, u, z]))
    return _arrays([y]) + _arrays(first) + _arrays(second)


def inside(fn):
    """The first-order gradients taken by a tape inside a function (None as NaNs)."""
    @tf.function
    def grads(x, u, z, n):
        with tf.GradientTape() as tape:
            tape.watch([x, u, z])
            y = fn(x, u, z, n)
        return [tf.fill([2], np.nan) if g is None else g
                for g in tape.gradient(y, [x, u, z])]
    return grads


def same(want, got, what, rtol=1e-10):
    """``got`` equals ``want`` leaf by leaf; where ``want`` is None (eager), ``got`` is None or
    zeros (TensorFlow's rule through a function); NaN stands for None inside a function."""
    for k, (a, b) in enumerate(zip(want, got, strict=True)):
        if b is not None and np.all(np.isnan(b)):
            b = None
        if a is None:
            assert b is None or not np.any(b), f"{what}[{k}]: {b} where eager has None"
            continue
        assert b is not None, f"{what}[{k}]: None where eager has {a}"
        np.testing.assert_allclose(b, a, rtol=rtol, atol=1e-12, err_msg=f"{what}[{k}]")


def check(source, tmp_path, backends=("numpy",), fd=True):
    prog = load(source, tmp_path)
    for name in backends:
        backend.set_backend(name)
        f, g = tf.function(prog), inside(prog)
        for n in TRIPS:
            want = gradients(prog, n)
            assert want[3] is None and want[6] is None, "z is read nowhere: None eagerly"
            got = gradients(f, n)
            assert got[3] is None and got[6] is None, "z: None through the function too"
            same(want, got, f"n={n}, through a function on {name}:\n{source}")
            args = [tf.constant(v) for v in (X, U, Z)] + [tf.constant(n)]
            same(want[1:4], _arrays(g(*args)), f"n={n}, tape inside a function on {name}:\n{source}")
        assert f.experimental_get_tracing_count() == 1
        ops = [node.op for node in f.get_concrete_function(*args).graph.nodes]
        assert "While" in ops, "the for over tf.range is one While node"
    if fd:
        for n in TRIPS[1:]:
            check_gradients(lambda a, b: f(a, b, tf.constant(Z), tf.constant(n)), X, U,
                            order=2, rtol=1e-4, atol=1e-5)


@pytest.fixture
def restore_backend():
    old = backend.get_backend()
    yield
    backend.set_backend(old)


@settings(max_examples=12, **SETTINGS)
@given(programs())
def test_random_loop_programs_on_the_interpreter(tmp_path, restore_backend, source):
    check(source, tmp_path)


@settings(max_examples=12, **SETTINGS)
@given(programs(kinds=KINDS))
def test_random_loop_programs_with_every_statement_on_the_interpreter(tmp_path, restore_backend,
                                                                       source):
    check(source, tmp_path)


# Each compiled program holds a few kinds of statement: with all of them, the second-order
# programs' generated functions pass MAX_FUNCTION_LINES (800) and run on the interpreter.
# The default run compiles the first (the most kinds); the others, a minute of Numba each
# from a cold cache, run under -m slow.
COMPILED = [["affine", "if", "jump", "jump_i", "u", "read"], ["affine", "helper", "u"],
            ["nested_for", "jump"], ["nested_while", "u"]]


@pytest.mark.filterwarnings("error::tapeflow.codegen.generate.InterpreterFallbackWarning")
@pytest.mark.parametrize("kinds", [pytest.param(k, id="-".join(k), marks=[pytest.mark.slow] if i else [])
                                   for i, k in enumerate(COMPILED)])
def test_random_loop_programs_compiled(tmp_path, restore_backend, kinds):
    """Numba takes a minute or so per program (its forward, backward and second-order ones)."""
    @settings(max_examples=1, phases=[Phase.generate], **SETTINGS)   # no shrinking: compiles
    @given(programs(kinds=kinds))
    def run(source):
        check(source, tmp_path, backends=("numba",), fd=False)
    run()


@pytest.mark.slow
@settings(max_examples=200, **SETTINGS)
@given(programs())
def test_many_random_loop_programs(tmp_path, restore_backend, source):
    check(source, tmp_path, backends=("numpy", "numba"))
