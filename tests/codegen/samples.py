"""Sample one-node programs for every op, and graphs that hold many of them.

The samples come from the gradient-check cases (tests/ops/cases_*.py): each case runs
eagerly with every NumPy kernel wrapped, so every op application it makes (with its real
inputs and attributes) becomes a sample. Hand-written samples add what the cases do not
reach: non-differentiable ops, integer and bool dtypes, and special values (nan, inf, -0).
Many samples go into one graph (independent subgraphs), so one Numba compile checks them all.
"""
import numpy as np

import tapeflow as tf
from tapeflow.ir import dtypes as D
from tapeflow.ir.graph import Graph, Value
from tapeflow.ir.opdef import OPS, AVal
from tapeflow.runtime.registry import KERNELS

from ops.cases import all_cases


class Sample:
    """``op`` applied to concrete ``args`` with ``attrs``."""

    def __init__(self, op, args, attrs, note=""):
        self.op, self.args, self.attrs, self.note = op, args, dict(attrs), note

    def key(self):
        sig = tuple((np.shape(a), np.asarray(a).dtype.name) for a in self.args)
        return (self.op, sig, repr(sorted(self.attrs.items(), key=lambda kv: kv[0])))

    def __repr__(self):
        shapes = ",".join(f"{np.asarray(a).dtype.name}{list(np.shape(a))}" for a in self.args)
        return f"{self.op}({shapes}){' ' + self.note if self.note else ''}"


def captured_samples():
    """Every distinct op application the gradient-check cases make."""
    cases, _ = all_cases()
    seen, out = set(), []
    originals = dict(KERNELS)

    def wrap(name, fn):
        def recording(*args, **attrs):
            s = Sample(name, [np.array(a, copy=True) for a in args], attrs)
            if s.key() not in seen:
                seen.add(s.key())
                out.append(s)
            return fn(*args, **attrs)
        return recording

    try:
        for name, fn in originals.items():
            KERNELS[name] = wrap(name, fn)
        for op in sorted(cases):
            for case in cases[op]:
                case.fn(*[tf.constant(a) for a in case.args])
    finally:
        KERNELS.update(originals)
    return out


def add_node(g, op, ins, **attrs):
    opdef = OPS[op]
    out = opdef.infer([v.aval for v in ins], **attrs)
    outs = list(out) if opdef.multi_output else [out]
    node = g.add(op, ins, attrs, outs)
    return node.outputs if opdef.multi_output else node.outputs[0]


def as_input(a):
    """A graph input value for array ``a`` and the argument passed for it."""
    a = np.asarray(a)
    v = Value(AVal(tuple(a.shape), D.as_dtype(a.dtype)))
    return v, (a.dtype.type(a[()]) if a.ndim == 0 else a)


def to_float32(a):
    a = np.asarray(a)
    return a.astype(np.float32) if a.dtype == np.float64 else a


def samples_graph(samples):
    """One graph running every sample independently; returns (graph, args)."""
    g, args = Graph(), []
    for s in samples:
        ins = []
        for a in s.args:
            v, arg = as_input(a)
            g.inputs.append(v)
            args.append(arg)
            ins.append(v)
        out = add_node(g, s.op, ins, **s.attrs)
        g.outputs.extend(out if isinstance(out, list) else [out])
    return g, args


def distinct(samples, per_op=4, per_elementwise_op=None):
    """At most ``per_op`` samples per op, one per (dtypes, ranks, broadcast pattern, attrs)."""
    from tapeflow.codegen import CODEGEN
    seen, count, out = set(), {}, []
    for s in samples:
        limit = per_op
        if per_elementwise_op is not None and CODEGEN[s.op].scalar is not None:
            limit = per_elementwise_op
        sig = tuple((np.ndim(a), tuple(d == 1 for d in np.shape(a)), np.asarray(a).dtype.name)
                    for a in s.args)
        key = (s.op, sig, repr(sorted(s.attrs.items(), key=lambda kv: kv[0])))
        if key in seen or count.get(s.op, 0) >= limit:
            continue
        seen.add(key)
        count[s.op] = count.get(s.op, 0) + 1
        out.append(s)
    return out


