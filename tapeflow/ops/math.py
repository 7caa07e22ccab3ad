"""Elementwise math: ``tapeflow.math.*`` (and the top-level aliases).

Each function keeps TensorFlow's signature and argument conventions; the
composites (``truediv``, ...) are built
from the same primitive ops TensorFlow uses, so their gradients, and which of
them are ``None``, come out the same.
"""
from __future__ import annotations

import numpy as np

from ..errors import InferError
from ..ir import dtypes as D
from ..ir.shapes import broadcast_shapes
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor, Variable, convert_to_tensor, wrap


def constant_like(value, x):
    """A scalar constant with the dtype of ``x`` (for use inside gradient rules)."""
    return wrap(np.asarray(value, dtype=x.dtype.np))


def _tensor(x, dtype_hint=None):
    """``x`` as a tensor (symbolic tensors of the tracer pass through; Variables are read)."""
    if isinstance(x, Tensor) or (hasattr(x, "aval") and not isinstance(x, Variable)):
        return x
    return convert_to_tensor(x, dtype_hint=dtype_hint)


# -- identity-like -------------------------------------------------------------------

def identity(input, name=None) -> Tensor:
    """A tensor with the same value as ``input`` (gradients pass through unchanged).

    >>> tf.identity(tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
    """
    if hasattr(input, "_with_values"):    # an IndexedSlices: TF's dispatch maps its values
        return input._with_values(identity)
    return apply("Identity", [input])


def stop_gradient(input, name=None) -> Tensor:
    """The value of ``input``, but no gradient flows through it.

    Args:
      input: a tensor (or a value convertible to one).

    Returns:
      A tensor equal to ``input`` that tapes treat as a constant.

    >>> x = tf.constant(3.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * tf.stop_gradient(x)
    >>> tape.gradient(y, x)
    <tf.Tensor: shape=(), dtype=float32, numpy=3.0>
    """
    if hasattr(input, "_with_values"):    # an IndexedSlices: TF's dispatch maps its values
        return input._with_values(stop_gradient)
    return apply("StopGradient", [input])


def cast(x, dtype, name=None) -> Tensor | Variable:
    """``x`` converted to ``dtype``.

    TF returns a Tensor or Variable of the right dtype as is (no op, nothing recorded).

    >>> tf.cast(tf.constant([1.7, -2.5]), tf.int32)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([ 1, -2], dtype=int32)>
    """
    dtype = D.as_dtype(dtype)
    if hasattr(x, "_with_values"):    # an IndexedSlices: TF's dispatch maps its values
        return x._with_values(lambda v: cast(v, dtype))
    if isinstance(x, (Tensor, Variable)) and x.dtype == dtype:
        return x
    x = _tensor(x)
    if x.dtype == dtype:
        return x
    return apply("Cast", [x], {"dtype": dtype})


# -- arithmetic ----------------------------------------------------------------------

def add(x, y, name=None) -> Tensor:
    """``x + y``, elementwise, with broadcasting.

    >>> tf.add(tf.constant([1.0, 2.0]), 10.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([11., 12.], dtype=float32)>
    """
    return apply("Add", [x, y])


def subtract(x, y, name=None) -> Tensor:
    """``x - y``, elementwise, with broadcasting.

    >>> tf.subtract(tf.constant([5.0, 6.0]), 1.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([4., 5.], dtype=float32)>
    """
    return apply("Sub", [x, y])


def multiply(x, y, name=None) -> Tensor:
    """``x * y``, elementwise, with broadcasting.

    >>> tf.multiply(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 8.], dtype=float32)>
    """
    return apply("Mul", [x, y])


def scalar_mul(scalar, x, name=None) -> Tensor:
    """``scalar * x`` for a 0-D ``scalar`` (a ValueError for any other shape).

    >>> tf.math.scalar_mul(2.0, tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 4.], dtype=float32)>
    """
    if hasattr(x, "_with_values"):    # an IndexedSlices: TensorFlow scales its values
        return x._with_values(lambda v: scalar_mul(scalar, v))
    scalar = convert_to_tensor(scalar, dtype=x.dtype)
    if scalar.ndim != 0:
        raise ValueError(f"The input scalar must be a 0-D value. Received shape {scalar.shape}.")
    return apply("Mul", [scalar, x])


def realdiv(x, y, name=None) -> Tensor:
    """``x / y`` for floating-point tensors of one dtype, elementwise.

    >>> tf.realdiv(tf.constant([1.0, 3.0]), tf.constant([2.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.5, 1.5], dtype=float32)>
    """
    return apply("RealDiv", [x, y])


