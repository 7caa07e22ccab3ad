"""What a program keeps alive (W7): loops write into buffers that die in them, and a program is
cut into parts only where the Python caller would not hold big intermediates past their last
use (it drops each one after the last part reading it). Values against the interpreter."""
import numpy as np
import tapeflow  # noqa: F401
from tapeflow.codegen import compile_graph, generate as gen_module
from tapeflow.codegen.emitter import value_names
from tapeflow.ir import dtypes as D
from tapeflow.ir.graph import Graph, Value
from tapeflow.ir.opdef import AVal
from tapeflow.runtime.interpret import run_graph

from codegen.samples import add_node

R = np.random.default_rng(11)


def _input(g, shape):
    v = Value(AVal(tuple(shape), D.float32))
    g.inputs.append(v)
    return v


def _reuses(source):
    return [ln.strip().split("  #")[0] for ln in source.split("\n") if "now holds" in ln]


def test_loops_reuse_only_buffers_that_die_unread():
    g = Graph()
    x, w = _input(g, (4, 6)), _input(g, (6, 5))
    h = add_node(g, "MatMul", [x, w])                 # a GEMM result: the program's own buffer
    y = add_node(g, "Relu", [h])                      # h is read again after y is written ...
    z = add_node(g, "Mul", [h, g.const(np.float32(2))])   # ... so z, its last reader, takes it
    h2 = add_node(g, "MatMul", [x, w])
    s = add_node(g, "Sum", [h2], axis=0, keepdims=False)  # a reduction reads h2 after the body
    n2 = add_node(g, "Neg", [h2])
    h3 = add_node(g, "MatMul", [x, w])
    r3 = add_node(g, "Reshape", [h3], shape=(5, 4))   # a view of h3 stays alive
    e3 = add_node(g, "Exp", [h3])
    g.outputs = [y, z, s, n2, r3, e3]
    prog = compile_graph(g, "reuse")
    names = value_names(g)
    assert _reuses(prog.source) == [f"# v{names[h.id]} now holds {names[z.id]}: "
                                    f"{names[h.id]} is dead after this loop"]
    args = [R.standard_normal((4, 6)).astype(np.float32), R.standard_normal((6, 5)).astype(np.float32)]
    for got, want in zip(prog(*args), run_graph(g, *args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_a_chain_of_big_intermediates_is_not_cut(monkeypatch):
    monkeypatch.setattr(gen_module, "MAX_LINES", 12)
    big, small = _chain((300, 300)), _chain((4, 4))
    assert len(gen_module.generate(big[0], "big").parts) == 1           # 360 KB would cross
    gen = gen_module.generate(small[0], "small")
    assert len(gen.parts) > 1
    assert "        del " in gen.source                                 # dropped after last use
    g, args = small
    prog = compile_graph(g, "small_parts")
    assert len(prog.kernels) == len(gen.parts)
    for got, want in zip(prog(*args), run_graph(g, *args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _chain(shape):
    """Layers whose activations are read again at the end (like a backward pass would)."""
    g = Graph()
    x, w = _input(g, shape), _input(g, (shape[1], shape[1]))
    acts, h = [], x
    for _ in range(4):
        h = add_node(g, "Tanh", [add_node(g, "MatMul", [h, w])])
        acts.append(h)
    total = acts[0]
    for a in acts[1:]:
        total = add_node(g, "MatMul", [total, a])
    g.outputs = [total]
    args = [R.standard_normal(shape).astype(np.float32) * 0.3,
            R.standard_normal((shape[1], shape[1])).astype(np.float32) * 0.3]
    return g, args


def test_partition_cuts_big_crossings_only_past_the_hard_limit():
    spans = [(k * 10, k * 10 + 10) for k in range(10)]
    expensive = [10 ** 9] * 11
    assert gen_module.partition(spans, 20, expensive) == [(0, 80), (80, 100)]
    assert gen_module.partition(spans, 20, [0] * 11) == [(0, 20), (20, 40), (40, 60), (60, 80), (80, 100)]