NAN, INF = float("nan"), float("inf")
SPECIAL = np.array([NAN, INF, -INF, 0.0, -0.0, 1e-30, -1e-30, 1e-5, -1e-5, 0.5, -0.5, 1.5, -2.5,
                    3.0, 6.0, 20.0, -20.0, 88.0, -88.0, 100.0, -100.0, 1e30, -1e30])
FLOAT_UNARY = ["Neg", "Square", "Abs", "Sign", "Sqrt", "Rsqrt", "Reciprocal", "Exp", "Log", "Log1p",
               "Expm1", "Sin", "Cos", "Tan", "Tanh", "Sigmoid", "Floor", "Round", "Erf", "Relu",
               "Relu6", "Elu", "Selu", "Softplus", "Softsign", "IsFinite", "IsNan", "IsInf",
               # special functions (issue 29)
               "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Ceil", "Rint",
               "Lgamma", "Digamma", "Erfc", "Erfinv", "Ndtri", "BesselI0", "BesselI0e",
               "BesselI1", "BesselI1e"]
FLOAT_BINARY = ["Add", "Sub", "Mul", "RealDiv", "FloorDiv", "FloorMod", "Pow", "Maximum", "Minimum",
                "Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual",
                "SqrtGrad", "RsqrtGrad", "ReciprocalGrad", "ReluGrad", "Relu6Grad", "EluGrad",
                "SeluGrad", "LeakyReluGrad",
                # special functions (issue 29)
                "Atan2", "Xlogy", "Xlog1py", "Xdivy", "DivNoNan", "MulNoNan", "SquaredDifference",
                "TruncateDiv", "TruncateMod", "NextAfter"]


def special_samples(binary=True):
    """Every float elementwise op on nan, +-inf, +-0, tiny, huge and ordinary values."""
    x, y = SPECIAL[:, None], SPECIAL[None, :]
    out = [Sample(op, [SPECIAL], {}, "special") for op in FLOAT_UNARY]
    out.append(Sample("LeakyRelu", [SPECIAL], {"alpha": 0.3}, "special"))
    for op in (FLOAT_BINARY if binary else ()):
        attrs = {"alpha": 0.3} if op == "LeakyReluGrad" else {}
        out.append(Sample(op, [np.broadcast_to(x, (23, 23)).copy() if op.endswith("Grad") else x,
                               np.broadcast_to(y, (23, 23)).copy() if op.endswith("Grad") else y],
                          attrs, "special"))
    return out


R = np.random.default_rng(7)


