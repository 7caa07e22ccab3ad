"""Elementwise ops as one-element expressions (runtime/kernels/math.py and nn.py, per element).

Each function gets the argument expressions ``x``, the input avals ``ins``, the output aval
``out`` and the node's attributes, and returns an expression. Literals are typed in the
value's dtype (``np.float32(0.5)``): an untyped ``0.5`` would turn float32 math into float64
and round differently from NumPy. float32 transcendental functions call ``fm`` (fast,
vectorizable, error bounds in fastmath.py); float64 ones call libm through NumPy.
"""
from ...ir import dtypes as D
from ..emitter import lit, np_type
from .registry import scalar_op

SELU_SCALE = 1.0507009873554804934193349852946
SELU_SCALE_ALPHA = 1.7580993408473768599402175208123
TRANSCENDENTAL = 8


def _f32(aval):
    return aval.dtype == D.float32


def _is_int(aval):
    return aval.dtype.is_integer


def _c(value, aval):
    return lit(value, aval.dtype)


# -- identity-like and casts -----------------------------------------------------------

@scalar_op("Identity", "StopGradient", "BroadcastTo")
def _identity(x, ins, out, **attrs):
    return x[0]


@scalar_op("Cast")
def _cast(x, ins, out, dtype):
    src, dst = ins[0].dtype, D.as_dtype(dtype)
    if src == dst:
        return x[0]
    if dst.is_bool:
        return f"({x[0]} != {lit(0, src)})"
    if src.is_bool:
        return f"({lit(1, dst)} if {x[0]} else {lit(0, dst)})"
    if src.is_floating and dst.is_integer and dst.size < 4:
        return f"{np_type(dst)}(np.int32({x[0]}))"   # NumPy goes through a C int, then wraps
    return f"{np_type(dst)}({x[0]})"


# -- arithmetic ------------------------------------------------------------------------

def _binop(sym):
    return lambda x, ins, out, **a: f"({x[0]} {sym} {x[1]})"


scalar_op("Add")(_binop("+"))
scalar_op("Sub")(_binop("-"))
scalar_op("Mul")(_binop("*"))
scalar_op("RealDiv", cost=4)(_binop("/"))


@scalar_op("AddN")
def _add_n(x, ins, out):
    return "(" + " + ".join(x) + ")"


@scalar_op("FloorDiv", cost=4, may_raise=True)
def _floordiv(x, ins, out):
    if _is_int(ins[0]):
        return f"rt.floordiv_int({x[0]}, {x[1]})"
    return f"np.floor({x[0]} / {x[1]})"


@scalar_op("FloorMod", cost=8, may_raise=True)
def _floormod(x, ins, out):
    if _is_int(ins[0]):
        return f"rt.floormod_int({x[0]}, {x[1]})"
    return f"rt.floormod_float({x[0]}, {x[1]})"


@scalar_op("Pow", cost=12, may_raise=True)
def _pow(x, ins, out):
    if _is_int(ins[0]):
        return f"rt.power_int({x[0]}, {x[1]})"
    # a literal exponent of 2, 1 or -1 (gradients of x**2 make x**1): what pow returns
    # for it, without the libm call that keeps a loop from vectorizing
    if x[1] == _c(2, ins[1]):
        return f"({x[0]} * {x[0]})"
    if x[1] == _c(1, ins[1]):
        return x[0]
    if x[1] == _c(-1, ins[1]):
        return f"({_c(1, out)} / {x[0]})"
    return f"np.power({x[0]}, {x[1]})"


scalar_op("Maximum")(lambda x, ins, out: f"rt.maximum({x[0]}, {x[1]})")
scalar_op("Minimum")(lambda x, ins, out: f"rt.minimum({x[0]}, {x[1]})")
scalar_op("Neg")(lambda x, ins, out: f"(-{x[0]})")
scalar_op("Square")(lambda x, ins, out: f"({x[0]} * {x[0]})")
scalar_op("Sign")(lambda x, ins, out: f"rt.sign({x[0]})")


@scalar_op("Abs")
def _abs(x, ins, out):
    return x[0] if ins[0].dtype.name.startswith("uint") else f"abs({x[0]})"


# -- transcendental and rounding -------------------------------------------------------

def _libm(fn, fast=None):
    def template(x, ins, out):
        if fast is not None and _f32(ins[0]):
            return f"fm.{fast}({x[0]})"
        return f"{fn}({x[0]})"
    return template


scalar_op("Sqrt", cost=4)(_libm("np.sqrt"))
scalar_op("Exp", cost=TRANSCENDENTAL)(_libm("np.exp", "exp_f32"))
scalar_op("Log", cost=TRANSCENDENTAL)(_libm("np.log", "log_f32"))
scalar_op("Log1p", cost=TRANSCENDENTAL)(_libm("np.log1p", "log1p_f32"))
scalar_op("Tanh", cost=TRANSCENDENTAL)(_libm("np.tanh", "tanh_f32"))
scalar_op("Sigmoid", cost=TRANSCENDENTAL)(_libm("fm.sigmoid_f64", "sigmoid_f32"))
scalar_op("Softplus", cost=2 * TRANSCENDENTAL)(_libm("fm.softplus_f64", "softplus_f32"))
for _name, _fn in (("Expm1", "np.expm1"), ("Sin", "np.sin"), ("Cos", "np.cos"), ("Tan", "np.tan"),
                   ("Erf", "math.erf")):
    scalar_op(_name, cost=3 * TRANSCENDENTAL)(_libm(_fn))
