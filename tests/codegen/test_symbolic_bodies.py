"""Shape-generic programs through control flow: the graphs nested in If, While and the loop
gradients read their sizes from the program's arguments too (codegen/shape_free.py), so a
function traced at other input sizes generates the same source and shares one compile.

Compiles are counted from the compile log (one record per ``compile_numba``: ``cache miss``
is a Numba compile, ``hit (in memory)`` a program whose source was compiled already), with a
fresh cache directory so nothing comes from disk. Every compiled result is checked against
the eager (un-``function``ed) run; W8's gradients against hand NumPy BPTT as well.
"""
import logging
import os
import sys
import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.codegen.generate import generate
from tapeflow.errors import InvalidArgumentError
from tapeflow.ir.graph import Graph
from tapeflow.tracer import engine as backend, compile_log

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from benchmarks.workloads import w8  # noqa: E402

H, D = 4, 2     # W8's hidden and input sizes (batch sizes below differ from both)


class _Compiles(logging.Handler):
    """The compile log's ``compile`` records: (function, cache) each."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.records = []

    def emit(self, record):
        info = getattr(record, "tapeflow", None)
        if info and info["event"] == "compile":
            self.records.append((info["function"], info["cache"]))

    def caches(self, name):
        """How each compile of ``name`` got its machine code, in order: ``miss`` is a Numba
        compile, ``hit (in memory)`` a source compiled already."""
        return [c for f, c in self.records if f == name]


@pytest.fixture(scope="module")
def compiles(tmp_path_factory):
    """Numba backend, programs compiled before calls return, a fresh cache directory, and
    the compile records of the whole module."""
    mp = pytest.MonkeyPatch()
    mp.setenv("TAPEFLOW_CACHE_DIR", str(tmp_path_factory.mktemp("symbolic_bodies_cache")))
    mp.setenv("TAPEFLOW_TIERED", "0")
    handler = _Compiles()
    logger = compile_log.LOGGER
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    old_backend = backend.get_backend()
    tf.set_backend("numba")
    yield handler
    tf.set_backend(old_backend)
    logger.removeHandler(handler)
    logger.setLevel(old_level)
    mp.undo()


def _call(f, *args):
    with warnings.catch_warnings():      # RetracingWarning: retracing per size is the point
        warnings.simplefilter("ignore")
        return f(*[tf.constant(a) for a in args])


def _sources(f, *arg_lists):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {f.get_concrete_function(*[tf.constant(a) for a in args]).program.source
                for args in arg_lists}


# -- W8: a counted loop and its gradient (one WhileWithGrad) ------------------------------

W8_SIZES = [(5, 3), (9, 3), (5, 5)]         # (T, B): two trip counts, then another batch


def _w8_inputs(T, B):
    return w8.inputs({"T": T, "B": B, "H": H, "D": D})


@pytest.fixture(scope="module")
def w8_runs(compiles):
    """{(T, B): (inputs, compiled gradients)} of W8's function under ``jit_compile=True``."""
    f = tf.function(w8.tf_code(tf), jit_compile=True)
    runs = {}
    for T, B in W8_SIZES:
        inp = _w8_inputs(T, B)
        runs[(T, B)] = (inp, [g.numpy() for g in _call(f, inp["x"], inp["W"], inp["U"])])
    return f, runs


def _w8_args(sizes):
    return [[_w8_inputs(T, B)[k] for k in "xWU"] for T, B in sizes]


def test_w8_trip_counts_share_one_compile(w8_runs, compiles):
    f, _ = w8_runs
    (source,) = _sources(f, *_w8_args(W8_SIZES[:2]))
    assert compiles.caches("w8_grads")[:2] == ["miss", "hit (in memory)"]
    # the loop reads x's rows in the body: sized by the argument, not by the trace
    assert "va.shape[1]" in source.split("def make_call")[0]


def test_w8_batch_sizes_share_one_compile(w8_runs, compiles):
    f, _ = w8_runs
    assert len(_sources(f, *_w8_args(W8_SIZES))) == 1
    assert compiles.caches("w8_grads") == ["miss"] + ["hit (in memory)"] * (len(W8_SIZES) - 1)


@pytest.mark.parametrize("size", W8_SIZES)
def test_w8_gradients_equal_eager_and_hand_bptt(w8_runs, size):
    inp, got = w8_runs[1][size]
    eager = [g.numpy() for g in w8.tf_code(tf)(*[tf.constant(inp[k]) for k in "xWU"])]
    for g, e, n in zip(got, eager, w8.numpy_grads(inp), strict=True):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(g, n, rtol=2e-4, atol=2e-5)


# -- an `if` on a tensor, and a tf.while_loop whose state is sized by the input ----------

def _branch(x, w):
    if tf.reduce_sum(x) > 0:
        y = tf.tanh(x @ w) * 2.0
    else:
        y = x @ w - 1.0
    return tf.reduce_mean(y, axis=1) + tf.reduce_sum(y)