def extra_samples():
    """Ops and dtypes the gradient cases do not reach."""
    i32 = R.integers(-9, 10, (3, 4)).astype(np.int32)
    pos = R.integers(1, 5, (4,)).astype(np.int32)
    i8 = R.integers(-128, 128, (3, 4)).astype(np.int8)
    u8 = R.integers(0, 256, (3, 4)).astype(np.uint8)
    f = R.uniform(-3, 3, (3, 4))
    fn = f.copy()
    fn[1, 2] = NAN
    b1, b2 = R.random((3, 4)) > 0.5, R.random((4,)) > 0.5
    half = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999, -3.5, 7.0])
    out = [
        Sample("CheckTripCount", [f, np.int32(3)], {"message": "loop must iterate at least once"}),
        Sample("EnsureShape", [f], {"shape": (3, 4)}),
        Sample("StopGradient", [f], {}), Sample("Floor", [f], {}), Sample("Round", [half], {}),
        Sample("FloorDiv", [f, f[0] + 4.0], {}), Sample("FloorDiv", [i32, pos], {}),
        Sample("FloorMod", [i32, -pos], {}), Sample("FloorMod", [i32, pos], {}),
        Sample("Pow", [i32, np.abs(i32) % 4], {}), Sample("Pow", [i8, np.full((4,), 9, np.int8)], {}),
        Sample("Add", [i8, i8], {}), Sample("Mul", [i8, i8], {}), Sample("Sub", [u8, u8], {}),
        Sample("Neg", [u8], {}), Sample("Abs", [i8], {}), Sample("Sign", [i32], {}),
        Sample("Maximum", [i32, pos], {}), Sample("Minimum", [i8, i8[0]], {}),
        Sample("Square", [i32], {}), Sample("AddN", [i32, i32, i32], {}),
        Sample("Relu", [i32], {}), Sample("Relu6", [i32], {}),
        Sample("Cast", [f], {"dtype": D.int32}), Sample("Cast", [f * 50], {"dtype": D.uint8}),
        Sample("Cast", [i32], {"dtype": D.float32}), Sample("Cast", [fn], {"dtype": D.bool_}),
        Sample("Cast", [b1], {"dtype": D.float64}), Sample("Cast", [i32], {"dtype": D.int8}),
        Sample("Less", [i32, pos], {}), Sample("LessEqual", [f, f[1]], {}),
        Sample("Less", [fn, f[0]], {}), Sample("Equal", [fn, f], {}), Sample("NotEqual", [f, fn], {}),
        Sample("Greater", [i32, pos], {}), Sample("GreaterEqual", [fn, f], {}),
        Sample("Equal", [b1, b2], {}), Sample("NotEqual", [i32, i32[::-1].copy()], {}),
        Sample("LogicalAnd", [b1, b2], {}), Sample("LogicalOr", [b1, b2], {}),
        Sample("LogicalNot", [b1], {}), Sample("SelectV2", [b1, i32, pos], {}),
        Sample("IsFinite", [fn], {}), Sample("IsNan", [fn], {}), Sample("IsInf", [np.where(fn > 0, INF, fn)], {}),
        Sample("Any", [b1], {"axis": 1, "keepdims": False}), Sample("Any", [b1], {"axis": None}),
        Sample("All", [b1], {"axis": 0, "keepdims": True}), Sample("All", [b1], {"axis": None}),
        Sample("Sum", [i32], {"axis": 0}), Sample("Sum", [i8], {"axis": None}),
        Sample("Prod", [i32], {"axis": 1, "keepdims": True}),
        Sample("Mean", [i32], {"axis": 1}), Sample("Mean", [i32], {"axis": None, "keepdims": True}),
        Sample("Max", [fn], {"axis": 1}), Sample("Min", [fn], {"axis": None}),
        Sample("Max", [i8], {"axis": (0, 1), "keepdims": True}), Sample("Min", [u8], {"axis": 0}),
        Sample("Max", [i32.astype(np.int64)], {"axis": 1}), Sample("Min", [i32.astype(np.int64)], {}),
        Sample("Sum", [f], {"axis": []}), Sample("Mean", [np.zeros((0, 3))], {"axis": 0}),
        Sample("Max", [np.zeros((2, 0))], {"axis": 1}),
        Sample("ArgMax", [fn], {"axis": 1, "output_type": D.int64}),
        Sample("ArgMax", [i32], {"axis": 0, "output_type": D.int32}),
        Sample("ArgMin", [fn], {"axis": 0, "output_type": D.int64}),
        Sample("ArgMin", [np.array([3.0, 1.0, 1.0, 2.0])], {"axis": 0, "output_type": D.int32}),
        Sample("Shape", [f], {"out_type": D.int32}), Sample("Shape", [np.float64(2.0)], {"out_type": D.int64}),
        Sample("Size", [f], {"out_type": D.int32}),
        Sample("OneHot", [np.array([0, 2, -1, 5, 1], np.int32)],
               {"depth": 3, "on_value": 1.0, "off_value": 0.0, "axis": -1, "dtype": D.float32}),
        Sample("OneHot", [np.array([[0, 2], [1, 7]], np.int64)],
               {"depth": 4, "on_value": 5, "off_value": -1, "axis": 0, "dtype": D.int32}),
        Sample("OneHot", [np.int32(1)],
               {"depth": 3, "on_value": 2.0, "off_value": 0.5, "axis": -1, "dtype": D.float64}),
        Sample("MatMul", [i32, i32.T.copy()], {"transpose_a": False, "transpose_b": False}),
        Sample("MatMul", [i32, i32], {"transpose_a": True, "transpose_b": False}),
        Sample("Einsum", [i32, pos], {"equation": "ij,j->i"}),
        Sample("Reshape", [np.float64(3.0)], {"shape": (1, 1)}),
        Sample("Reshape", [np.ones((1, 1))], {"shape": ()}),
        Sample("BroadcastTo", [np.float64(1.5)], {"shape": (2, 3)}),
        Sample("Pack", [np.float64(1.0), np.float64(2.0)], {"axis": 0}),
        Sample("Unpack", [f[0]], {"num": 4, "axis": 0}),
        Sample("Tile", [i32], {"multiples": (2, 1)}),
        Sample("Pad", [i32], {"paddings": ((0, 1), (2, 0)), "constant_values": 7}),
        Sample("Transpose", [R.uniform(size=(2, 3, 4))], {"perm": (1, 2, 0)}),
        Sample("StridedSlice", [np.arange(24.0).reshape(2, 3, 4)],
               {"spec": (Ellipsis, (None, None, -1), 1)}),
        Sample("StridedSlice", [np.arange(6.0)], {"spec": ((5, 0, -2),)}),
        Sample("StridedSlice", [np.arange(6.0)], {"spec": (3,)}),
        Sample("GatherV2", [np.arange(5.0), np.int64(4)], {"axis": 0}),
        Sample("UnsortedSegmentSum", [i32, np.array([1, -1, 1], np.int32)], {"num_segments": 3}),
        Sample("Softmax", [np.array([[1.0, NAN, 0.0], [INF, 1.0, 2.0]])], {"axis": -1}),
        Sample("LogSoftmax", [R.uniform(-5, 5, (2, 3, 4))], {"axis": 1}),
        # special functions (issue 29): the non-differentiable ones, integer dtypes
        Sample("Ceil", [half], {}), Sample("Rint", [half], {}),
        Sample("TruncateDiv", [i32, pos], {}), Sample("TruncateDiv", [i32, -pos], {}),
        Sample("TruncateDiv", [i8, np.full((4,), 3, np.int8)], {}),
        Sample("TruncateDiv", [f, f[0] + 4.0], {}), Sample("TruncateMod", [i32, -pos], {}),
        Sample("TruncateMod", [i32.astype(np.int64), pos.astype(np.int64)], {}),
        Sample("SquaredDifference", [i32, pos], {}),
        Sample("Betainc", [np.array([0.5, 2.0, -1.0, 3.0]), np.float64(1.5),
                           np.array([0.3, 0.9, 0.5, 1.0])], {}),
        # scans, indexing, sorting (issue 29): integer dtypes and the non-differentiable ops
        Sample("Cumsum", [i32], {"axis": 0, "exclusive": True, "reverse": False}),
        Sample("Cumprod", [i8], {"axis": 1, "exclusive": False, "reverse": True}),
        Sample("ReverseV2", [b1], {"axis": (0, 1)}), Sample("Roll", [i32], {"shift": (5,), "axis": (1,)}),
        Sample("GatherNd", [i32, np.array([[2, 3], [0, 0]], np.int64)], {}),
        Sample("TensorScatterUpdate", [b1, np.array([[1], [1]], np.int32), np.ones((2, 4), bool)], {}),
        Sample("TensorScatterMax", [i32, np.array([[0, 1], [2, 2]], np.int32), pos[:2]], {}),
        Sample("TopKV2", [np.array([[1, 3, 3, 2], [4, 4, 4, 0]], np.int32)],
               {"k": 3, "sorted": True, "index_type": D.int64}),
        Sample("InTopKV2", [np.array([[0.1, 0.9, 0.5], [0.2, NAN, 0.6], [1.0, 1.0, 1.0]], np.float32),
                            np.array([1, 0, 2], np.int32)], {"k": 1}),
        # Bitcast (issue 29): wider, narrower and same-size types
        Sample("Bitcast", [f], {"type": D.int32}), Sample("Bitcast", [i32], {"type": D.uint8}),
        Sample("Bitcast", [i8], {"type": D.int32}),
        Sample("ParallelConcat", [i32[:1], i32[2:]], {"shape": (2, 4)}),
    ]
    return out + random_samples()


