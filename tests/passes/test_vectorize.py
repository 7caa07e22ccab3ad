"""The vectorization pass: every batching rule against running the graph once per batch row.

Graphs come from the op gradient-check cases (``tests/ops/cases_*.py``: every op is in
one), traced, and from their reverse graphs (``graph_vjp.vjp_graph``, what jacobians
vectorize). Each is vectorized with different inputs batched and run on the NumPy
interpreter; the answer must equal the original graph run row by row with NumPy.
"""
import warnings

import numpy as np
import pytest

import tapeflow as tf  # noqa: F401  (registers everything)
from tapeflow.ops import debug  # the CheckNumerics and Assert ops
from tapeflow.runtime.kernels.random import OPS as RANDOM_OPS
from tapeflow.runtime.kernels.samplers import OPS as SAMPLER_OPS
from tapeflow.ir.graph import verify
from tapeflow.ir.opdef import AVal
from tapeflow.passes import vectorize as V
from tapeflow.passes.batching import BATCHERS, scaled
from tapeflow.passes.vectorize import Identity, VectorizeFallbackWarning, loop_reference, vectorize
from tapeflow.runtime.interpret import run_graph
from tapeflow.runtime.tensor import wrap
from tapeflow.tracer.graph_vjp import vjp_graph
from tapeflow.tracer.context import TraceContext

from ops.cases import Case, all_cases

B = 3
CASES, _ = all_cases()
R = np.random.default_rng(7)
# The non-differentiable ops have no gradient cases: graphs using them (float results).
CASES["NotDifferentiable"] = [Case(fn, args) for fn, args in [
    (lambda x, y: tf.where((x > y) & (x >= 0.0) | ~(x < y), x, y)
     + tf.cast((x <= y) != (x == y), tf.float64), [R.uniform(-1, 1, (2, 3)), R.uniform(-1, 1, (3,))]),
    (lambda x: tf.cast(tf.math.is_finite(x) & ~tf.math.is_nan(x) & ~tf.math.is_inf(x), x.dtype) * x,
     [R.uniform(-1, 1, (4,))]),
    (lambda x: tf.cast(tf.reduce_all(x > 0.0, axis=1), x.dtype) + tf.cast(tf.reduce_any(x > 0.5), x.dtype),
     [R.uniform(-1, 1, (2, 3))]),
    (lambda x: tf.one_hot(tf.argmax(x, axis=1), 4, dtype=tf.float64) * tf.cast(tf.argmin(x, axis=0)[0],
                                                                              tf.float64),
     [R.uniform(-1, 1, (2, 3))]),
    (lambda x: x * tf.cast(tf.shape(x)[0], tf.float64) + tf.cast(tf.size(x), tf.float64)
     + tf.math.floordiv(x, 0.3) + tf.floor(x) + tf.round(x) + tf.sign(x), [R.uniform(-1, 1, (2, 3))]),
    (lambda x: tf.math.ceil(x) + tf.math.rint(3.0 * x)
     + tf.cast(tf.truncatemod(tf.cast(10.0 * x, tf.int32), 4), tf.float64)
     + tf.cast(tf.truncatediv(tf.cast(10.0 * x, tf.int32), 3), tf.float64)
     + tf.cast(tf.math.in_top_k(tf.constant([0, 2]), x, 2), tf.float64)[:, None], [R.uniform(-1, 1, (2, 3))]),
    (lambda x: x + tf.cast(tf.bitcast(x, tf.int32)[..., 1], tf.float64), [R.uniform(-1, 1, (2, 3))]),
    # TF's generic Conv and GuaranteeConst (their gradients raise LookupError: no gradient
    # cases, and the reverse graphs here must not reach them)
    (lambda x, w: tf.stop_gradient(tf.conv(x, w, [1, 1, 1, 1], "SAME") + tf.guarantee_const(w)[0, 0, 0]),
     [R.uniform(-1, 1, (1, 4, 4, 2)), R.uniform(-1, 1, (2, 2, 2, 3))]),
    # the run-time checks (ops/debug.py)
    (lambda x: (debug.Assert(tf.reduce_all(x > -5.0), [x, "x"]), debug.check_numerics(x, "x") * x)[1]
     + x * tf.random.stateless_normal([2, 3], seed=tf.cast(tf.reduce_sum(x * 0.0) + 1.0, tf.int32)
                                      * tf.constant([1, 2]), dtype=tf.float64), [R.uniform(-1, 1, (2, 3))]),
    # the stateless samplers (ops/samplers.py) with batched parameters: their loop
    (lambda x: tf.random.stateless_gamma([2, 3], [1, 2], alpha=1.5 + x, dtype=tf.float64)
     + tf.cast(tf.random.stateless_poisson([2, 3], [3, 4], lam=20.0 + 10.0 * x), tf.float64)
     + tf.cast(tf.random.stateless_categorical(x, 3, [5, 6]), tf.float64)[:, :1]
     + tf.random.stateless_binomial([2, 3], [7, 8], counts=30.0 + x, probs=tf.constant(0.4, tf.float64),
                                    output_dtype=tf.float64)
     + tf.random.stateless_parameterized_truncated_normal(
         [2, 3], [9, 10], means=x, stddevs=tf.constant(1.0, tf.float64), minvals=x - 3.0,
         maxvals=x + 1.0), [R.uniform(-1, 1, (2, 3))]),
]]
FLAT = [(op, i, c) for op, cs in sorted(CASES.items()) for i, c in enumerate(cs)]


