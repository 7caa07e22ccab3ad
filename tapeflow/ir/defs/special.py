"""Elementwise special functions: inverse trigonometric and hyperbolic functions, gamma-family
functions, Bessel functions, the ``*_no_nan``/``x*log(y)`` family and truncating division.

Each op is TensorFlow's op of the same name, with the dtypes TF's CPU kernels are registered
for (``erfinv`` of a float16 is refused there too): a refusal names the op at dispatch.
"""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import AVal, FLOATS, check_dtype, check_same_dtype, def_binary, def_unary, defop
from ..shapes import broadcast_shapes

F32_64 = (D.float32, D.float64)
SIGNED = (D.int32, D.int64)

# Ops that make an inf or NaN from finite inputs (outside their domain, at a pole, by 0):
# ``OpDef.non_finite`` (tests/ir/test_op_facts.py checks each on a grid of finite values).
NON_FINITE = {"Asin", "Acos", "Acosh", "Atanh", "Lgamma", "Digamma", "Erfinv", "Ndtri",
              "Xlogy", "Xlog1py", "Xdivy", "Igamma", "Igammac", "IgammaGradA", "Zeta", "Polygamma",
              "TruncateDiv", "TruncateMod"}

# -- unary, float16 included ----------------------------------------------------------------
for _name in ("Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Ceil",
              "Lgamma", "Digamma", "Erfc", "BesselI0", "BesselI0e", "BesselI1", "BesselI1e"):
    def_unary(_name, FLOATS, widens_float32=True, non_finite=_name in NON_FINITE)
# -- unary, float32 and float64 only --------------------------------------------------------
for _name in ("Erfinv", "Ndtri", "Rint"):
    def_unary(_name, F32_64, widens_float32=True, non_finite=_name in NON_FINITE)

# -- binary ---------------------------------------------------------------------------------
for _name in ("Atan2", "Xlogy", "Xlog1py", "Xdivy", "DivNoNan", "MulNoNan"):
    def_binary(_name, FLOATS, widens_float32=True, non_finite=_name in NON_FINITE)
for _name in ("Igamma", "Igammac", "IgammaGradA", "Zeta", "Polygamma", "NextAfter"):
    def_binary(_name, F32_64, widens_float32=True, non_finite=_name in NON_FINITE)
def_binary("SquaredDifference", FLOATS + SIGNED, commutative=True)
def_binary("TruncateDiv", FLOATS + (D.int8, D.int16, D.int32, D.int64, D.uint8), non_finite=True)
def_binary("TruncateMod", F32_64 + SIGNED, non_finite=True)


def _betainc(avals):
    """TF's Betainc does not broadcast: a, b and x have one shape, or are scalars."""
    dt = check_same_dtype(avals)
    check_dtype(avals[0], F32_64)
    shaped = [(name, tuple(a.shape)) for name, a in zip("abx", avals) if len(a.shape)]
    for name, shape in shaped[1:]:
        first = shaped[0][1]
        if len(shape) != len(first) or any(p is not None and q is not None and p != q
                                           for p, q in zip(shape, first)):
            raise InferError(f"Shapes of a, b, and x must match unless one is a scalar: "
                             f"{shaped[0][0]} has shape {first} but {name} has {shape}")
    return AVal(broadcast_shapes(*[a.shape for a in avals]), dt)


defop("Betainc", _betainc, arity=3, same_dtype=(0, 1, 2), kind="elementwise",
      widens_float32=True, same_shape=True, non_finite=True)
