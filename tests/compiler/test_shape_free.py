"""One Numba compile per (rank, dtype) signature, whatever the input sizes.

The generated source reads every size from its arguments (codegen/shape_free.py), so traces
that differ only in sizes generate the same text: one cache entry, one compile, counted
from Numba's cache statistics (``Program.stats``), not by timing. A graph with ``None``
dimensions compiles once for all the shapes it is called with. Shapes a program cannot take
raise ``InvalidArgumentError`` naming the op and the user's line.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import test_compiled_vs_eager as cve

import tapeflow as tf
from tapeflow.codegen import compile_graph
from tapeflow.errors import InvalidArgumentError
from tapeflow.ir.graph import Graph, Value
from tapeflow.ir.opdef import OPS, AVal
from tapeflow.ir import dtypes as D
from tapeflow.runtime.interpret import run_graph
from tapeflow.tracer.engine import optimize
from tapeflow.tracer.concrete_function import specialize

SIZES = (3, 5, 128, 1, 0)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("shape_free_cache")


def _mlp_step():
    rng = np.random.default_rng(0)
    w1 = tf.Variable(rng.standard_normal((6, 8)).astype(np.float32))
    b1 = tf.Variable(rng.standard_normal(8).astype(np.float32))
    w2 = tf.Variable(rng.standard_normal((8, 3)).astype(np.float32))

    @tf.function(jit_compile=False)
    def step(x, y):
        with tf.GradientTape() as tape:
            h = tf.nn.relu(x @ w1 + b1)
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=h @ w2))
        g = tape.gradient(loss, [w1, b1, w2])
        return [loss, tf.reduce_sum(h, axis=0)] + g
    return step, [w1.numpy(), b1.numpy(), w2.numpy()]


@pytest.fixture(scope="module")
def mlp_programs(cache_dir):
    """{batch size: (optimized graph, program, its arguments)} of one training step."""
    step, weights = _mlp_step()
    rng = np.random.default_rng(1)
    out = {}
    for n in SIZES:
        x = rng.standard_normal((n, 6)).astype(np.float32)
        y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, n)]
        with warnings.catch_warnings():     # RetracingWarning: retracing per size is the point
            warnings.simplefilter("ignore")
            graph = optimize(step.get_concrete_function(x, y).graph)
        out[n] = (graph, compile_graph(graph, "mlp_step", cache_dir), [x, y] + weights)
    return out


def test_sizes_share_one_source_and_one_compile(mlp_programs):
    # an empty batch too: no choice compares a size with another by chance (size classes)
    sources = {mlp_programs[n][1].source for n in SIZES}
    assert len(sources) == 1, "traces differing only in the batch size generated different source"
    progs = [mlp_programs[n][1] for n in SIZES]
    assert len({p.cache_path for p in progs}) == 1
    # the programs share Numba's dispatchers: one compile (or one disk-cache load) in all
    assert all(p.kernels == progs[0].kernels for p in progs)
    stats = progs[0].stats()
    assert stats["cache_misses"] + stats["cache_hits"] == len(progs[0].kernels)
    assert "128" not in progs[0].source.split("import math")[1]      # no batch size literal


def test_an_empty_batch_is_the_same_program(cache_dir):
    """A None-dim step specialised at 0 rows: its mean's folded gradient seed is an empty
    constant (no value to read) and every size compares equal to 0, yet neither may decide
    the source (they made a program of its own)."""
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_mean(tf.tanh(x @ w))
        return y, tape.gradient(y, x)
    graph = step.get_concrete_function().graph
    progs = {}
    for n in (5, 0, 2):
        special = optimize(specialize(graph, [AVal((n, 4), D.float32)]))
        progs[n] = (special, compile_graph(special, "empty_batch", cache_dir))
    assert len({p.source for _, p in progs.values()}) == 1
    for n, (special, prog) in progs.items():
        x = np.full((n, 4), 0.5, np.float32)
        for got, want in zip(prog(x), run_graph(special, x), strict=True):
            assert np.shape(got) == np.shape(want)
            np.testing.assert_allclose(got, want, rtol=2e-6)


@pytest.mark.parametrize("n", SIZES)
def test_compiled_matches_interpreter_at_each_size(mlp_programs, n):
    graph, prog, args = mlp_programs[n]
    got, want = prog(*args), run_graph(graph, *args)
    for g, w in zip(got, want, strict=True):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)


def test_program_refuses_shapes_it_cannot_take(mlp_programs):
    graph, prog, args = mlp_programs[5]
    bad = [np.zeros((5, 7), np.float32)] + args[1:]       # x @ w1 needs x.shape[1] == 6
    with pytest.raises(InvalidArgumentError, match="MatMul"):
        prog(*bad)


# -- graphs with None dimensions ----------------------------------------------------------

LINE = (__file__, 20)


def _unknown_batch_graph():
    """y = sum(relu(x @ w + b), axis=1) * mean(x), x: f32[?, 4], w: f32[?, 3] (built by hand: the tracer's
    None-dim tracing is another change's)."""
    f32 = D.as_dtype("float32")
    g = Graph()
    x, w, b = (Value(AVal(s, f32)) for s in ((None, 4), (None, 3), (3,)))
    g.inputs = [x, w, b]

    def add(op, ins, **attrs):
        out = OPS[op].infer([v.aval for v in ins], **attrs)
        node = g.add(op, ins, attrs, [out])
        node.line = LINE
        return node.outputs[0]
    h = add("Relu", [add("Add", [add("MatMul", [x, w], transpose_a=False, transpose_b=False), b])])
    s = add("Sum", [h], axis=1, keepdims=False)
    m = add("Mean", [x], axis=None, keepdims=False)
    g.outputs = [add("Mul", [s, m])]
    return g


def _numpy(x, w, b):
    return (np.maximum(x @ w + b, 0).sum(axis=1) * x.mean()).astype(np.float32)


@pytest.fixture(scope="module")
def unknown_batch(cache_dir):
    return compile_graph(_unknown_batch_graph(), "unknown_batch", cache_dir)


def test_unknown_dims_compile_once(unknown_batch):
    rng = np.random.default_rng(2)
    w, b = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    for n in (7, 1, 33, 2, 7):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        (got,) = unknown_batch(x, w, b)
        np.testing.assert_allclose(got, _numpy(x, w, b), rtol=1e-5, atol=1e-5)
    stats = unknown_batch.stats()
    assert stats["cache_misses"] + stats["cache_hits"] == 1


def test_unknown_dims_bad_shape_names_op_and_line(unknown_batch):
    w, b = np.ones((4, 3), np.float32), np.ones(3, np.float32)
    with pytest.raises(InvalidArgumentError, match=r"input #0 must have shape \[\?, 4\]"):
        unknown_batch(np.ones((2, 5), np.float32), w, b)
    with pytest.raises(InvalidArgumentError, match=r"MatMul.*test_shape_free.py:20"):
        unknown_batch(np.ones((2, 4), np.float32), np.ones((5, 3), np.float32), b)


# -- the compiled-vs-eager fuzz, with sizes drawn per call -----------------------------------

@st.composite
def _sized_programs(draw):
    """A drawn program (test_compiled_vs_eager.programs) and three size draws for its base
    shape (0 and 1 included): each call runs the same ops and ranks at other sizes."""
    shapes, steps, seed = draw(cve.programs())
    rank = max((len(s) for s in shapes), default=0)
    sizes = [tuple(draw(st.sampled_from([0, 1, 2, 4])) for _ in range(rank)) for _ in range(3)]
    return shapes, steps, seed, sizes


def _check_sizes(program, dtype):
    shapes, steps, seed, sizes = program
    rng = np.random.default_rng(seed)
    body = cve.make_body(steps, len(shapes))
    for base in sizes:
        call_shapes = [base[len(base) - len(s):] for s in shapes]
        xs = [tf.constant((rng.uniform(0.2, 1.5, s) * rng.choice([-1, 1], s)).astype(dtype))
              for s in call_shapes]
        try:
            eager = cve.run(body, xs, "eager")
        except tf.errors.InvalidArgumentError:
            continue    # these sizes do not broadcast (a reduction dropped an axis)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # retracing per size is the point
            got = cve.run(body, xs, "inside")
        cve.assert_matches(eager, got, False, 1e-9 if dtype == np.float64 else 2e-4)


@settings(max_examples=8, **cve.SETTINGS)
@given(_sized_programs())
def test_compiled_matches_eager_at_sizes_drawn_per_call(program):
    _check_sizes(program, np.float64)


@pytest.mark.slow
@settings(max_examples=300, **cve.SETTINGS)
@given(_sized_programs())
def test_many_programs_match_eager_at_sizes_drawn_per_call(program):
    _check_sizes(program, np.float32)
