"""Whole programs: an MLP training step, constants as arguments, calling conventions, errors."""
import numpy as np
import pytest

import tapeflow  # noqa: F401
from tapeflow.codegen import CODEGEN, CodegenError, compile_graph
from tapeflow.codegen.generate import generate
from tapeflow.codegen.templates import Template
from tapeflow.errors import InvalidArgumentError
from tapeflow.ir import dtypes as D
from tapeflow.ir.graph import Graph, Value
from tapeflow.ir.opdef import AVal
from tapeflow.runtime.interpret import run_graph

from codegen.samples import add_node

R = np.random.default_rng(5)


def _input(g, shape, dtype):
    v = Value(AVal(tuple(shape), dtype))
    g.inputs.append(v)
    return v


def mlp_step(dtype, batch=16, sizes=(32, 24, 10), weights_as_constants=False):
    """Forward + backward of a 2-layer MLP with mean softmax cross-entropy (W2's shape)."""
    g = Graph()
    d_in, d_h, d_out = sizes
    x = _input(g, (batch, d_in), dtype)
    labels = _input(g, (batch,), D.int64)
    params = [R.normal(0, 0.3, s).astype(dtype.np) for s in ((d_in, d_h), (d_h,), (d_h, d_out), (d_out,))]
    if weights_as_constants:
        w1, b1, w2, b2 = (g.const(p) for p in params)
    else:
        w1, b1, w2, b2 = (_input(g, p.shape, dtype) for p in params)
    h = add_node(g, "Relu", [add_node(g, "Add", [add_node(g, "MatMul", [x, w1]), b1])])
    logits = add_node(g, "Add", [add_node(g, "MatMul", [h, w2]), b2])
    onehot = add_node(g, "OneHot", [labels], depth=d_out, on_value=1.0, off_value=0.0, axis=-1,
                      dtype=dtype)
    logp = add_node(g, "LogSoftmax", [logits], axis=-1)
    per_example = add_node(g, "Neg", [add_node(g, "Sum", [add_node(g, "Mul", [onehot, logp])],
                                               axis=1, keepdims=False)])
    loss = add_node(g, "Mean", [per_example], axis=None, keepdims=False)
    scale = g.const(np.asarray(1.0 / batch, dtype.np))
    dlogits = add_node(g, "Mul", [add_node(g, "Sub", [add_node(g, "Softmax", [logits], axis=-1),
                                                      onehot]), scale])
    dw2 = add_node(g, "MatMul", [h, dlogits], transpose_a=True)
    db2 = add_node(g, "Sum", [dlogits], axis=0, keepdims=False)
    dh = add_node(g, "ReluGrad", [add_node(g, "MatMul", [dlogits, w2], transpose_b=True), h])
    dw1 = add_node(g, "MatMul", [x, dh], transpose_a=True)
    db1 = add_node(g, "Sum", [dh], axis=0, keepdims=False)
    g.outputs = [loss, dw1, db1, dw2, db2]
    args = [R.normal(0, 1, (batch, d_in)).astype(dtype.np), R.integers(0, d_out, batch)]
    if not weights_as_constants:
        args += params
    return g, args


def _assert_same(got, want, dtype):
    rtol, atol = (1e-4, 1e-6) if dtype == D.float32 else (1e-10, 1e-12)
    for a, b in zip(got, want, strict=True):
        assert type(a) is type(b) and np.asarray(a).dtype == np.asarray(b).dtype
        assert np.shape(a) == np.shape(b)
        assert np.allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", [D.float32, D.float64])
def test_mlp_training_step(dtype):
    g, args = mlp_step(dtype)
    prog = compile_graph(g, f"mlp_{dtype.name}")
    assert prog.fallback is None and len(prog.kernels) == 1      # one jitted function
    _assert_same(prog(*args), run_graph(g, *args), dtype)
    body = prog.source.split("def make_call")[0]
    assert body.count("@njit") == 1
    assert "rt.dot(" in body or "rt.dot_into(" in body           # BLAS, not loops


