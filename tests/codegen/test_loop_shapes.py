"""What keeps a big fused loop fast (W3): pow by a literal 2/1/-1 is arithmetic, float loops
with Pow run in parallel, and a uniform constant array (a folded gradient seed) is a literal
instead of an array argument. Values are checked against the NumPy interpreter bit for bit."""
import numpy as np

import tapeflow  # noqa: F401
from tapeflow.codegen import compile_graph, emitter
from tapeflow.ir import dtypes as D
from tapeflow.ir.graph import Graph, Value
from tapeflow.ir.opdef import AVal
from tapeflow.runtime.interpret import run_graph

from codegen.samples import add_node

N = 60_000


def _x(n=N):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(n).astype(np.float32) * 3
    x[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-42, -1e30, 1e20]
    return x


def test_pow_by_literal_exponents_is_exact_and_parallel(monkeypatch):
    monkeypatch.setattr(emitter, "PARALLEL_WORK", 200_000)      # N elements go parallel
    g = Graph()
    x = Value(AVal((N,), D.float32))
    g.inputs.append(x)
    outs = []
    for e in (2.0, 1.0, -1.0, 3.0):
        outs.append(add_node(g, "Pow", [x, g.const(np.asarray(e, np.float32))]))
    g.outputs = outs
    prog = compile_graph(g, "pow_literals")
    body = prog.source.split("def make_call")[0]
    assert body.count("np.power(") == 1          # only the exponent 3 calls pow
    assert "prange(" in body and "parallel=True" in body
    with np.errstate(all="ignore"):
        want = run_graph(g, _x())
    got = prog(_x())
    for k in range(3):
        np.testing.assert_array_equal(got[k], want[k])
        assert np.array_equal(np.signbit(got[k]), np.signbit(want[k]))
    np.testing.assert_allclose(got[3], want[3], rtol=1e-6)      # libm's powf vs NumPy's


def test_uniform_constant_array_is_a_literal_in_the_loop():
    g = Graph()
    x = Value(AVal((N,), D.float32))
    g.inputs.append(x)
    ones = g.const(np.full((N,), -0.0, np.float32))          # sign bits must survive
    twos = g.const(np.full((N,), 2.5, np.float32))
    mixed = np.full((N,), 2.5, np.float32)
    mixed[-1] = 1.0
    y = add_node(g, "Add", [add_node(g, "Mul", [x, twos]), ones])
    z = add_node(g, "Mul", [x, g.const(mixed)])
    g.outputs = [y, z, add_node(g, "Sum", [add_node(g, "Mul", [x, ones])], axis=None, keepdims=False)]
    prog = compile_graph(g, "uniform_consts")
    # only the non-uniform one is an array; the uniform ones are scalars in the loop
    arrays = [c for c in prog.consts if np.ndim(c)]
    assert len(arrays) == 1 and arrays[0][-1] == 1.0
    assert all(np.ndim(c) == 0 for c in prog.consts if c is not arrays[0])
    with np.errstate(all="ignore"):
        want = run_graph(g, _x())
    got = prog(_x())
    np.testing.assert_array_equal(got[0], want[0])
    assert np.array_equal(np.signbit(got[0]), np.signbit(want[0]))
    np.testing.assert_array_equal(got[1], want[1])
    assert np.isnan(got[2]) and np.isnan(want[2])               # inf * -0.0 in the sum


def test_big_fresh_arrays_ask_for_huge_pages():
    import sys
    big_n = (4 << 20) // 4 + 1000             # just over 4 MB of float32
    g = Graph()
    x = Value(AVal((big_n,), D.float32))
    s = Value(AVal((10,), D.float32))
    g.inputs += [x, s]
    g.outputs = [add_node(g, "Mul", [x, x]), add_node(g, "Mul", [s, s])]
    prog = compile_graph(g, "hugepages")
    assert prog.source.count("rt.hugepages(") == (1 if sys.platform.startswith("linux") else 0)
    xs = np.random.default_rng(1).standard_normal(big_n).astype(np.float32)
    y, z = prog(xs, xs[:10].copy())
    np.testing.assert_array_equal(y, xs * xs)
    np.testing.assert_array_equal(z, xs[:10] * xs[:10])
