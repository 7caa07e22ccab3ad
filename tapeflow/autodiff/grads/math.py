"""Gradient rules of the elementwise math ops.

Each rule mirrors TensorFlow's ``math_grad.py`` op for op: the tensors it
touches decide ``None`` versus zeros at second order (``Sign`` gives zeros,
``Floor`` gives None; ``Maximum``'s gradient is a ``where`` on a comparison, so
its second derivative is None). TF's fused helper kernels (``SqrtGrad``,
``TanhGrad``, ...) are written out with the same arithmetic. ``op.wants[i]``
False plays the part of TF's ``skip_input_indices``.
"""
import numpy as np

from ...ops import creation
from ...ops import math as m
from ...ops.indexed_slices import IndexedSlices
from ...runtime.registry import gradient, not_differentiable, slices_gradient

not_differentiable("StopGradient", "FloorDiv", "Floor", "Round",
                   "Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual",
                   "LogicalAnd", "LogicalOr", "LogicalNot", "IsFinite", "IsNan", "IsInf")


def _c(value, like):
    return m.constant_like(value, like)


# -- identity-like -------------------------------------------------------------------

@gradient("Identity")
def _identity(op, g):
    return [g]


@slices_gradient("Identity")
def _identity_slices(op, g):
    """An IndexedSlices passes on as it is (a variable's read is an Identity here)."""
    return [g]


@gradient("CheckTripCount")
def _check_trip_count(op, g):
    """The checked value passes unchanged (the check ran in the forward); the count is an int."""
    return [g, None]


@gradient("Cast")
def _cast(op, g):
    src = op.in_avals[0].dtype
    if src.is_floating and op.out_avals[0].dtype.is_floating:
        return [m.cast(g, src)]
    return [None]


@slices_gradient("Cast")
def _cast_slices(op, g):
    """TensorFlow's ``_CastGrad`` of an IndexedSlices: its values cast back."""
    src = op.in_avals[0].dtype
    if src.is_floating and op.out_avals[0].dtype.is_floating:
        return [IndexedSlices(m.cast(g.values, src), g.indices, g.dense_shape)]
    return [None]


# -- arithmetic ----------------------------------------------------------------------

@gradient("Add")
def _add(op, g):
    return [g, g]


@gradient("AddN")
def _add_n(op, g):
    return [g] * len(op.in_avals)


@gradient("Sub")
def _sub(op, g):
    return [g, m.negative(g) if op.wants[1] else None]


@gradient("Mul", inputs=(0, 1))
def _mul(op, g):
    x, y = op.inputs
    return [m.multiply(g, y) if op.wants[0] else None,
            m.multiply(x, g) if op.wants[1] else None]


@gradient("RealDiv", inputs=(0, 1))
def _realdiv(op, g):
    x, y = op.inputs
    gx = m.realdiv(g, y) if op.wants[0] else None
    gy = m.multiply(g, m.realdiv(m.realdiv(m.negative(x), y), y)) if op.wants[1] else None
    return [gx, gy]


@gradient("FloorMod", inputs=(0, 1))
def _floormod(op, g):
    x, y = op.inputs
    return [g, m.multiply(g, m.negative(m.floordiv(x, y)))]


@gradient("Pow", inputs=(0, 1), outputs=(0,))
def _pow(op, g):
    """d/dx = y x^(y-1); d/dy = z log(x), with log(x) taken as 0 where x <= 0 (TF's mask)."""
    x, y = op.inputs
    gx = m.multiply(m.multiply(g, y), m.pow(x, m.subtract(y, 1))) if op.wants[0] else None
    gy = None
    if op.wants[1]:
        mask = m.greater(x, 0)
        safe_x = m.where(mask, x, creation.ones_like(x))
        log_x = m.where(mask, m.log(safe_x), creation.zeros_like(x))
        gy = m.multiply(m.multiply(g, op.outputs[0]), log_x)
    return [gx, gy]


def _max_min(op, g, selector):
    """Ties send the gradient to x: the mask is ``x >= y`` (Maximum) or ``x <= y`` (Minimum)."""
    x, y = op.inputs
    zeros = creation.zeros_like(g)
    xmask = selector(x, y)
    return [m.where(xmask, g, zeros) if op.wants[0] else None,
            m.where(xmask, zeros, g) if op.wants[1] else None]


@gradient("Maximum", inputs=(0, 1))
def _maximum(op, g):
    return _max_min(op, g, m.greater_equal)