def trace(fn, args):
    ctx = TraceContext()
    with ctx:
        ins = [ctx.input(wrap(np.asarray(a)).aval) for a in args]
        out = fn(*ins)
        outs = out if isinstance(out, (list, tuple)) else [out]
        ctx.graph.outputs = [ctx.value_of(o) for o in outs]
    assert not ctx.captures
    return ctx.graph


def rows(rng, value):
    """B rows near ``value`` (small relative noise keeps ops inside their domains)."""
    value = np.asarray(value)
    if not np.issubdtype(value.dtype, np.floating):
        return np.stack([value] * B)
    noise = 1 + 0.01 * rng.standard_normal((B,) + value.shape)
    return (value * noise).astype(value.dtype)


def check(graph, args, flags, rng):
    batched_args = [rows(rng, a) if f else a for a, f in zip(args, flags)]
    vec = vectorize(graph, flags, B, warn=False)
    verify(vec.graph)
    got = run_graph(vec.graph, *batched_args)
    want = [np.stack(col) for col in zip(*[
        run_graph(graph, *[ba[i] if f else ba for ba, f in zip(batched_args, flags)]) for i in range(B)])]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12)
    return vec


def flag_sets(n):
    if n == 1:
        return [[True]]
    return [[True] * n] + [[i == k for i in range(n)] for k in range(n)]


COVERED = set()


@pytest.mark.parametrize("op,i,case", FLAT, ids=[f"{op}-{i}" for op, i, _ in FLAT])
def test_rules_equal_the_loop(op, i, case):
    rng = np.random.default_rng(len(FLAT) + i)
    graph = trace(case.fn, case.args)
    for flags in flag_sets(len(case.args)):
        vec = check(graph, case.args, flags, rng)
        COVERED.update({n.op for n in graph.nodes} - set(vec.fallbacks))
    joint = vjp_graph(graph)
    cts = [rng.standard_normal(joint.graph.inputs[len(case.args) + k].aval.shape)
           for k in range(len(joint.graph.inputs) - len(case.args))]
    jargs = list(case.args) + cts
    n = len(case.args)
    for flags in ([False] * n + [True] * len(cts), [True] * len(jargs)):
        vec = check(joint.graph, jargs, flags, rng)
        COVERED.update({n.op for n in joint.graph.nodes} - set(vec.fallbacks))
    for k in range(len(cts)):
        check_identity_seeds(joint.graph, jargs, n + k)


# The ops taking a shape as a tensor (and Shape/Size, which fold to constants for known
# shapes) appear only in graphs traced with unknown dims: their cases traced so, then checked.
SHAPE_TENSOR_OPS = ["DynamicReshape", "DynamicBroadcastTo", "SumToShape", "SplitV",
                    "DynamicStridedSliceGrad", "DynamicUnsortedSegmentSum"]
UNKNOWN = [(op, i, c) for op in SHAPE_TENSOR_OPS for i, c in enumerate(CASES[op])] + [
    ("Size", 0, Case(lambda x: x * tf.cast(tf.size(x), tf.float64), [R.uniform(-1, 1, (2, 3))]))]


def trace_unknown(fn, args):
    ctx = TraceContext()
    with ctx:
        ins = [ctx.input(AVal((None,) * np.ndim(a), wrap(np.asarray(a)).dtype)) for a in args]
        out = fn(*ins)
        ctx.graph.outputs = [ctx.value_of(out)]
    return ctx.graph


@pytest.mark.parametrize("op,i,case", UNKNOWN, ids=[f"{op}-{i}" for op, i, _ in UNKNOWN])
def test_rules_of_graphs_with_unknown_dims_equal_the_loop(op, i, case):
    rng = np.random.default_rng(i)
    graph = trace_unknown(case.fn, case.args)
    assert op in {n.op for n in graph.nodes}
    for flags in flag_sets(len(case.args)):
        vec = check(graph, case.args, flags, rng)
        COVERED.update({n.op for n in graph.nodes} - set(vec.fallbacks))