def test_array_constants_are_arguments_not_globals():
    g, args = mlp_step(D.float32, weights_as_constants=True)
    prog = compile_graph(g, "mlp_consts")
    kernel_src = prog.source.split("def make_call")[0]
    assert "np.array(" not in kernel_src and "[[" not in kernel_src
    signature = kernel_src.split("def mlp_consts(")[1].split(")")[0]
    # x, labels, 4 weights, and scalars (the learning rate, 1/batch) passed as arguments
    arrays = [c for c in prog.consts if np.ndim(c)]
    assert len(arrays) == 4 and len(signature.split(",")) == 2 + len(prog.consts)
    _assert_same(prog(*args), run_graph(g, *args), D.float32)


def test_every_line_maps_to_its_node_whose_form_comments_its_first_line_only():
    """Errors name the node of any line; the reader sees each node's printed form once."""
    g, args = mlp_step(D.float64)
    gen = generate(g, "mlp_float64")
    lines = gen.source.split("\n")
    first = next(k for k, line in enumerate(lines) if line.startswith("def mlp_float64(")) + 3
    last = next(k for k, line in enumerate(lines) if line.startswith("def make_call")) - 3
    comments = []
    for number, line in enumerate(lines[first:last], first + 1):
        if line.strip() and not line.strip().startswith("return"):
            assert number in gen.line_nodes, line
        if "  # " in line:
            comments.append(line.split("  # ", 1)[1])
    assert len(comments) == len(set(comments)) and len(comments) < last - first
    assert any(" = ReluGrad " in c for c in comments)


def test_inputs_are_converted_when_the_fast_path_refuses_them():
    g = Graph()
    x, s = _input(g, (3, 4), D.float32), _input(g, (), D.float32)
    g.outputs = [add_node(g, "Mul", [x, s])]
    prog = compile_graph(g, "convert")
    xv = np.arange(12, dtype=np.float32).reshape(3, 4)
    want = run_graph(g, xv, np.float32(2))
    for xa, sa in [(xv, np.float32(2)), (xv, 2.0), (xv, np.array(2.0)), (xv.astype(np.float64), 2),
                   (np.asfortranarray(xv), np.float32(2)), (xv.tolist(), 2.0)]:
        ro = np.array(xa) if not isinstance(xa, list) else xa
        _assert_same(prog(ro, sa), want, D.float32)
    readonly = xv.copy()
    readonly.flags.writeable = False
    _assert_same(prog(readonly, 2.0), want, D.float32)
    # the source reads sizes from the arguments: another shape of the same rank runs too
    other = np.arange(6, dtype=np.float32).reshape(2, 3)
    # (the interpreter refuses sizes a concrete graph was not traced for; the compiled
    # program checks only what it relies on)
    _assert_same(prog(other, 2.0), (other * np.float32(2),), D.float32)
    with pytest.raises(ValueError, match="shape"):
        prog(np.ones((12,), np.float32), 2.0)


def _same_error(g, name, *args):
    """The compiled program raises the interpreter's error: same type, same message."""
    with pytest.raises(InvalidArgumentError) as want:
        run_graph(g, *args)
    with pytest.raises(InvalidArgumentError) as got:
        compile_graph(g, name)(*args)
    # the same message up to the user's line, which is each call's own
    assert str(got.value).split(" [at ")[0] == str(want.value).split(" [at ")[0]
    return str(got.value)


def test_runtime_errors_match_the_interpreter():
    g = Graph()
    p, i = _input(g, (4,), D.float64), _input(g, (2,), D.int32)
    g.outputs = [add_node(g, "GatherV2", [p, i], axis=0)]
    assert "GatherV2: indices[1] = 4 is not in [0, 4)" in _same_error(
        g, "gather_check", np.ones(4), np.array([1, 4], np.int32))
    g = Graph()
    a, b = _input(g, (3,), D.int32), _input(g, (3,), D.int32)
    g.outputs = [add_node(g, "FloorDiv", [a, b])]
    assert "FloorDiv: Integer division by zero" in _same_error(
        g, "int_div", np.ones(3, np.int32), np.array([1, 0, 2], np.int32))
    g = Graph()
    m = _input(g, (2, 2), D.float64)
    g.outputs = [add_node(g, "MatrixInverse", [m], adjoint=False)]
    assert "MatrixInverse: Singular matrix" in _same_error(g, "inv_singular", np.zeros((2, 2)))


