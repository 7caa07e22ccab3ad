"""IR graphs: verifier, stable text printer, JSON round trip."""
import json

import numpy as np
import pytest

import tapeflow  # noqa: F401  (registers the ops)
from tapeflow.ir import dtypes as D
from tapeflow.ir.codec import DecodeError, decode, encode
from tapeflow.ir.graph import Graph, Value, VerifyError, print_graph, verify
from tapeflow.ir.opdef import AVal


def small_graph():
    g = Graph()
    a = Value(AVal((3,), D.float32))
    b = Value(AVal((), D.float32))
    g.inputs = [a, b]
    c = g.add("Mul", [a, b], {}, [AVal((3,), D.float32)]).outputs[0]
    k = g.const(np.float32(2.0))
    d = g.add("Add", [c, k], {}, [AVal((3,), D.float32)]).outputs[0]
    e = g.add("Sum", [d], {"axis": None, "keepdims": False}, [AVal((), D.float32)]).outputs[0]
    g.outputs = [e, c]
    return g


def test_printer_is_compact_typed_and_stable():
    assert print_graph(verify(small_graph())) == (
        "{ lambda a:f32[3] b:f32[] ; let\n"
        "    c:f32[3] = Mul a b\n"
        "    d:f32[] = Const 2.0\n"
        "    e:f32[3] = Add c d\n"
        "    f:f32[] = Sum[axis=None keepdims=False] e\n"
        "  in (f c) }")


def test_json_round_trip_preserves_the_text_form():
    g = small_graph()
    data = json.loads(json.dumps(encode(g)))
    assert print_graph(decode(data)) == print_graph(g)


def test_json_round_trip_of_array_constants_and_dtype_attrs():
    g = Graph()
    a = Value(AVal((2,), D.float32))
    g.inputs = [a]
    k = g.const(np.array([1.5, -2.0], np.float32))
    c = g.add("Cast", [a], {"dtype": D.float64}, [AVal((2,), D.float64)]).outputs[0]
    g.outputs = [c, k]
    back = decode(json.loads(json.dumps(encode(g))))
    np.testing.assert_array_equal(back.nodes[0].attrs["value"], [1.5, -2.0])
    assert back.nodes[1].attrs["dtype"] == D.float64


def test_verifier_rejects_bad_graphs():
    g = small_graph()
    g.nodes[0].outputs[0].aval = AVal((4,), D.float32)
    with pytest.raises(VerifyError, match="inference"):
        verify(g)
    g = small_graph()
    g.nodes.reverse()
    with pytest.raises(VerifyError, match="before it is defined"):
        verify(g)
    g = small_graph()
    g.nodes[0].op = "NoSuchOp"
    with pytest.raises(VerifyError, match="unknown op"):
        verify(g)


def test_wrong_format_version_is_rejected():
    data = encode(small_graph())
    data["version"] = 99
    with pytest.raises(DecodeError, match="version"):
        decode(data)
