"""Fused loops: chains with broadcasting, reductions folded in (axes, keepdims), parallel loops.

Many independent variants share one graph per test, so each test is one compile.
"""
import numpy as np
import pytest

import tapeflow  # noqa: F401
from tapeflow.codegen import compile_graph, emitter
from tapeflow.codegen.fusion import Group, plan
from tapeflow.errors import InferError
from tapeflow.ir import dtypes as D
from tapeflow.ir.defs.reduce import reduction_axes
from tapeflow.ir.graph import Graph, Value
from tapeflow.ir.opdef import AVal
from tapeflow.runtime.interpret import run_graph

from codegen.samples import add_node

R = np.random.default_rng(11)


def _input(g, shape, dtype=D.float64, args=None, lo=-2.0, hi=2.0):
    v = Value(AVal(tuple(shape), dtype))
    g.inputs.append(v)
    a = R.uniform(lo, hi, shape).astype(dtype.np)
    args.append(a if shape else dtype.np.type(a))
    return v


def _check(graph, args, name, rtol=1e-10, atol=1e-12):
    prog = compile_graph(graph, name)
    assert prog.fallback is None
    got, want = prog(*args), run_graph(graph, *args)
    for k, (a, b) in enumerate(zip(got, want, strict=True)):
        assert type(a) is type(b), k
        assert np.asarray(a).dtype == np.asarray(b).dtype and np.shape(a) == np.shape(b), k
        assert np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True), (k, a, b)
    return prog


def _chain(g, x, y):
    """sin(x * y + x) - y: three binary ops with broadcasting and one transcendental."""
    a = add_node(g, "Mul", [x, y])
    b = add_node(g, "Add", [a, x]) if tuple(a.aval.shape) == tuple(x.aval.shape) else a
    return add_node(g, "Sub", [add_node(g, "Sin", [b]), y])


BROADCASTS = [((3, 4), (4,)), ((3, 4), (3, 1)), ((2, 1, 5), (3, 1)), ((2, 3, 4), ()),
              ((4,), (1,)), ((1, 1), (1,)), ((2, 3, 4), (1, 3, 1)), ((5, 1, 1), (1, 1, 6))]
REDUCTIONS = [("Sum", None, False), ("Sum", 1, True), ("Mean", 0, False), ("Mean", (0, -1), True),
              ("Max", -1, False), ("Min", (0,), True), ("Prod", 1, False), ("Sum", [], False)]


def test_chains_with_broadcasting_and_reductions():
    g, args = Graph(), []
    for k, (xs, ys) in enumerate(BROADCASTS):
        x, y = _input(g, xs, args=args), _input(g, ys, args=args)
        c = _chain(g, x, y)
        g.outputs.append(c)
        rank = len(c.aval.shape)
        for op, axis, keep in REDUCTIONS[k % 2::2]:      # each reduction on half the shapes
            try:
                reduction_axes(axis, rank)
            except InferError:
                continue
            d = _chain(g, x, y)        # a fresh chain so the reduction folds into its loop
            g.outputs.append(add_node(g, op, [d], axis=axis, keepdims=keep))
    _check(g, args, "fusion_broadcast")


def test_a_chain_and_its_reduction_are_one_loop():
    g, args = Graph(), []
    x, b = _input(g, (30, 40), args=args), _input(g, (40,), args=args)
    e = add_node(g, "Exp", [add_node(g, "Add", [add_node(g, "Mul", [x, b]), x])])
    s = add_node(g, "Sum", [e], axis=1, keepdims=False)
    g.outputs = [s]
    steps = [s for s in plan(g) if not hasattr(s, "op")]
    assert len(steps) == 1 and isinstance(steps[0], Group) and len(steps[0].members) == 3
    prog = _check(g, args, "fusion_one_loop")
    body = prog.source.split("def make_call")[0]
    assert body.count("np.empty(") == 1          # only the output: no temporaries
    assert "prange(" not in body                 # 1200 elements: serial