def test_unknown_dimensions_compile_once_for_every_shape():
    g = Graph()
    x = _input(g, (None, 3), D.float64)
    g.outputs = [add_node(g, "Sum", [add_node(g, "Exp", [x])], axis=1, keepdims=False)]
    prog = compile_graph(g, "dynamic")
    for n in (2, 5, 2):
        xv = R.normal(size=(n, 3))
        _assert_same(prog(xv), (np.exp(xv).sum(axis=1),), D.float64)
    # one source for every shape (sizes are read from the arguments): one compile
    assert prog.fallback is None and "(5, 3)" not in prog.source
    assert sum(prog.stats().values()) == 1


def test_float16_falls_back_to_the_interpreter_and_says_so():
    g = Graph()
    x = _input(g, (3,), D.float16)
    g.outputs = [add_node(g, "Exp", [x])]
    prog = compile_graph(g, "half")
    assert "float16" in prog.fallback
    xv = np.array([0.5, 1.0, 2.0], np.float16)
    _assert_same(prog(xv), run_graph(g, xv), D.float32)


def test_custom_gradient_passes_its_forward_outputs_through():
    g = Graph()
    x = _input(g, (3,), D.float64)
    y = add_node(g, "Exp", [x])
    outs = add_node(g, "CustomGradient", [x, y], grad=Graph(), n_in=1, n_cap=0, mask=(True,))
    g.outputs = [add_node(g, "Mul", [outs[0], x])]
    xv = R.normal(size=3)
    _assert_same(compile_graph(g, "custom")(xv), run_graph(g, xv), D.float64)


@pytest.mark.parametrize("bad", ["np.no_such({})", "({} + 'text')", "(({})"])
def test_a_numba_failure_is_a_codegen_error_naming_the_node(monkeypatch, bad):
    """Unknown function (no location in Numba's error), typing error, Python syntax error."""
    g = Graph()
    x = _input(g, (3,), D.float64)
    g.outputs = [add_node(g, "Neg", [add_node(g, "Exp", [x])])]
    monkeypatch.setitem(CODEGEN, "Neg", Template("Neg", scalar=lambda x, ins, out: bad.format(x[0])))
    with pytest.raises(CodegenError, match=r"c:f64\[3\] = Neg b") as err:
        compile_graph(g, "broken_template")
    assert err.value.node == "c:f64[3] = Neg b"
    assert "numba" not in type(err.value).__module__


def test_large_programs_are_cut_into_parts():
    """Past MAX_LINES lines the program is several jitted parts: compile time stays linear."""
    g, args = Graph(), []
    for k in range(14):
        x, y = _input(g, (3, 4), D.float64), _input(g, (4,), D.float64)
        args += [R.normal(size=(3, 4)), R.normal(size=4)]
        c = add_node(g, "Sin", [add_node(g, "Mul", [x, y])])
        m = add_node(g, "MatMul", [c, c], transpose_b=True)
        g.outputs += [add_node(g, "Sum", [m], axis=1, keepdims=False), c]
    gen = generate(g, "parts")
    assert len(gen.parts) > 1
    prog = compile_graph(g, "parts")
    assert len(prog.kernels) == len({p.name for p in gen.parts})    # (equal parts share one)
    _assert_same(prog(*args), run_graph(g, *args), D.float64)
    # compiled again in this process (another graph of the same source: a size class, a
    # specialisation): its parts are found compiled, as the first part's return types say
    # what the later parts take, so the dispatchers are shared, nothing recompiled
    again = compile_graph(g, "parts")
    assert again.kernels == prog.kernels


def test_an_output_that_is_a_constant_is_a_copy():
    """The caller may freeze or mutate what it gets; the constant must survive the next call."""
    g = Graph()
    x = _input(g, (2, 3), D.float64)
    c = g.const(np.arange(6.0).reshape(2, 3))
    g.outputs = [c, add_node(g, "Reshape", [c], shape=(3, 2)), add_node(g, "Add", [x, c])]
    prog = compile_graph(g, "const_out")
    first = prog(np.ones((2, 3)))
    for a in first[:2]:
        a.flags.writeable = False if a is first[0] else True
    first[1][0, 0] = 100.0
    again = prog(np.ones((2, 3)))
    assert np.array_equal(again[0], np.arange(6.0).reshape(2, 3))
    assert np.array_equal(again[2], np.arange(6.0).reshape(2, 3) + 1)