# TF's truediv casts small ints to float32 and wide ints to float64 before dividing.
_TRUEDIV_FLOAT = {D.int8: D.float32, D.int16: D.float32, D.uint8: D.float32, D.uint16: D.float32,
                  D.uint32: D.float64, D.uint64: D.float64,
                  D.int32: D.float64, D.int64: D.float64}


def truediv(x, y, name=None) -> Tensor:
    """``x / y`` in floating point, elementwise.

    ``x / y`` in floating point; ``x`` and ``y`` must share a dtype (TypeError otherwise).

    A Python ``x`` takes ``y``'s dtype when it can: TF converts it that way
    before calling truediv from ``y.__rtruediv__``, which lands here too.

    >>> tf.truediv(tf.constant([1, 3]), tf.constant([2, 2]))
    <tf.Tensor: shape=(2,), dtype=float64, numpy=array([0.5, 1.5])>
    """
    x = _tensor(x, dtype_hint=getattr(y, "dtype", None))
    y = _tensor(y, dtype_hint=x.dtype)
    if x.dtype != y.dtype:
        raise TypeError(f"`x` and `y` must have the same dtype, got {x.dtype!r} != {y.dtype!r}.")
    if x.dtype.is_bool:
        raise TypeError(f"Invalid dtype {x.dtype!r} in __truediv__.")
    target = _TRUEDIV_FLOAT.get(x.dtype)
    if target is not None:
        x, y = cast(x, target), cast(y, target)
    return apply("RealDiv", [x, y])


def divide(x, y, name=None) -> Tensor:
    """``x / y``, elementwise, with broadcasting.

    TF: converts ``x`` with ``y``'s dtype if ``x`` is not a tensor, then ``x / y``.

    >>> tf.divide(tf.constant([3.0, 4.0]), 2.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1.5, 2. ], dtype=float32)>
    """
    return truediv(x, y)


def floordiv(x, y, name=None) -> Tensor:
    """``x // y``, elementwise: division rounded toward negative infinity.

    >>> tf.math.floordiv(tf.constant([7, -7]), 2)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([ 3, -4], dtype=int32)>
    """
    return apply("FloorDiv", [x, y])


def floormod(x, y, name=None) -> Tensor:
    """``x % y``, elementwise, with the sign of ``y`` (Python's ``%``).

    >>> tf.math.floormod(tf.constant([7, -7]), 3)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>
    """
    return apply("FloorMod", [x, y])


mod = floormod


def pow(x, y, name=None) -> Tensor:
    """``x ** y``, elementwise, with broadcasting.

    >>> tf.pow(tf.constant([2.0, 3.0]), 2.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([4., 9.], dtype=float32)>
    """
    return apply("Pow", [x, y])


def negative(x, name=None) -> Tensor:
    """``-x``, elementwise.

    >>> tf.negative(tf.constant([1.0, -2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-1.,  2.], dtype=float32)>
    """
    return apply("Neg", [x])


def add_n(inputs, name=None) -> Tensor:
    """The elementwise sum of a list of tensors.

    Sum of same-shaped tensors; a single input is returned as is, like TF.

    >>> tf.add_n([tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([4., 6.], dtype=float32)>
    """
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError("Inputs must be an iterable of at least one Tensor/IndexedSlices with the "
                         "same dtype and shape.")
    tensors = [_tensor(t) for t in inputs]
    if len(tensors) == 1:
        return tensors[0]
    return apply("AddN", tensors)


# -- unary ---------------------------------------------------------------------------

def _unary(op_name, fn_name, doc=None):
    def fn(x, name=None) -> Tensor:
        return apply(op_name, [x])
    fn.__name__ = fn.__qualname__ = fn_name
    fn.__doc__ = doc
    return fn


square = _unary("Square", "square", """``x * x``, elementwise.

    >>> tf.square(tf.constant([2.0, -3.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([4., 9.], dtype=float32)>
    """)
sqrt = _unary("Sqrt", "sqrt", """Square root of ``x``, elementwise.

    >>> tf.sqrt(tf.constant([4.0, 9.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 3.], dtype=float32)>
    """)
rsqrt = _unary("Rsqrt", "rsqrt", """``1 / sqrt(x)``, elementwise.

    >>> tf.math.rsqrt(tf.constant([4.0, 16.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.5 , 0.25], dtype=float32)>
    """)
reciprocal = _unary("Reciprocal", "reciprocal", """``1 / x``, elementwise.

    >>> tf.math.reciprocal(tf.constant([2.0, 4.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.5 , 0.25], dtype=float32)>
    """)
