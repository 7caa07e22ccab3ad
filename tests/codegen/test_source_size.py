"""Generated source stays proportional to the program (issue 18), and the guard.

The reproductions are issue 18's shapes: about ten ops with a while/break loop and a
``tf.cond`` under nested tapes, through, inside and across a ``function``, and a custom
gradient with assigns in the inner tape. Every program a run would compile is generated
(without compiling it: the graphs run on the interpreter) and must stay under 100 KB; before
nested graphs were emitted once per structure, the largest were 94-151 KB.
"""
import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.codegen import compile_graph, generate as gen_module
from tapeflow.codegen.generate import InterpreterFallbackWarning, generate
from tapeflow.ir import dtypes as D
from tapeflow.ir.graph import Graph, Value
from tapeflow.ir.opdef import AVal
from tapeflow.runtime.interpret import run_graph

LIMIT = 100 * 1024


def loop_then_cond(x):
    t = x
    i = tf.constant(0)
    while i < 6:
        t = tf.sin(t) * 1.5 + 0.1
        i += 1
        if tf.reduce_sum(t) > 3.0:
            break
    y = tf.cond(tf.reduce_sum(t) > 0.0, lambda: t * t, lambda: tf.exp(t))
    return tf.reduce_sum(y)


def cond_in_loop(x):
    t = x
    i = tf.constant(0)
    while i < 5:
        t = tf.cond(tf.reduce_sum(t) > 1.0, lambda: t * 0.9, lambda: tf.sin(t) + 0.5)
        i += 1
        if tf.reduce_max(t) > 2.0:
            break
    return tf.reduce_sum(t * t)


def tensor_while(x):
    t = x
    i = tf.constant(0)
    while tf.reduce_sum(t) < 8.0:
        t = tf.cond(tf.reduce_sum(t) > 1.0, lambda: t * 1.3, lambda: tf.sin(t) + t)
        i += 1
        if i > 4:
            break
    return tf.reduce_sum(tf.exp(t * 0.1))