def _running(x):
    def cond(i, s):
        return i < tf.shape(x)[0]

    def body(i, s):
        return i + 1, s * 0.5 + tf.gather(x, i)
    i, s = tf.while_loop(cond, body, (tf.constant(0), tf.zeros_like(x[0])))
    return s, i


def _flat(result):
    return [np.asarray(r) for r in (result if isinstance(result, (list, tuple)) else [result])]


def _branch_args(n, sign):
    rng = np.random.default_rng(n)
    return [sign * np.abs(rng.standard_normal((n, 3))).astype(np.float32),
            rng.standard_normal((3, 4)).astype(np.float32)]


def _running_args(n, m):
    return [np.random.default_rng(n).standard_normal((n, m)).astype(np.float32)]


CASES = {
    "_branch": (_branch, [_branch_args(5, 1), _branch_args(7, -1), _branch_args(7, 1)]),
    "_running": (_running, [_running_args(10, 3), _running_args(12, 5)]),
}


@pytest.fixture(scope="module")
def control_runs(compiles):
    """{name: (function, [(args, compiled results)])} of CASES under ``jit_compile=True``."""
    out = {}
    for name, (fn, arg_lists) in CASES.items():
        f = tf.function(fn, jit_compile=True)
        out[name] = (f, [(args, _flat(_call(f, *args)))
                         for args in arg_lists])
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_control_flow_sizes_share_one_compile(control_runs, compiles, name):
    f, runs = control_runs[name]
    assert len(_sources(f, *[args for args, _ in runs])) == 1
    traces = len({tuple(np.shape(a) for a in args) for args, _ in runs})
    assert compiles.caches(name) == ["miss"] + ["hit (in memory)"] * (traces - 1)


@pytest.mark.parametrize("name", sorted(CASES))
def test_control_flow_results_equal_eager(control_runs, name):
    fn = CASES[name][0]
    for args, got in control_runs[name][1]:
        want = _flat(fn(*[tf.constant(a) for a in args]))
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


# -- a call the program cannot take --------------------------------------------------------

def _scaled(x, b):
    s = tf.zeros_like(b)
    for t in tf.range(tf.shape(x)[0]):          # the line a refused call names
        s = s * 0.5 + tf.gather(x, t) * b
    return s


SCALED_LINE = _scaled.__code__.co_firstlineno + 2


def test_a_broken_broadcast_in_a_loop_body_names_the_users_line(compiles):
    """The program's entry check refuses the call; the report names the loop (its body's
    operands no longer fit it) and the user's line, as the interpreter would."""
    f = tf.function(_scaled, jit_compile=True)
    x, b = np.ones((10, 3), np.float32), np.ones(3, np.float32)
    np.testing.assert_allclose(_call(f, x, b).numpy(), _scaled(tf.constant(x), tf.constant(b)).numpy())
    prog = f.get_concrete_function(tf.constant(x), tf.constant(b)).program
    with pytest.raises(InvalidArgumentError, match=rf"test_symbolic_bodies.py:{SCALED_LINE}\b"):
        prog(np.ones((10, 4), np.float32), np.ones(3, np.float32))      # [4] * [3] in the body


# -- what generation leaves and where a size stays fixed (source only: no compile) --------

def _optimized(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return backend.optimize(tf.function(fn).get_concrete_function(*[tf.constant(a) for a in args]).graph)


def _all_avals(graph, seen=None):
    seen = set() if seen is None else seen
    if id(graph) in seen:
        return
    seen.add(id(graph))
    yield from (v.aval for v in graph.inputs)
    for node in graph.nodes:
        yield from (v.aval for v in node.outputs)
        for a in node.attrs.values():
            if isinstance(a, Graph):
                yield from _all_avals(a, seen)


def test_generation_restores_the_nested_graphs():
    graph = _optimized(w8.tf_code(tf), *_w8_args([(5, 3)])[0])
    before = [tuple(a.shape) for a in _all_avals(graph)]
    source = generate(graph, "w8").source
    assert "va.shape[0]" in source
    after = list(_all_avals(graph))
    assert [tuple(a.shape) for a in after] == before
    assert all(type(d) is int for a in after for d in a.shape)      # no Dim left behind


def _fixed_state(x):
    # the body returns a value of the traced size for the loop variable: that size is fixed
    return tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, tf.ones([3]) * tf.reduce_sum(s)),
                         (tf.constant(0), x))[1]


def test_a_body_that_fixes_a_loop_variables_size_makes_the_program_for_that_size():
    source = generate(_optimized(_fixed_state, np.ones(3, np.float32)), "fixed").source
    check = next(line for line in source.split("\n") if line.strip().startswith("if (not"))
    assert "va.shape[0] == 3" in check
