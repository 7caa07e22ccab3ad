"""Local response normalization: LRN and its gradient LRNGrad (TensorFlow's op names).

TensorFlow takes half, bfloat16 and float32 only; float64 is accepted here too (so the
gradient is checked in float64 like every other op's), every other dtype is refused.
"""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import AVal, check_dtype, defop
from ..shapes import shapes_compatible

LRN_DTYPES = (D.float16, D.float32, D.float64)
LRN_ATTRS = {"depth_radius": "int", "bias": "number", "alpha": "number", "beta": "number"}


def _check_radius(depth_radius):
    if depth_radius < 0:
        raise InferError(f"depth_radius = {depth_radius} larger than int max")


def _lrn(avals, depth_radius, bias, alpha, beta):
    (x,) = avals
    check_dtype(x, LRN_DTYPES)
    if len(x.shape) != 4:
        raise InferError("in must be 4-dimensional")
    _check_radius(depth_radius)
    return AVal(x.shape, x.dtype)


def _lrn_grad(avals, depth_radius, bias, alpha, beta):
    grads, image, out = avals
    for a in avals:
        check_dtype(a, LRN_DTYPES)
    if any(len(a.shape) != 4 for a in avals):
        raise InferError("inputs must be 4-dimensional")
    if not (shapes_compatible(grads.shape, image.shape) and shapes_compatible(image.shape, out.shape)):
        raise InferError("input_grads, input_image, and out_image should have the same shape")
    if not grads.dtype == image.dtype == out.dtype:
        raise InferError("input_grads, input_image, and out_image should have the same dtype")
    _check_radius(depth_radius)
    return AVal(image.shape, image.dtype)


defop("LRN", _lrn, attrs=LRN_ATTRS)
defop("LRNGrad", _lrn_grad, arity=3, attrs=LRN_ATTRS)
