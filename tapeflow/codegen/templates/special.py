"""Special functions as one-element expressions (runtime/kernels/special.py, per element).

libm covers the inverse trigonometric and hyperbolic functions, ``lgamma`` and ``erfc``; the
rest call the float64 helpers of codegen/special_math.py (through ``rt``), which follow the
kernels' values at the special points.
"""
from ..emitter import lit
from .elementwise import TRANSCENDENTAL
from .registry import scalar_op


def _c(value, aval):
    return lit(value, aval.dtype)


def _call(fn):
    return lambda x, ins, out: f"{fn}({', '.join(x)})"


for _name, _fn in (("Asin", "np.arcsin"), ("Acos", "np.arccos"), ("Atan", "np.arctan"),
                   ("Sinh", "np.sinh"), ("Cosh", "np.cosh"), ("Asinh", "np.arcsinh"),
                   ("Acosh", "np.arccosh"), ("Atanh", "np.arctanh"), ("Atan2", "np.arctan2"),
                   ("Lgamma", "math.lgamma"), ("Erfc", "math.erfc"),
                   ("NextAfter", "np.nextafter")):
    scalar_op(_name, cost=3 * TRANSCENDENTAL)(_call(_fn))
scalar_op("Ceil")(_call("np.ceil"))
scalar_op("Rint")(_call("np.rint"))
for _name, _fn in (("Digamma", "rt.digamma"), ("Erfinv", "rt.erfinv"), ("Ndtri", "rt.ndtri"),
                   ("BesselI0", "rt.bessel_i0"), ("BesselI0e", "rt.bessel_i0e"),
                   ("BesselI1", "rt.bessel_i1"), ("BesselI1e", "rt.bessel_i1e"),
                   ("Zeta", "rt.zeta"), ("Polygamma", "rt.polygamma"), ("Igamma", "rt.igamma"),
                   ("Igammac", "rt.igammac"), ("Betainc", "rt.betainc")):
    scalar_op(_name, cost=10 * TRANSCENDENTAL)(_call(_fn))
scalar_op("IgammaGradA", cost=100 * TRANSCENDENTAL)(_call("rt.igamma_grad_a"))


def _zero_where(cond_arg, body):
    """0 wherever argument ``cond_arg`` is 0, else ``body(x, y)``."""
    def template(x, ins, out):
        zero = _c(0, out)
        return f"({zero} if {x[cond_arg]} == {zero} else {body(x[0], x[1])})"
    return template


scalar_op("Xlogy", cost=TRANSCENDENTAL)(_zero_where(0, lambda x, y: f"({x} * np.log({y}))"))
scalar_op("Xlog1py", cost=TRANSCENDENTAL)(_zero_where(0, lambda x, y: f"({x} * np.log1p({y}))"))
scalar_op("Xdivy", cost=4)(_zero_where(0, lambda x, y: f"({x} / {y})"))
scalar_op("DivNoNan", cost=4)(_zero_where(1, lambda x, y: f"({x} / {y})"))
scalar_op("MulNoNan")(_zero_where(1, lambda x, y: f"({x} * {y})"))
scalar_op("SquaredDifference")(lambda x, ins, out: f"(({x[0]} - {x[1]}) * ({x[0]} - {x[1]}))")


@scalar_op("TruncateDiv", cost=4, may_raise=True)
def _truncatediv(x, ins, out):
    if ins[0].dtype.is_integer:
        return f"rt.truncatediv_int({x[0]}, {x[1]})"
    return f"np.trunc({x[0]} / {x[1]})"


@scalar_op("TruncateMod", cost=8, may_raise=True)
def _truncatemod(x, ins, out):
    if ins[0].dtype.is_integer:
        return f"rt.truncatemod_int({x[0]}, {x[1]})"
    return f"np.fmod({x[0]}, {x[1]})"