def second_order(fn, x, how):
    def first(f, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.gradient(y, x)

    if how == "through":
        f = tf.function(fn)
    elif how == "called":
        inner = tf.function(fn)
        f = tf.function(lambda x: inner(x) * 2.0)
    else:
        f = fn
    if how == "inside":
        @tf.function
        def h(x):
            with tf.GradientTape() as outer:
                outer.watch(x)
                g = first(fn, x)
            return outer.gradient(g, x)
        return h(x)
    if how == "mixed":
        g_fn = tf.function(lambda x: first(fn, x))
    else:
        g_fn = lambda x: first(f, x)    # noqa: E731
    with tf.GradientTape() as outer:
        outer.watch(x)
        g = g_fn(x)
    return outer.gradient(g, x)


@pytest.mark.parametrize("how", ["through", "inside", "mixed", "called"])
@pytest.mark.parametrize("fn", [loop_then_cond, cond_in_loop, tensor_while])
def test_ten_op_control_flow_programs_stay_under_100kb(sources, fn, how):
    x = tf.constant([0.3, 0.5])
    got = second_order(fn, x, how)
    want = second_order((lambda x: fn(x) * 2.0) if how == "called" else fn, x, "eager")
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    assert sources
    sizes = {k: len(s) for k, s in sources.items()}
    assert max(sizes.values()) <= LIMIT, sizes
    for src in sources.values():    # each function defined once (numbered before its body)
        defs = [ln.split("(")[0] for ln in src.split("\n") if ln.startswith("def ")]
        assert len(defs) == len(set(defs))
        header = sum(len(ln) + 1 for ln in src.split("\n") if ln.startswith("#"))
        assert header <= 20 * 1024      # nested graphs elided past HEADER_BYTES


def custom_gradient_loop_and_assigns():
    """Issue 18's `KeyError: 'vy'` shape: a custom gradient, a while/break loop and two assigns
    in the inner tape of a function an outer tape differentiates. -> (g, dg/dx)."""
    v, w = tf.Variable([1.0, 1.0]), tf.Variable([0.5, 0.5])

    @tf.custom_gradient
    def cg(a):
        return tf.sin(a), lambda dy: dy * tf.cos(a) * 2.0

    @tf.function
    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            v.assign(x * 2.0)
            t = x + v
            i = tf.constant(0)
            while tf.reduce_sum(t) < 5.0:
                t = cg(t) * 1.5 + t
                i += 1
                if i > 3:
                    break
            w.assign_add(t)
            y = tf.reduce_sum(t * w)
        return tape.gradient(y, x)
    x = tf.constant([0.7, 0.2])
    with tf.GradientTape() as outer:
        outer.watch(x)
        g = f(x)
    return g, outer.gradient(g, x)


def test_custom_gradient_loop_and_assigns_in_the_inner_tape(sources):
    assert custom_gradient_loop_and_assigns()[1] is not None
    assert sources and max(len(s) for s in sources.values()) <= LIMIT


def test_custom_gradient_loop_and_assigns_compiles_and_matches_the_interpreter(numpy_backend):
    want = [t.numpy() for t in custom_gradient_loop_and_assigns()]
    tf.set_backend("numba")          # numpy_backend puts the previous backend back afterwards
    got = [t.numpy() for t in custom_gradient_loop_and_assigns()]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def _if_twice():
    """Two If nodes sharing one branch graph object: it is emitted once, as one function."""
    f32 = D.float32
    branch = Graph()
    xa = Value(AVal((3,), f32))
    branch.inputs = [xa]
    s = branch.add("Sin", [xa], {}, [AVal((3,), f32)]).outputs[0]
    e = branch.add("Exp", [s], {}, [AVal((3,), f32)]).outputs[0]
    branch.outputs = [e]
    other = Graph()
    xb = Value(AVal((3,), f32))
    other.inputs = [xb]
    other.outputs = [other.add("Neg", [xb], {}, [AVal((3,), f32)]).outputs[0]]
    g = Graph()
    p, x = Value(AVal((), D.bool_)), Value(AVal((3,), f32))
    g.inputs = [p, x]
    y1 = g.add("If", [p, x], {"then_graph": branch, "else_graph": other}, [AVal((3,), f32)]).outputs[0]
    y2 = g.add("If", [p, y1], {"then_graph": other, "else_graph": branch}, [AVal((3,), f32)]).outputs[0]
    g.outputs = [y2]
    return g


def test_a_graph_used_twice_is_one_function_called_twice():
    g = _if_twice()
    src = generate(g, "twice").source
    defs = [ln for ln in src.split("\n") if ln.startswith("def ")]
    assert len(defs) == len(set(defs))
    assert sum(ln.startswith("def twice_graph") for ln in defs) == 2     # branch, other
    assert src.count("np.sin(") == 1
    prog = compile_graph(g, "twice")
    x = np.array([0.1, -0.4, 0.9], np.float32)
    for p in (True, False):
        np.testing.assert_allclose(prog(np.bool_(p), x)[0], run_graph(g, np.bool_(p), x)[0], rtol=1e-6)


def test_out_of_proportion_source_runs_on_the_interpreter_with_a_warning(monkeypatch):
    monkeypatch.setattr(gen_module, "MAX_FUNCTION_LINES", 3)
    g = _if_twice()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prog = compile_graph(g, "guarded")
    msgs = [str(w.message) for w in caught if issubclass(w.category, InterpreterFallbackWarning)]
    assert len(msgs) == 1 and "'guarded'" in msgs[0] and "interpreter" in msgs[0]
    assert prog.fallback and "limit 3" in prog.fallback
    x = np.array([0.1, -0.4, 0.9], np.float32)
    np.testing.assert_array_equal(prog(np.bool_(True), x)[0], run_graph(g, np.bool_(True), x)[0])