@gradient("Minimum", inputs=(0, 1))
def _minimum(op, g):
    return _max_min(op, g, m.less_equal)


@gradient("SelectV2", inputs=(0,))
def _select(op, g):
    c = op.inputs[0]
    zeros = _c(0, g)
    return [None, m.where(c, g, zeros) if op.wants[1] else None,
            m.where(c, zeros, g) if op.wants[2] else None]


# -- unary ---------------------------------------------------------------------------

@gradient("Neg")
def _neg(op, g):
    return [m.negative(g)]


@gradient("Square", inputs=(0,))
def _square(op, g):
    x = op.inputs[0]
    return [m.multiply(g, m.multiply(x, _c(2.0, x)))]


@gradient("Abs", inputs=(0,))
def _abs(op, g):
    return [m.multiply(g, m.sign(op.inputs[0]))]


@gradient("Sign")
def _sign(op, g):
    """Zeros, not None: so d2|x|/dx2 is zeros in TF."""
    return [creation.zeros_like(g)]


@gradient("Sqrt", outputs=(0,))
def _sqrt(op, g):
    return [m.sqrt_grad(op.outputs[0], g)]


@gradient("Rsqrt", outputs=(0,))
def _rsqrt(op, g):
    return [m.rsqrt_grad(op.outputs[0], g)]


@gradient("Reciprocal", outputs=(0,))
def _reciprocal(op, g):
    return [m.reciprocal_grad(op.outputs[0], g)]


@gradient("SqrtGrad", inputs=(0,), outputs=(0,))
def _sqrt_grad(op, g):
    """dx = 0.5 dy / y, so d/dy = -dx / y and d/d(dy) = 0.5 / y (TF's _SqrtGradGrad)."""
    ga = m.realdiv(g, op.inputs[0])
    return [m.multiply(m.negative(ga), op.outputs[0]), m.multiply(_c(0.5, ga), ga)]


@gradient("RsqrtGrad", inputs=(0, 1))
def _rsqrt_grad(op, g):
    """dx = -0.5 dy y^3 (TF's _RsqrtGradGrad)."""
    a, b = op.inputs
    grad_a = m.multiply(m.multiply(m.multiply(_c(-1.5, g), g), b), m.square(a))
    return [grad_a, m.rsqrt_grad(a, g)]


@gradient("ReciprocalGrad", inputs=(0, 1))
def _reciprocal_grad(op, g):
    """dx = -dy y^2 (TF's _ReciprocalGradGrad)."""
    a, b = op.inputs
    return [m.multiply(m.multiply(m.multiply(g, _c(-2.0, g)), b), a), m.reciprocal_grad(a, g)]


@gradient("Exp", outputs=(0,))
def _exp(op, g):
    return [m.multiply(g, op.outputs[0])]


@gradient("Expm1", inputs=(0,))
def _expm1(op, g):
    return [m.multiply(g, m.exp(op.inputs[0]))]


@gradient("Log", inputs=(0,))
def _log(op, g):
    return [m.multiply(g, m.reciprocal(op.inputs[0]))]


@gradient("Log1p", inputs=(0,))
def _log1p(op, g):
    x = op.inputs[0]
    return [m.multiply(g, m.reciprocal(m.add(_c(1, x), x)))]


@gradient("Sin", inputs=(0,))
def _sin(op, g):
    return [m.multiply(g, m.cos(op.inputs[0]))]


@gradient("Cos", inputs=(0,))
def _cos(op, g):
    return [m.multiply(m.negative(g), m.sin(op.inputs[0]))]


@gradient("Tan", inputs=(0,))
def _tan(op, g):
    secx = m.reciprocal(m.cos(op.inputs[0]))
    return [m.multiply(m.square(secx), g)]


@gradient("Tanh", outputs=(0,))
def _tanh(op, g):
    y = op.outputs[0]
    return [m.multiply(g, m.subtract(_c(1, y), m.multiply(y, y)))]


@gradient("Sigmoid", outputs=(0,))
def _sigmoid(op, g):
    y = op.outputs[0]
    return [m.multiply(m.multiply(g, y), m.subtract(_c(1, y), y))]


@gradient("Erf", inputs=(0,))
def _erf(op, g):
    x = op.inputs[0]
    return [m.multiply(m.multiply(g, _c(2 / np.sqrt(np.pi), g)), m.exp(m.negative(m.square(x))))]