scalar_op("Floor")(_libm("np.floor"))
scalar_op("Round")(_libm("np.rint"))   # half to even, like np.round and TensorFlow
scalar_op("Rsqrt", cost=5)(lambda x, ins, out: f"({_c(1, ins[0])} / np.sqrt({x[0]}))")
scalar_op("Reciprocal", cost=4)(lambda x, ins, out: f"({_c(1, ins[0])} / {x[0]})")


def _exp(expr, aval):
    return f"fm.exp_f32({expr})" if _f32(aval) else f"np.exp({expr})"


def _zero_where_dy_is_zero(body):
    """TF's sqrt/rsqrt/reciprocal gradient kernels: 0 wherever dy is 0, even if y is 0 or inf."""
    def template(x, ins, out):
        y, dy = x
        return f"({_c(0, out)} if {dy} == {_c(0, out)} else {body(y, dy, out)})"
    return template


scalar_op("SqrtGrad", cost=4)(_zero_where_dy_is_zero(lambda y, dy, a: f"(({_c(0.5, a)} * {dy}) / {y})"))
scalar_op("RsqrtGrad")(_zero_where_dy_is_zero(
    lambda y, dy, a: f"({_c(-0.5, a)} * ({dy} * {y}) * ({y} * {y}))"))
scalar_op("ReciprocalGrad")(_zero_where_dy_is_zero(lambda y, dy, a: f"((-{y}) * {y} * {dy})"))

# -- comparisons and logic -------------------------------------------------------------
for _name, _sym in (("Less", "<"), ("LessEqual", "<="), ("Greater", ">"), ("GreaterEqual", ">="),
                    ("Equal", "=="), ("NotEqual", "!="), ("LogicalAnd", "&"), ("LogicalOr", "|")):
    scalar_op(_name)(_binop(_sym))
scalar_op("LogicalNot")(lambda x, ins, out: f"(not {x[0]})")
scalar_op("IsFinite")(lambda x, ins, out: f"np.isfinite({x[0]})")
scalar_op("IsNan")(lambda x, ins, out: f"np.isnan({x[0]})")
scalar_op("IsInf")(lambda x, ins, out: f"np.isinf({x[0]})")
scalar_op("SelectV2")(lambda x, ins, out: f"({x[1]} if {x[0]} else {x[2]})")

# -- activations (runtime/kernels/nn.py) -----------------------------------------------


def _mask(cond, aval):
    return f"({_c(1, aval)} if {cond} else {_c(0, aval)})"


scalar_op("Relu")(lambda x, ins, out: f"rt.maximum({x[0]}, {_c(0, out)})")
scalar_op("Relu6")(lambda x, ins, out: f"rt.minimum(rt.maximum({x[0]}, {_c(0, out)}), {_c(6, out)})")
scalar_op("ReluGrad")(lambda x, ins, out: f"({x[0]} * {_mask(f'{x[1]} > {_c(0, out)}', out)})")
scalar_op("Relu6Grad")(lambda x, ins, out: f"({x[0]} * "
                       f"{_mask(f'({x[1]} > {_c(0, out)}) & ({x[1]} < {_c(6, out)})', out)})")


@scalar_op("Elu", cost=TRANSCENDENTAL)
def _elu(x, ins, out):
    return f"(({_exp(x[0], out)} - {_c(1, out)}) if {x[0]} < {_c(0, out)} else {x[0]})"


@scalar_op("EluGrad")
def _elu_grad(x, ins, out):
    g, y = x
    return f"((({y} + {_c(1, out)}) * {g}) if {y} < {_c(0, out)} else {g})"


@scalar_op("Selu", cost=TRANSCENDENTAL)
def _selu(x, ins, out):
    neg = f"({_c(SELU_SCALE_ALPHA, out)} * ({_exp(x[0], out)} - {_c(1, out)}))"
    return f"({neg} if {x[0]} < {_c(0, out)} else ({_c(SELU_SCALE, out)} * {x[0]}))"


@scalar_op("SeluGrad")
def _selu_grad(x, ins, out):
    g, y = x
    return (f"(({g} * ({y} + {_c(SELU_SCALE_ALPHA, out)})) if {y} < {_c(0, out)} "
            f"else ({g} * {_c(SELU_SCALE, out)}))")


@scalar_op("LeakyRelu")
def _leaky_relu(x, ins, out, alpha=0.2):
    return f"({x[0]} if {x[0]} > {_c(0, out)} else ({x[0]} * {_c(alpha, out)}))"


@scalar_op("LeakyReluGrad")
def _leaky_relu_grad(x, ins, out, alpha=0.2):
    g, f = x
    return f"({g} if {f} > {_c(0, out)} else ({g} * {_c(alpha, out)}))"


scalar_op("Softsign", cost=4)(lambda x, ins, out: f"({x[0]} / (abs({x[0]}) + {_c(1, out)}))")
