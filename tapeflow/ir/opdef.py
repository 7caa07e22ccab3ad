"""The op registry: one ``OpDef`` per op, keyed by TensorFlow's op-type name.

An OpDef says what an op *is*: how many tensor inputs, which attributes of which
kinds, how output shapes and dtypes follow from the inputs (``infer``), and the
properties passes rely on (purity, commutativity, ...), all set at its ``defop``.
Kernels, gradient rules, batching rules and codegen templates live in other
packages, in tables keyed by the same name; ``tests/test_op_completeness.py``
checks that every op has all of them.
"""
from collections import namedtuple
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import InferError
from . import dtypes as D
from .shapes import broadcast_shapes

AVal = namedtuple("AVal", "shape dtype")
AVal.__doc__ = "Abstract value: a shape tuple (ints or None) and a DType."


@dataclass(frozen=True, eq=False)
class OpDef:
    """What an op is, in one place: every property a pass, the codec or codegen asks about.

    ``infer(avals, **attrs)`` returns an AVal, or a tuple of AVals for multi-output ops,
    and raises ``InferError`` for bad inputs. ``arity`` is the number of tensor inputs
    (None: variadic). ``attrs`` maps each attribute name to its kind (a key of
    ``ATTR_KINDS`` or one of ``GRAPH_KINDS``): what a value of it holds, which the codec
    checks when it reads a graph. ``same_dtype`` lists the inputs that must share a dtype
    (Python scalars among them take the dtype of the tensors). ``kind`` guides fusion:
    "elementwise", "reduction" or "other".

    Properties passes rely on (each must hold for every input, bit for bit):

    - ``pure``: no effects, the same value for the same inputs, so DCE may drop it, CSE
      merge it, constant folding run it and the partitioner recompute it.
    - ``commutative``: swapping the two inputs gives the same bits (CSE merges ``a*b`` and
      ``b*a``). Not Maximum/Minimum: NumPy's ``maximum(-0.0, 0.0)`` depends on the order.
    - ``shape_noop``: the output is the first input whenever their types are equal (a
      reshape, broadcast, squeeze, tile or pad to the same shape); ``simplify`` drops it.
    - ``moves_data``: only moves, copies or describes data, so its cost is linear in what it
      writes, like an elementwise op; the partitioner may recompute it in the backward.
    - ``keeps_rows(attrs, flags, in_avals, out_avals)``: asked (by ``passes.rows``) only
      when every output's leading dimension is the batch, with ``flags[i]`` telling whether
      input i is a function of the source by rows: is row b of every output a function of
      row b of those inputs only? None: never (the row proof stops at this op).
      Elementwise ops default to ``elementwise_keeps_rows``.
    - ``widens_float32``: its codegen template's float32 expression comes out as float64
      in Numba (``math.erf``, ``rt.sign``'s integer branches), so the loop emitter casts it
      back; other float32 math stays float32.

    Facts the jacobian, the vectorizer, backprop and codegen ask (each False or empty unless
    set, so an op sets only what applies; ``tests/ir/test_op_facts.py`` checks them on
    values):

    - ``non_finite``: it can make an inf or NaN from finite inputs (a division by zero, the
      root or log of zero or of a negative), or is the gradient of such an op reading its
      result (``ReciprocalGrad``: inf * 0). Only where such an op occurs can a jacobian's
      diagonal one-hot seeds differ from TensorFlow's per-row gradient (0 * inf is NaN), so
      only then does ``tracer/jacobian.py`` check the fast result and run the exact one.
    - ``linear_in``: the input positions in which the op is linear and maps zero to zero
      while the other inputs are held fixed (``Mul`` in both, ``RealDiv`` in its numerator,
      the activation gradients in the cotangent): a one-hot seed stack there stays diagonal
      (``passes/batching/diag.py``), no dense stack is built.
    - ``same_shape``: an elementwise op that does not broadcast (every input has the
      output's shape: ``AddN``, the activation gradients), so its batching rule broadcasts
      an unbatched input up to the batched shape instead of aligning ranks.
    - ``gemm``: a matrix product ``op(a) @ op(b)`` with ``transpose_a``/``transpose_b``
      attributes and broadcast batch dimensions (BLAS's GEMM): layout sinking folds a
      transpose into it, the diagonal and scaled batching rules keep structured operands
      structured through it, a loop gradient hoists its weight-gradient accumulation out of
      the loop as one product, and for rank <= 2 its input gradients have the inputs' shapes.
    - ``broadcasts_to``: it broadcasts its input to a shape it is given (``BroadcastTo``):
      the input's gradient is summed back over sizes only the run knows, so backprop cannot
      assume it has the input's shape (``runtime.dispatch._gradient_fits``).
    - ``predicate``: a comparison or logic op: its bool result is a condition, not a cut
      differentiable path, so ``autodiff/explain.py`` never names it as a None gradient's cause.
    - ``unit``: ``(u, positions)``: a constant ``u`` in one of ``positions`` leaves the other
      input unchanged bit for bit (``x * 1``, ``x / 1``, ``x + 0``, ``x - 0``; for a float
      zero, the sign that keeps ``-0.0``): ``passes/simplify.py`` drops the op.
    - ``graph_inputs(in_avals, **attrs)``: for an op carrying graphs (If, While, the loop
      gradients), yields (graph attribute, the avals its inputs take), in an order where each
      graph's inputs are known when it comes (a loop gradient's backward body reads the
      forward body's outputs); ``codegen/dims.py`` re-infers each graph from those.
      None: the op carries no graph the code generator re-infers.
    - ``graph_operands``: ((graph attribute, first operand), ...) of nested graphs that take
      the operands from that position on as they are (If's branches, While's condition and
      body): tracing specializes them to the operands' shapes (``concrete_function``).
    - ``static_graphs``: its ``infer`` lets nested graphs of unknown dims take operands of
      known ones (for replays of a traced backward), but specialized they must have static
      sizes: tracing runs it as traced where a graph keeps an unknown dim.
    - ``stores_rows``: a loop that keeps every iteration's values for a backward sweep (the
      loop gradients and ``WhileStacks``), within a memory budget: ``tapeflow dump``'s loops
      stage describes how; ``passes/share_loops.py`` leaves cotangents it only reads unwritten.
    """
    name: str
    infer: Callable
    arity: int | None = 1
    attrs: dict = field(default_factory=dict)
    same_dtype: tuple = ()
    kind: str = "other"
    multi_output: bool = False
    pure: bool = True
    commutative: bool = False
    shape_noop: bool = False
    moves_data: bool = False
    keeps_rows: Callable | None = None
    widens_float32: bool = False
    non_finite: bool = False
    linear_in: tuple = ()
    same_shape: bool = False
    gemm: bool = False
    broadcasts_to: bool = False
    predicate: bool = False
    unit: tuple = ()
    graph_inputs: Callable | None = None
    graph_operands: tuple = ()
    static_graphs: bool = False
    stores_rows: bool = False