def random_samples():
    """The stateless random ops (issue 29): the same Philox bits compiled as eager."""
    key = np.array([10413732777507651514], np.uint64)          # the key of seed [1, 2]
    ctr = np.array([0, 17830669156045600267], np.uint64)
    skey, sctr = np.array([0], np.int64), np.array([5, 0], np.int64)   # a Generator's state
    return [
        # CheckNumerics (issue 29) in float32 too: the gradient cases are float64
        Sample("CheckNumerics", [np.array([[1.5, -2.0], [0.25, 3.0]], np.float32)],
               {"message": "m"}),
        Sample("StatelessRandomGetKeyCounter", [np.array([1, 2], np.int64)], {}),
        Sample("StatelessRandomGetKeyCounter", [np.array([-7, 3], np.int32)], {}),
        Sample("StatelessRandomUniformV2", [key, ctr], {"shape": (3, 5), "dtype": D.float64}),
        Sample("StatelessRandomUniformV2", [skey, sctr], {"shape": (7,), "dtype": D.float32}),
        Sample("StatelessRandomNormalV2", [key, ctr], {"shape": (2, 3), "dtype": D.float32}),
        Sample("StatelessRandomNormalV2", [skey, sctr], {"shape": (5,), "dtype": D.float64}),
        Sample("StatelessTruncatedNormalV2", [key, ctr], {"shape": (9,), "dtype": D.float32}),
        Sample("StatelessTruncatedNormalV2", [key, ctr], {"shape": (), "dtype": D.float64}),
        Sample("StatelessRandomUniformIntV2", [key, ctr, np.int32(-5), np.int32(100)],
               {"shape": (6,)}),
        Sample("StatelessRandomUniformIntV2", [skey, sctr, np.int64(-5), np.int64(2**40)],
               {"shape": (2, 2)}),
        Sample("StatelessRandomUniformFullIntV2", [key, ctr], {"shape": (3, 2), "dtype": D.int32}),
        Sample("StatelessRandomUniformFullIntV2", [skey, sctr], {"shape": (3,), "dtype": D.int64}),
    ] + sampler_samples(key, ctr)