def test_forward_sum_and_gradient_share_a_loop_but_not_their_consumers():
    """sum(f(x)) and an elementwise gradient of x share one pass; x - mean(x) needs two."""
    g, args = Graph(), []
    x = _input(g, (50,), args=args)
    t = add_node(g, "Tanh", [x])
    loss = add_node(g, "Sum", [add_node(g, "Square", [t])], axis=None, keepdims=False)
    sq = add_node(g, "Sum", [add_node(g, "Mul", [x, x])], axis=None, keepdims=False)
    grad = add_node(g, "Mul", [t, add_node(g, "Sub", [g.const(1.0), add_node(g, "Square", [t])])])
    centered = add_node(g, "Sub", [x, add_node(g, "Mean", [x], axis=None, keepdims=False)])
    g.outputs = [loss, sq, grad, centered]
    groups = [s for s in plan(g) if isinstance(s, Group)]
    assert len(groups) == 2
    assert len(groups[0].reductions) == 3 and len(groups[0].members) == 6
    assert [n.op for n in groups[1].members] == ["Sub"]
    _check(g, args, "fusion_shared")


def test_softmax_by_hand():
    g, args = Graph(), []
    x = _input(g, (4, 7), args=args, lo=-30, hi=30)
    m = add_node(g, "Max", [x], axis=1, keepdims=True)
    e = add_node(g, "Exp", [add_node(g, "Sub", [x, m])])
    s = add_node(g, "Sum", [e], axis=1, keepdims=True)
    g.outputs = [add_node(g, "RealDiv", [e, s]), add_node(g, "Sum", [e], axis=0, keepdims=False)]
    _check(g, args, "fusion_softmax")


def test_large_loops_run_in_parallel(monkeypatch):
    """Above the work threshold: prange loops (elementwise, full, row and column reductions).

    float32 only: the loop structure is the same in float64 (checked at small sizes above).
    The threshold is lowered so arrays this size (a few ms of work in all) go parallel.
    """
    monkeypatch.setattr(emitter, "PARALLEL_WORK", 200_000)
    dtype = D.float32
    g, args = Graph(), []
    n, m = 600, 500
    x, b = _input(g, (n, m), dtype, args), _input(g, (m,), dtype, args)
    xn = _input(g, (n, m), dtype, args)
    args[-1][3, 7] = np.nan
    e = add_node(g, "Mul", [add_node(g, "Exp", [x]), b])
    g.outputs = [add_node(g, "Tanh", [e]),
                 add_node(g, "Sum", [add_node(g, "Sigmoid", [x])], axis=None, keepdims=False),
                 add_node(g, "Max", [add_node(g, "Softplus", [xn])], axis=None, keepdims=False),
                 add_node(g, "Min", [add_node(g, "Neg", [x])], axis=None, keepdims=True),
                 add_node(g, "Mean", [add_node(g, "Log1p", [add_node(g, "Abs", [x])])], axis=1,
                          keepdims=False),
                 add_node(g, "Sum", [add_node(g, "Square", [xn])], axis=0, keepdims=True),
                 add_node(g, "Softmax", [x], axis=-1), add_node(g, "LogSoftmax", [xn], axis=0)]
    prog = _check(g, args, "fusion_parallel", 3e-5, 1e-5)
    assert "prange(" in prog.source and "parallel=True" in prog.source
    assert np.isnan(prog(*args)[2])              # nan propagates through a prange max


def test_scalar_programs_use_no_arrays():
    """W1's shape: rank-0 values stay scalars (no allocation, no loop), results NumPy scalars."""
    g, args = Graph(), []
    x, y = _input(g, (), D.float32, args), _input(g, (), D.float32, args)
    xx = add_node(g, "Mul", [x, x])
    z = add_node(g, "Add", [add_node(g, "Mul", [xx, y]), add_node(g, "Sin", [x])])
    dx = add_node(g, "Add", [add_node(g, "Mul", [add_node(g, "Mul", [g.const(np.float32(2)), x]), y]),
                             add_node(g, "Cos", [x])])
    g.outputs = [z, dx, xx, add_node(g, "Sum", [z], axis=None, keepdims=False)]
    prog = _check(g, args, "fusion_scalar", rtol=1e-6, atol=1e-7)
    body = prog.source.split("def make_call")[0]
    assert "np.empty" not in body and "for " not in body and "np.full" not in body
    assert all(type(r) is np.float32 for r in prog(*args))
    # Python floats and 0-d arrays are accepted too
    assert prog(1.5, 2.0) == prog(np.array(1.5, np.float32), np.float32(2.0))


def test_threshold_is_what_decides_parallel(monkeypatch):
    g, args = Graph(), []
    x = _input(g, (1000,), D.float64, args)
    g.outputs = [add_node(g, "Exp", [x])]
    monkeypatch.setattr(emitter, "PARALLEL_WORK", 1)
    assert "prange(" in _check(g, args, "fusion_threshold").source