OPS: dict[str, OpDef] = {}


def defop(name, infer, **kw):
    """Define and register op ``name`` (keywords: the OpDef's fields); each op is defined once."""
    if name in OPS:
        raise KeyError(f"op {name!r} is already defined")
    for attr, kind in kw.get("attrs", {}).items():
        if kind not in ATTR_KINDS and kind not in GRAPH_KINDS:
            raise ValueError(f"op {name!r}: attribute {attr!r} has unknown kind {kind!r}")
    if kw.get("kind") == "elementwise":
        kw.setdefault("keeps_rows", elementwise_keeps_rows)
    OPS[name] = OpDef(name, infer, **kw)
    return OPS[name]


def elementwise_keeps_rows(attrs, flags, in_avals, out_avals):
    """An elementwise op keeps rows unless a row input of lower rank broadcasts along the batch."""
    return all(len(a.shape) == len(out_avals[0].shape) for a, f in zip(in_avals, flags) if f)


# -- attribute kinds: what a value of each kind may be ----------------------------------

def _is_int(x):
    return type(x) is int


def _seq(x):
    return isinstance(x, (tuple, list))


def _ints(x):
    return _seq(x) and all(_is_int(i) for i in x)


def _slice_item(s):
    return (s is None or s is Ellipsis or _is_int(s) or
            (_seq(s) and len(s) == 3 and all(i is None or _is_int(i) for i in s)))


ATTR_KINDS = {
    "bool": lambda x: type(x) is bool,
    "number": lambda x: type(x) in (bool, int, float),
    "int": _is_int,
    "int_or_none": lambda x: x is None or _is_int(x),
    "axis": lambda x: x is None or _is_int(x) or _ints(x),
    "dtype": lambda x: isinstance(x, D.DType),
    "str": lambda x: type(x) is str,
    "ints": _ints,
    "floats": lambda x: isinstance(x, tuple) and all(type(v) is float for v in x),
    "int_or_ints": lambda x: _is_int(x) or _ints(x),
    "shape": lambda x: _seq(x) and all(i is None or _is_int(i) for i in x),
    "pairs": lambda x: _seq(x) and all(_ints(p) and len(p) == 2 for p in x),
    "spec": lambda x: _seq(x) and all(_slice_item(s) for s in x),
    "bools": lambda x: isinstance(x, tuple) and all(type(b) is bool for b in x),
    "array": lambda x: isinstance(x, (np.ndarray, np.generic)),
}
# Attributes holding a Graph (control flow), or a gradient's Graph (a CustomGradient's; may
# be absent when the graph was saved without it).
GRAPH_KINDS = ("graph", "gradient")


# -- dtype checks and inference helpers used by the op families ---------------------

FLOATS = (D.float16, D.float32, D.float64)
INTS = (D.int8, D.int16, D.int32, D.int64, D.uint8, D.uint16, D.uint32, D.uint64)
NUMERIC = FLOATS + INTS


def check_dtype(aval, allowed, what="input"):
    if aval.dtype not in allowed:
        names = ", ".join(d.name for d in allowed)
        raise InferError(f"{what} has dtype {aval.dtype.name}, expected one of: {names}")


def check_same_dtype(avals):
    first = avals[0].dtype
    for i, a in enumerate(avals[1:], 1):
        if a.dtype != first:
            raise InferError(f"input #{i} has dtype {a.dtype.name}, but input #0 has {first.name}")
    return first


def unary(allowed=FLOATS):
    """Elementwise op: same shape and dtype as its input."""
    def infer(avals):
        check_dtype(avals[0], allowed)
        return avals[0]
    return infer


def binary(allowed=NUMERIC, out_dtype=None):
    """Broadcasting elementwise op of two inputs of one dtype."""
    def infer(avals):
        dt = check_same_dtype(avals)
        check_dtype(avals[0], allowed)
        return AVal(broadcast_shapes(avals[0].shape, avals[1].shape), out_dtype or dt)
    return infer


def def_unary(name, allowed=FLOATS, **kw):
    return defop(name, unary(allowed), kind="elementwise", **kw)


def def_binary(name, allowed=NUMERIC, out_dtype=None, **kw):
    return defop(name, binary(allowed, out_dtype), arity=2, same_dtype=(0, 1), kind="elementwise",
                 **kw)