def test_loop_gradient_over_stacks_equals_the_loop():
    """WhileGradStacks (a backward program reading the stacks its forward program returned:
    passes/keep_stacks.py) exists only in a tape pair's backward graph: its rule is checked
    there, the cotangent batched (the stacks are the forward's, as the rule assumes)."""
    from ops.cases_control import _loop
    args = (R.uniform(-1, 1, (3,)), R.uniform(-1, 1, (3,)))
    fwd, bwd, n_res = tf.function(_loop).get_concrete_function(
        *(tf.constant(a) for a in args)).tape_pair()
    assert "WhileGradStacks" in {n.op for n in bwd.graph.nodes}
    residuals = list(run_graph(fwd.graph, *args)[-n_res:])
    ct = np.ones(3)
    flags = [False] * n_res + [True]
    vec = check(bwd.graph, residuals + [ct], flags, np.random.default_rng(5))
    COVERED.update({n.op for n in bwd.graph.nodes} - set(vec.fallbacks))


def check_identity_seeds(graph, args, k):
    """Identity seeds (kept diagonal where rules allow) == the dense one-hot stack, in chunks too."""
    shape = np.shape(args[k])
    total = int(np.prod(shape))
    if not 0 < total <= 64:
        return
    eye = np.eye(total).reshape((total,) + shape)
    dense_flags = [i == k for i in range(len(args))]
    want = run_graph(vectorize(graph, dense_flags, total, warn=False).graph,
                     *[eye if i == k else a for i, a in enumerate(args)])
    chunk = max(1, total // 2)
    for start in range(0, total, chunk):
        size = min(chunk, total - start)
        flags = [Identity(None, start) if i == k else False for i in range(len(args))]
        vec = vectorize(graph, flags, size, warn=False)
        verify(vec.graph)
        got = run_graph(vec.graph, *[a for i, a in enumerate(args) if i != k])
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w[start:start + size], rtol=1e-12, atol=1e-12)


def test_identity_seeds_stay_diagonal_through_linear_ops():
    """tanh(x @ w)'s reverse program on identity seeds: no product with the seed stack, no one-hot
    (d/dx: a broadcast multiply; d/dw: x^T @ D, still diagonal, made dense only at the end)."""
    graph = trace(lambda x, w: tf.tanh(tf.matmul(x, w)), [np.ones((2, 3)), np.ones((3, 4))])
    joint = vjp_graph(graph)
    vec = vectorize(joint.graph, [False, False, Identity((1,), 0)], 4)
    ops = [n.op for n in vec.graph.nodes]
    assert ops[ops.index("Tanh") + 1:].count("MatMul") == 1
    assert max(n.attrs["value"].size for n in vec.graph.nodes if n.op == "Const") == 4 * 4  # gw's eye
    x, w = np.random.default_rng(0).standard_normal((2, 3)), np.random.default_rng(1).standard_normal((3, 4))
    gx = run_graph(vec.graph, x, w)[1]                       # [4 seeds, 2, 3]
    d = 1 - np.tanh(x @ w) ** 2
    np.testing.assert_allclose(gx, np.einsum("bi,ji->ibj", d, w), rtol=1e-12)


def test_print_in_a_vectorized_program_prints_the_stacked_values(capsys):
    """TensorFlow's pfor prints the stacked (batched) values once, not once per row."""
    import sys
    graph = trace(lambda x: (tf.print("x:", x, output_stream=sys.stdout), x * 2.0)[1], [np.ones(2)])
    x = np.arange(B * 2.0).reshape(B, 2)
    vec = vectorize(graph, [True], B, warn=False)
    np.testing.assert_array_equal(run_graph(vec.graph, x)[0], 2 * x)
    assert capsys.readouterr().out == "x: [[0 1]\n [2 3]\n [4 5]]\n"
    COVERED.add("PrintV2")


def test_parallel_concat_rule_equals_the_loop():
    """ParallelConcat (tf.parallel_stack) has no gradient, TF's LookupError: its graph is checked
    without a reverse graph."""
    rng = np.random.default_rng(11)
    args = [R.uniform(-1, 1, (2, 3)), R.uniform(-1, 1, (2, 3))]
    graph = trace(lambda x, y: tf.parallel_stack([x, y * 2.0]), args)
    for flags in flag_sets(2):
        vec = check(graph, args, flags, rng)
        COVERED.update({n.op for n in graph.nodes} - set(vec.fallbacks))


