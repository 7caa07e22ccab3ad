"""The ops taking a shape as a tensor (ir/defs/array.py, reduce.py): kernels, static forms,
and their codegen templates compiled with static shapes against the interpreter."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ir import dtypes as D
from tapeflow.ir.graph import Graph, Value
from tapeflow.ir.opdef import OPS, AVal
from tapeflow.runtime.interpret import run_graph

R = np.random.default_rng(7)


def _node(g, op, ins, **attrs):
    out = OPS[op].infer([v.aval for v in ins], **attrs)
    outs = list(out) if OPS[op].multi_output else [out]
    return g.add(op, ins, attrs, outs).outputs


def _input(g, a):
    a = np.asarray(a)
    v = Value(AVal(a.shape, D.as_dtype(a.dtype)))
    g.inputs.append(v)
    return v


# (op, args, attrs, expected from NumPy): the attrs hold every size (a graph specialised to
# its shapes), as codegen sees them.
X = R.uniform(-2, 2, (2, 3))
CASES = [
    ("DynamicReshape", [X, np.array([3, 2], np.int32)], {"shape": (3, 2)}, [X.reshape(3, 2)]),
    ("DynamicBroadcastTo", [X[:1], np.array([2, 2, 3], np.int32)], {"shape": (2, 2, 3)},
     [np.broadcast_to(X[:1], (2, 2, 3))]),
    ("DynamicBroadcastTo", [np.float64(1.5), np.array([2, 3], np.int32)], {"shape": (2, 3)},
     [np.full((2, 3), 1.5)]),
    ("SumToShape", [X, np.array([1, 3], np.int32)], {"shape": (1, 3)}, [X.sum(0, keepdims=True)]),
    ("SumToShape", [X, np.array([3], np.int32)], {"shape": (3,)}, [X.sum(0)]),
    ("SumToShape", [X, np.array([], np.int32)], {"shape": ()}, [X.sum()]),
    ("SplitV", [X, np.array([1, 2], np.int32)], {"sizes": (1, 2), "axis": 1}, [X[:, :1], X[:, 1:]]),
    ("DynamicStridedSliceGrad", [X[0], np.array([2, 3], np.int32)],
     {"spec": (1,), "shape": (2, 3)}, [np.stack([np.zeros(3), X[0]])]),
    ("DynamicUnsortedSegmentSum", [X, np.array([1, -1], np.int32), np.int32(3)],
     {"num_segments": 3}, [np.stack([np.zeros(3), X[0], np.zeros(3)])]),
]


def _graph():
    g, args, want = Graph(), [], []
    for op, ins, attrs, expected in CASES:
        outs = _node(g, op, [_input(g, a) for a in ins], **attrs)
        g.outputs.extend(outs)
        args.extend(ins)
        want.extend(expected)
    return g, args, want


def test_kernels_match_numpy():
    g, args, want = _graph()
    for got, w in zip(run_graph(g, *args), want, strict=True):
        np.testing.assert_array_equal(got, w)


def test_compiled_matches_interpreter():
    from tapeflow.codegen import compile_graph   # Numba: only this test compiles
    g, args, want = _graph()
    prog = compile_graph(g, "shape_tensor_ops")
    assert prog.fallback is None
    for got, w in zip(prog(*args), want, strict=True):
        np.testing.assert_allclose(got, w, rtol=1e-12)


@pytest.mark.parametrize("op,build,static", [
    ("DynamicReshape", lambda x, s: tf.reshape(x, s), "Reshape"),
    ("DynamicBroadcastTo", lambda x, s: tf.broadcast_to(x[:1], s), "BroadcastTo"),
])
def test_a_shape_known_while_tracing_gives_the_static_op(op, build, static):
    """Eagerly, and in a trace where the sizes are constants, the static form is used."""
    x = tf.constant(X)
    assert build(x, tf.constant([3, 2] if op == "DynamicReshape" else [2, 3])).shape == (
        (3, 2) if op == "DynamicReshape" else (2, 3))
    f = tf.function(lambda x: build(x, tf.shape(x)[::-1] if op == "DynamicReshape" else tf.shape(x)))
    graph = f.get_concrete_function(tf.TensorSpec([2, 3], tf.float64)).graph
    ops = [n.op for n in graph.nodes]
    assert static in ops and op not in ops


def test_run_time_sizes_that_do_not_fit_raise_invalid_argument():
    g = Graph()
    x, s = _input(g, X), _input(g, np.array([4, 2], np.int32))
    g.outputs = _node(g, "DynamicReshape", [x, s], shape=(None, 2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="DynamicReshape"):
        run_graph(g, X, np.array([4, 2], np.int32))