def sampler_samples(key, ctr):
    """The stateless samplers (issue 29): one sample each, compiled as eager."""
    seed = np.array([1, 2], np.int32)
    f32 = np.float32
    return [
        Sample("StatelessMultinomial", [np.array([[0.5, 1.0, -1.0], [2.0, 0.0, 1.0]], f32), seed],
               {"num_samples": 4, "output_dtype": D.int64, "threads": 2}),
        Sample("StatelessRandomGammaV3", [key, ctr, np.array([0.5, 2.5])], {"shape": (3, 2)}),
        Sample("StatelessRandomPoisson", [np.array([3, 4], np.int64), np.array([2.0, 30.0], f32)],
               {"shape": (2, 2), "dtype": D.int32}),
        Sample("StatelessRandomBinomial", [seed, np.array([10.0, 80.0]), np.array([0.3, 0.6])],
               {"shape": (3, 2), "dtype": D.float32}),
        Sample("StatelessParameterizedTruncatedNormal",
               [seed, f32(0.0), f32(1.0), f32(-1.0), f32(3.0)], {"shape": (5,), "threads": 2}),
        # large enough for TensorFlow to split them between 2 threads (their streams restart)
        Sample("StatelessMultinomial", [np.linspace(-2.0, 2.0, 1200).reshape(12, 100), seed],
               {"num_samples": 40, "output_dtype": D.int32, "threads": 2}),
        Sample("StatelessParameterizedTruncatedNormal",
               [seed, f32(0.0), f32(1.0), f32(0.5), f32(0.75)], {"shape": (1200,), "threads": 2}),
        Sample("RandomIndexShuffle", [np.arange(4, dtype=np.int32), np.array([7, 5, 9]), np.int32(3)],
               {"rounds": 4}),
    ]