# A stateless random op given a batched seed needs one stream per row: its rule takes the loop
# (passes/batching/random.py); the case above checks that loop against the reference.
LOOPED_BY_DESIGN = set(RANDOM_OPS) | set(SAMPLER_OPS)


def test_every_rule_was_checked():
    """Runs after the parametrized test (same module, in order): no rule goes unchecked."""
    if len(COVERED) < 10:
        pytest.skip("run together with test_rules_equal_the_loop")
    unchecked = sorted(set(BATCHERS) - COVERED - {"Const"} - LOOPED_BY_DESIGN)
    assert unchecked == [], unchecked


def test_fallback_is_a_loop_that_is_reported():
    graph = trace(lambda x: tf.sin(x) * 2.0, [np.ones(4)])
    rules = dict(BATCHERS)
    del rules["Sin"]
    vec = vectorize(graph, [True], B, warn=False, rules=rules)
    assert vec.fallbacks == ["Sin"] and "Sin" in vec.report()
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(run_graph(vec.graph, x)[0], 2 * np.sin(x))
    assert [n.op for n in vec.graph.nodes].count("Sin") == B   # one Sin per row


def test_fallback_warns_once():
    graph = trace(lambda x: tf.cos(x), [np.ones(2)])
    rules = dict(BATCHERS)
    del rules["Cos"]
    V._warned.discard("Cos")
    with pytest.warns(VectorizeFallbackWarning, match="Cos has no batching rule"):
        vectorize(graph, [True], 2, rules=rules)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vectorize(graph, [True], 2, rules=rules)


def test_loop_reference_equals_rules():
    graph = trace(lambda x, w: tf.reduce_sum(tf.tanh(tf.matmul(x, w)), axis=1), [np.ones((2, 3)),
                                                                                 np.ones((3, 4))])
    x = np.random.default_rng(0).standard_normal((B, 2, 3))
    w = np.random.default_rng(1).standard_normal((3, 4))
    a = run_graph(vectorize(graph, [True, False], B).graph, x, w)[0]
    b = run_graph(loop_reference(graph, [True, False], B).graph, x, w)[0]
    np.testing.assert_allclose(a, b, rtol=1e-12)
    assert a.shape == (B, 2)


SCALED_PROGRAMS = [
    (lambda x, u, r, m: tf.matmul(-(x * u) / u, m), "k-scaled left: the shared matrix is scaled"),
    (lambda x, u, r, m: tf.matmul(x * r, m), "row-scaled left: the result is scaled"),
    (lambda x, u, r, m: tf.matmul(tf.transpose(m), tf.transpose(x * u)), "right operand, transposed"),
    (lambda x, u, r, m: tf.matmul(x * u, m, transpose_a=False) + 1.0, "then a non-linear use"),
    (lambda x, u, r, m: tf.matmul(m, x * r, transpose_a=True, transpose_b=True), "transposed flags"),
    (lambda x, u, r, m: tf.matmul(tf.transpose(m), x * u, transpose_b=True), "right, k-scaled"),
    (lambda x, u, r, m: tf.matmul(tf.transpose(m), tf.transpose(x * r)), "right, transposed, k-scaled"),
    (lambda x, u, r, m: tf.tanh((x * u) + (x * r) - (x * 2.0)), "sums of one base"),
    (lambda x, u, r, m: tf.reshape(tf.expand_dims(x * u, -1), [3, 4]) * tf.reshape(x * u, [2, 6])[0, 0]
     + tf.squeeze(tf.expand_dims(x * r, 0), [0]), "unit and general reshapes"),
]


@pytest.mark.parametrize("fn,note", SCALED_PROGRAMS, ids=[n for _, n in SCALED_PROGRAMS])
def test_scaled_values_equal_the_loop(fn, note, monkeypatch):
    hits = {}
    for name, rule in list(scaled.SCALED_RULES.items()):
        def counted(b, node, values, flags, rule=rule, name=name):
            out = rule(b, node, values, flags)
            if out is not None:
                hits[name] = hits.get(name, 0) + 1
            return out
        monkeypatch.setitem(scaled.SCALED_RULES, name, counted)
    rng = np.random.default_rng(5)
    args = [rng.standard_normal((3, 4)), rng.uniform(0.5, 1.5, (4,)), rng.standard_normal((3, 1)),
            rng.standard_normal((4, 3))]
    graph = trace(fn, args)
    check(graph, args, [True, False, False, False], rng)
    SCALED_HITS.update(hits)


SCALED_HITS = {}


def test_every_scaled_rule_was_used():
    if not SCALED_HITS:
        pytest.skip("run together with test_scaled_values_equal_the_loop")
    assert sorted(set(scaled.SCALED_RULES) - set(SCALED_HITS)) == []
