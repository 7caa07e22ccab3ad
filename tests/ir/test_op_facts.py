"""The facts passes ask about an op (``OpDef`` fields, issue 24 item 2) hold on values.

Each flag is checked against the op's own kernel, so an op added without a flag it needs
(a new division that can make inf, a non-broadcasting elementwise op) fails here by name.
"""
import itertools

import numpy as np
import pytest

import tapeflow  # noqa: F401  (registers every op and kernel)
from tapeflow.errors import InferError
from tapeflow.ir import dtypes as D
from tapeflow.ir.opdef import GRAPH_KINDS, OPS, AVal
from tapeflow.runtime.registry import KERNELS

F64 = D.float64
# attribute values by kind for the elementwise ops that take attributes (Cast, LeakyRelu)
ATTR_VALUES = {"number": 0.2, "dtype": F64, "bool": False}
GRID = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0)


def _attrs(op):
    return {name: ATTR_VALUES[kind] for name, kind in op.attrs.items()}


def _float_elementwise():
    """Elementwise ops of fixed arity taking float64 inputs of one shape, with their attrs."""
    for name, op in sorted(OPS.items()):
        n = op.arity if op.arity is not None else 2
        if op.kind != "elementwise" or n == 0 or any(k not in ATTR_VALUES for k in op.attrs.values()):
            continue
        try:
            op.infer([AVal((3,), F64)] * n, **_attrs(op))
        except InferError:
            continue            # (bool operands: comparisons' logic, SelectV2's condition)
        yield name, op, n


FLOAT_ELEMENTWISE = list(_float_elementwise())


def _run(name, op, args):
    with np.errstate(all="ignore"):
        return np.asarray(KERNELS[name](*args, **_attrs(op)), dtype=np.float64)


def _makes_non_finite(name, op, n):
    cols = np.array(list(itertools.product(GRID, repeat=n))).T
    return not np.all(np.isfinite(_run(name, op, list(cols))))


# Flagged though finite on finite values: Tan (its pole is no float; TensorFlow's list has
# it), and the gradients of reciprocal and rsqrt, which read the forward's result: an inf
# there (1/0) meets a zero seed (inf * 0 is NaN).
FLAGGED_FINITE = {"Tan", "ReciprocalGrad", "RsqrtGrad"}


def test_the_float_elementwise_ops_are_found():
    names = {name for name, _, _ in FLOAT_ELEMENTWISE}
    assert {"Add", "RealDiv", "Sqrt", "ReluGrad", "AddN", "Cast", "LeakyReluGrad"} <= names


@pytest.mark.parametrize("name,op,n", FLOAT_ELEMENTWISE, ids=[c[0] for c in FLOAT_ELEMENTWISE])
def test_an_op_making_inf_or_nan_from_finite_values_is_flagged_non_finite(name, op, n):
    """On a grid of ordinary finite values (0, +-1, halves, +-2): an op that makes an inf or
    NaN must be flagged, and a flagged one does, but for ``FLAGGED_FINITE``."""
    if _makes_non_finite(name, op, n):
        assert op.non_finite, f"{name} makes inf/NaN from finite values: set non_finite=True"
    elif name not in FLAGGED_FINITE:
        assert not op.non_finite, f"{name} is flagged non_finite but stays finite"


LINEAR = [(name, k) for name, op in sorted(OPS.items()) for k in op.linear_in]


@pytest.mark.parametrize("name,k", LINEAR, ids=[f"{n}-{k}" for n, k in LINEAR])
def test_linear_in_is_linear_and_maps_zero_to_zero(name, k):
    op = OPS[name]
    rng = np.random.default_rng(1)
    n = op.arity
    # the other operands held fixed, away from 0 (a denominator, an activation's output)
    fixed = [rng.uniform(0.5, 2.0, (4, 3)) for _ in range(n)]
    x, y = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))

    def f(v):
        args = list(fixed)
        args[k] = v
        return _run(name, op, args)

    np.testing.assert_allclose(f(2.5 * x - 1.5 * y), 2.5 * f(x) - 1.5 * f(y), rtol=1e-12, atol=1e-12)
    assert np.all(f(np.zeros((4, 3))) == 0)


