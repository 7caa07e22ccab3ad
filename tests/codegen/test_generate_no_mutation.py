"""Code generation never edits the graph it is given (issue 25): the interpreter tier runs
the very graph the background compile generates source for, at the same moment."""
import threading

import numpy as np

from tapeflow.codegen.generate import generate
from tapeflow.ir import dtypes as D
from tapeflow.ir.graph import Graph, Value
from tapeflow.ir.opdef import AVal
from tapeflow.runtime.interpret import run_graph


def _graph():
    """x * c + k with c an array constant and k = 0.3 (both arguments of the program), a
    reshape whose sizes the generator reads as expressions, and a reduction."""
    x = Value(AVal((4, 3), D.float64))
    g = Graph([x])
    c = g.const(np.array([0.1, 0.2, 0.3]))
    k = g.const(np.float64(0.3))
    y = g.add("Mul", [x, c], {}, [AVal((4, 3), D.float64)]).outputs[0]
    z = g.add("Add", [y, k], {}, [AVal((4, 3), D.float64)]).outputs[0]
    r = g.add("Reshape", [z], {"shape": (12,)}, [AVal((12,), D.float64)]).outputs[0]
    s = g.add("Sum", [r], {"axis": None, "keepdims": False}, [AVal((), D.float64)]).outputs[0]
    g.outputs = [r, s]
    return g


def _snapshot(graph):
    """Everything another thread could read of the graph: avals (types of sizes too) and attrs."""
    return [(v.id, tuple((type(d), d) for d in v.aval.shape), v.aval.dtype)
            for n in graph.nodes for v in n.outputs] + \
           [(n.op, sorted((k, repr(a)) for k, a in n.attrs.items())) for n in graph.nodes]


def test_interpreting_while_generating_sees_the_graph_unchanged():
    graph = _graph()
    before = _snapshot(graph)
    x = np.arange(12.0).reshape(4, 3)
    want = x * np.array([0.1, 0.2, 0.3]) + 0.3
    stop, errors = threading.Event(), []

    def generating():
        try:
            while not stop.is_set():
                gen = generate(graph, "racing")
                assert "Const <argument>" in gen.source
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)
            stop.set()

    worker = threading.Thread(target=generating)
    worker.start()
    try:
        for _ in range(400):
            r, s = run_graph(graph, x)
            np.testing.assert_allclose(r, want.reshape(12))
            np.testing.assert_allclose(s, want.sum())
            assert _snapshot(graph) == before
    finally:
        stop.set()
        worker.join()
    assert errors == []
    assert _snapshot(graph) == before