exp = _unary("Exp", "exp", """``e ** x``, elementwise.

    >>> tf.exp(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1.      , 2.718282], dtype=float32)>
    """)
log = _unary("Log", "log", """Natural logarithm of ``x``, elementwise.

    >>> tf.math.log(tf.constant([1.0, np.e]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 1.], dtype=float32)>
    """)
log1p = _unary("Log1p", "log1p", """``log(1 + x)``, elementwise, accurate near zero.

    >>> tf.math.log1p(tf.constant([0.0, 1e-7]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.0000000e+00, 9.9999994e-08], dtype=float32)>
    """)
expm1 = _unary("Expm1", "expm1", """``exp(x) - 1``, elementwise, accurate near zero.

    >>> tf.math.expm1(tf.constant([0.0, 1e-7]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.0000000e+00, 1.0000001e-07], dtype=float32)>
    """)
sin = _unary("Sin", "sin", """Sine of ``x`` (radians), elementwise.

    >>> tf.sin(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.      , 0.841471], dtype=float32)>
    """)
cos = _unary("Cos", "cos", """Cosine of ``x`` (radians), elementwise.

    >>> tf.cos(tf.constant([0.0, 3.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 1.       , -0.9899925], dtype=float32)>
    """)
tan = _unary("Tan", "tan", """Tangent of ``x`` (radians), elementwise.

    >>> tf.tan(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.       , 1.5574077], dtype=float32)>
    """)
tanh = _unary("Tanh", "tanh", """Hyperbolic tangent of ``x``, elementwise.

    >>> tf.tanh(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.       , 0.7615942], dtype=float32)>
    """)
sigmoid = _unary("Sigmoid", "sigmoid", """``1 / (1 + exp(-x))``, elementwise.

    >>> tf.sigmoid(tf.constant([0.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.5     , 0.880797], dtype=float32)>
    """)
abs = _unary("Abs", "abs", """Absolute value of ``x``, elementwise.

    >>> tf.abs(tf.constant([-1.5, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1.5, 2. ], dtype=float32)>
    """)
sign = _unary("Sign", "sign", """-1, 0 or 1; its gradient is zeros (not None), as in TF.

    >>> tf.sign(tf.constant([-2.0, 0.0, 3.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([-1.,  0.,  1.], dtype=float32)>
    """)
floor = _unary("Floor", "floor", """Rounds down; its gradient is None, as in TF.

    >>> tf.floor(tf.constant([1.5, -1.5]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 1., -2.], dtype=float32)>
    """)
erf = _unary("Erf", "erf", """Gauss error function of ``x``, elementwise.

    >>> tf.math.erf(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.       , 0.8427008], dtype=float32)>
    """)


def round(x, name=None) -> Tensor:
    """``x`` rounded to the nearest integer, elementwise (ties to even).

    Half to even, as TF; integer tensors are returned unchanged (TF does not run an op).

    >>> tf.round(tf.constant([0.5, 1.5, -2.7]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([ 0.,  2., -3.], dtype=float32)>
    """
    x = _tensor(x)
    if x.dtype.is_integer:
        return x
    return apply("Round", [x])


def maximum(x, y, name=None) -> Tensor:
    """The larger of ``x`` and ``y``, elementwise, with broadcasting.

    >>> tf.maximum(tf.constant([1.0, 5.0]), 3.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 5.], dtype=float32)>
    """
    return apply("Maximum", [x, y])


def minimum(x, y, name=None) -> Tensor:
    """The smaller of ``x`` and ``y``, elementwise, with broadcasting.

    >>> tf.minimum(tf.constant([1.0, 5.0]), 3.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 3.], dtype=float32)>
    """
    return apply("Minimum", [x, y])


def where(condition, x=None, y=None, name=None) -> Tensor:
    """Elementwise select with three-way broadcasting (TF2's ``where``, op SelectV2).

    >>> tf.where(tf.constant([True, False]), tf.constant([1.0, 2.0]), tf.constant([10.0, 20.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 1., 20.], dtype=float32)>
    """
    if x is None and y is None:
        raise NotImplementedError("tapeflow.where(condition) without x and y (indices of true "
                                  "elements) is not supported; pass x and y")
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return apply("SelectV2", [condition, x, y])


# TF's fused gradient kernels (tf.raw_ops), used by the gradient rules of Sqrt, Rsqrt, Reciprocal.

def sqrt_grad(y, dy):
    return apply("SqrtGrad", [y, dy])