def test_the_diagonal_rules_follow_linear_in():
    from tapeflow.passes.batching.diag import DIAG_RULES, linear
    assert {n for n, op in OPS.items() if op.linear_in} == {n for n, r in DIAG_RULES.items() if r is linear}
    assert len(LINEAR) >= 12


@pytest.mark.parametrize("name,op,n", [c for c in FLOAT_ELEMENTWISE if c[2] >= 2],
                         ids=[c[0] for c in FLOAT_ELEMENTWISE if c[2] >= 2])
def test_same_shape_is_an_elementwise_op_that_does_not_broadcast(name, op, n):
    avals = [AVal((3,), F64)] + [AVal((1,), F64)] * (n - 1)
    try:
        out = op.infer(avals, **_attrs(op))
    except InferError:
        assert op.same_shape, f"{name} refuses to broadcast: set same_shape=True"
        return
    assert not op.same_shape and tuple(out.shape) == (3,)


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items() if op.gemm))
def test_gemm_is_a_product_with_transpose_attributes(name):
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 3, 5))
    for ta, tb in itertools.product((False, True), repeat=2):
        x = np.swapaxes(a, -1, -2).copy() if ta else a
        y = np.swapaxes(b, -1, -2).copy() if tb else b
        got = KERNELS[name](x, y, transpose_a=ta, transpose_b=tb)
        np.testing.assert_allclose(got, a @ b, rtol=1e-12)
        np.testing.assert_allclose(KERNELS[name](x[0], y[0], transpose_a=ta, transpose_b=tb),
                                   a[0] @ b[0], rtol=1e-12)
    assert {"transpose_a", "transpose_b"} <= set(OPS[name].attrs)


def test_broadcasts_to_ops_broadcast_to_a_shape_attribute():
    names = sorted(n for n, op in OPS.items() if op.broadcasts_to)
    assert "BroadcastTo" in names
    for name in names:
        assert "shape" in OPS[name].attrs and OPS[name].moves_data
    out = KERNELS["BroadcastTo"](np.ones((1, 3)), shape=(2, 3))
    assert out.shape == (2, 3)


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items() if op.predicate))
def test_predicates_give_bool_results(name):
    op = OPS[name]
    for dtype in (F64, D.bool_):
        try:
            out = op.infer([AVal((3,), dtype)] * op.arity)
        except InferError:
            continue
        assert out.dtype == D.bool_
        break
    else:
        pytest.fail(f"{name} takes neither float64 nor bool")


UNITS = [(name, k) for name, op in sorted(OPS.items()) if op.unit for k in op.unit[1]]


@pytest.mark.parametrize("name,k", UNITS, ids=[f"{n}-{k}" for n, k in UNITS])
def test_a_unit_operand_leaves_the_other_unchanged_bit_for_bit(name, k):
    u = OPS[name].unit[0]
    x = np.array([-2.5, -0.0, 0.0, 1.0, 3.25, np.inf, -np.inf])
    args = [x, x]
    args[k] = np.full_like(x, u)
    got = KERNELS[name](*args)
    assert got.tobytes() == x.tobytes()


def test_graph_facts_name_graph_attributes():
    for name, op in OPS.items():
        graphs = {a for a, kind in op.attrs.items() if kind in GRAPH_KINDS}
        assert {a for a, _ in op.graph_operands} <= graphs, name
        if op.graph_operands or op.static_graphs or op.stores_rows:
            assert op.graph_inputs is not None, name
        if op.graph_inputs is not None:
            assert graphs, name
        if op.stores_rows:
            assert "n_vars" in op.attrs, name
