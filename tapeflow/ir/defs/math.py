"""Elementwise math ops: arithmetic, transcendental functions, comparisons, casts.

Allowed dtypes follow TensorFlow's kernel registrations, so an op TF refuses
(``sqrt`` of an int32, ``add`` of bools) fails here, at dispatch, naming the op.
"""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import AVal, FLOATS, NUMERIC, check_dtype, check_same_dtype, def_binary, def_unary, defop
from ..shapes import broadcast_shapes

BOOL = (D.bool_,)

# -- identity-like -------------------------------------------------------------------
defop("Identity", lambda avals: avals[0], kind="elementwise", moves_data=True, linear_in=(0,))
defop("StopGradient", lambda avals: avals[0], kind="elementwise", moves_data=True)


def _cast(avals, dtype):
    return AVal(avals[0].shape, D.as_dtype(dtype))


defop("Cast", _cast, attrs={"dtype": "dtype"}, kind="elementwise", moves_data=True)

# -- arithmetic ----------------------------------------------------------------------
# Add and Mul are exactly commutative in IEEE arithmetic; Maximum and Minimum are not in
# NumPy (maximum(-0.0, 0.0) depends on the order).
# ``unit``: x + (-0.0) and x - (+0.0) are x exactly; x + 0.0 turns a -0.0 in x into +0.0.
def_binary("Add", NUMERIC, commutative=True, unit=(-0.0, (0, 1)))
def_binary("Sub", NUMERIC, unit=(0.0, (1,)))
def_binary("Mul", NUMERIC, commutative=True, linear_in=(0, 1), unit=(1, (0, 1)))
for _name in ("FloorDiv", "FloorMod", "Pow"):
    def_binary(_name, NUMERIC, non_finite=True)
for _name in ("Maximum", "Minimum"):
    def_binary(_name, NUMERIC)
# ints reach RealDiv only through truediv, which casts them first
def_binary("RealDiv", FLOATS, non_finite=True, linear_in=(0,), unit=(1, (1,)))
def_unary("Neg", NUMERIC, linear_in=(0,))
for _name in ("Square", "Abs"):
    def_unary(_name, NUMERIC)
def_unary("Sign", NUMERIC, widens_float32=True)


def _add_n(avals):
    """AddN does not broadcast: every input has the shape and dtype of the first."""
    if not avals:
        raise InferError("AddN needs at least one input")
    dt = check_same_dtype(avals)
    check_dtype(avals[0], NUMERIC)
    for i, a in enumerate(avals[1:], 1):
        if tuple(a.shape) != tuple(avals[0].shape):
            raise InferError(f"input #{i} has shape {tuple(a.shape)}, but input #0 has "
                             f"{tuple(avals[0].shape)} (add_n does not broadcast)")
    return AVal(tuple(avals[0].shape), dt)


defop("AddN", _add_n, arity=None, kind="elementwise", same_shape=True)

# -- transcendental and rounding (floating point only) -------------------------------
# non_finite: a root, log or reciprocal of 0 (or of a negative); Tan for its pole, though
# no float lands on the pole exactly
for _name in ("Sqrt", "Rsqrt", "Reciprocal", "Exp", "Log", "Log1p", "Expm1", "Sin", "Cos", "Tan",
              "Tanh", "Sigmoid", "Floor", "Round"):
    def_unary(_name, FLOATS, non_finite=_name in ("Sqrt", "Rsqrt", "Reciprocal", "Log", "Log1p", "Tan"))
def_unary("Erf", FLOATS, widens_float32=True)
# TF's fused gradient kernels of sqrt, rsqrt and reciprocal: (y, dy) -> dx, 0 wherever dy is 0.
# non_finite: they read y, which may be the inf their forward made.
for _name in ("SqrtGrad", "RsqrtGrad", "ReciprocalGrad"):
    def_binary(_name, FLOATS, non_finite=True, linear_in=(1,))

# -- comparisons and logic (bool results) --------------------------------------------
for _name in ("Less", "LessEqual", "Greater", "GreaterEqual"):
    def_binary(_name, NUMERIC, out_dtype=D.bool_, predicate=True)
for _name in ("Equal", "NotEqual"):
    def_binary(_name, NUMERIC + BOOL, out_dtype=D.bool_, commutative=True, predicate=True)
for _name in ("LogicalAnd", "LogicalOr"):
    def_binary(_name, BOOL, commutative=True, predicate=True)
def_unary("LogicalNot", BOOL, predicate=True)


def _float_test(avals):
    """is_finite/is_nan/is_inf: a float input, a bool result of its shape."""
    check_dtype(avals[0], FLOATS)
    return AVal(avals[0].shape, D.bool_)


for _name in ("IsFinite", "IsNan", "IsInf"):
    defop(_name, _float_test, kind="elementwise")


def _select(avals):
    """where(condition, x, y): a bool condition; x and y of one dtype; all three broadcast."""
    cond, x, y = avals
    check_dtype(cond, BOOL, "condition")
    if x.dtype != y.dtype:
        raise InferError(f"x has dtype {x.dtype.name} but y has {y.dtype.name}")
    return AVal(broadcast_shapes(cond.shape, x.shape, y.shape), x.dtype)


defop("SelectV2", _select, arity=3, same_dtype=(1, 2), kind="elementwise")