def rsqrt_grad(y, dy):
    return apply("RsqrtGrad", [y, dy])


def reciprocal_grad(y, dy):
    return apply("ReciprocalGrad", [y, dy])


# -- comparisons and logic -----------------------------------------------------------

def less(x, y, name=None) -> Tensor:
    """``x < y``, elementwise, with broadcasting.

    >>> tf.less(tf.constant([1.0, 3.0]), 2.0)
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>
    """
    return apply("Less", [x, y])


def less_equal(x, y, name=None) -> Tensor:
    """``x <= y``, elementwise, with broadcasting.

    >>> tf.less_equal(tf.constant([1.0, 2.0]), 2.0)
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True,  True])>
    """
    return apply("LessEqual", [x, y])


def greater(x, y, name=None) -> Tensor:
    """``x > y``, elementwise, with broadcasting.

    >>> tf.greater(tf.constant([1.0, 3.0]), 2.0)
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>
    """
    return apply("Greater", [x, y])


def greater_equal(x, y, name=None) -> Tensor:
    """``x >= y``, elementwise, with broadcasting.

    >>> tf.greater_equal(tf.constant([1.0, 2.0]), 2.0)
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>
    """
    return apply("GreaterEqual", [x, y])


def _broadcastable(x, y):
    shapes = [tuple(v.shape) if hasattr(v, "shape") else np.shape(v) for v in (x, y)]
    try:
        broadcast_shapes(*shapes)
    except InferError:
        return False
    return True


def equal(x, y, name=None, incompatible_shape_error=True) -> Tensor:
    """``x == y``, elementwise, with broadcasting.

    With ``incompatible_shape_error=False`` (``Tensor.__eq__``), shapes that do not broadcast
    give a scalar False instead of an error.

    >>> tf.equal(tf.constant([1, 2]), tf.constant([1, 3]))
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>
    """
    if not incompatible_shape_error and not _broadcastable(x, y):
        return wrap(np.asarray(False))
    return apply("Equal", [x, y])


def not_equal(x, y, name=None, incompatible_shape_error=True) -> Tensor:
    """``x != y``, elementwise, with broadcasting.

    >>> tf.not_equal(tf.constant([1, 2]), 2)
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>
    """
    if not incompatible_shape_error and not _broadcastable(x, y):
        return wrap(np.asarray(True))
    return apply("NotEqual", [x, y])


def is_finite(x, name=None) -> Tensor:
    """True where ``x`` is neither infinite nor NaN.

    >>> tf.math.is_finite(tf.constant([1.0, np.inf, np.nan]))
    <tf.Tensor: shape=(3,), dtype=bool, numpy=array([ True, False, False])>
    """
    return apply("IsFinite", [x])


def is_nan(x, name=None) -> Tensor:
    """True where ``x`` is NaN.

    >>> tf.math.is_nan(tf.constant([1.0, np.nan]))
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>
    """
    return apply("IsNan", [x])


def is_inf(x, name=None) -> Tensor:
    """True where ``x`` is plus or minus infinity.

    >>> tf.math.is_inf(tf.constant([1.0, -np.inf]))
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>
    """
    return apply("IsInf", [x])


def logical_and(x, y, name=None) -> Tensor:
    """``x and y``, elementwise, on booleans.

    >>> tf.logical_and(tf.constant([True, True]), tf.constant([True, False]))
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>
    """
    return apply("LogicalAnd", [x, y])


def logical_or(x, y, name=None) -> Tensor:
    """``x or y``, elementwise, on booleans.

    >>> tf.logical_or(tf.constant([True, False]), tf.constant([False, False]))
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>
    """
    return apply("LogicalOr", [x, y])


def logical_not(x, name=None) -> Tensor:
    """``not x``, elementwise, on booleans.

    >>> tf.logical_not(tf.constant([True, False]))
    <tf.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>
    """
    return apply("LogicalNot", [x])


__all__ = ["identity", "stop_gradient", "cast", "add", "subtract", "multiply", "scalar_mul",
           "realdiv", "truediv", "divide", "floordiv", "floormod", "mod", "pow", "negative",
           "add_n", "square", "sqrt", "rsqrt", "reciprocal", "exp", "log", "log1p", "expm1", "sin",
           "cos", "tan", "tanh", "sigmoid", "abs", "sign", "floor", "round", "erf", "maximum",
           "minimum", "where", "less", "less_equal", "greater",
           "greater_equal", "equal", "not_equal", "is_finite", "is_nan", "is_inf", "logical_and", "logical_or", "logical_not",
           "Variable"]
