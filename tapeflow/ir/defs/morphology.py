"""Grayscale morphology: TensorFlow's Dilation2D and its two backprop ops, NHWC.

``output[b, y, x, c] = max over (dy, dx) of input[b, y * sh + dy * rh - pad_top,
x * sw + dx * rw - pad_left, c] + filter[dy, dx, c]``, positions outside the input skipped
(an output whose window holds none is the dtype's lowest value). The window geometry is the
convolution's (ir/defs/conv.py ``window``) with ``rates`` as the dilations. The backprop ops
send each output gradient to the position of its window's first maximum (row-major),
TensorFlow's CPU kernels. TensorFlow's erosion2d is a composite of Dilation2D.
"""
from ...errors import InferError
from ..opdef import AVal, FLOATS, INTS, check_dtype, check_same_dtype, defop
from .conv import _differ, _spatial_out

DTYPES = FLOATS + INTS
ATTRS = {"strides": "ints", "rates": "ints", "padding": "str"}


def window_attrs(strides, rates, padding):
    """The convolution window attributes (ir/defs/conv.py) of a morphology op."""
    return {"strides": tuple(strides), "dilations": tuple(rates), "padding": padding}


def _check(x, f, strides, rates, padding):
    check_dtype(x, DTYPES)
    if len(x.shape) != 4:
        raise InferError(f"input must be 4-dimensional{list(x.shape)}")
    if len(f.shape) != 3:
        raise InferError(f"filter must be 3-dimensional: {list(f.shape)}")
    if _differ(x.shape[3], f.shape[2]):
        raise InferError(f"input and filter must have the same depth: {x.shape[3]} vs "
                         f"{f.shape[2]}")
    for attr, v in (("strides", strides), ("rates", rates)):
        if len(v) < 4:
            raise InferError(f"Length for attr '{attr}' of {len(v)} must be at least minimum 4")
    if len(strides) != 4:
        raise InferError("Sliding window stride field must specify 4 dimensions")
    if len(rates) != 4:
        raise InferError("Sliding window rates field must specify 4 dimensions")
    if strides[0] != 1 or strides[3] != 1:
        raise InferError("Current implementation does not yet support strides in the batch "
                         "and depth dimensions.")
    if rates[0] != 1 or rates[3] != 1:
        raise InferError("Current implementation does not yet support rates in the batch and "
                         "depth dimensions.")
    if any(v < 1 for v in tuple(strides[1:3]) + tuple(rates[1:3])):
        raise InferError("Strides and rates must be positive")
    if padding not in ("SAME", "VALID"):
        raise InferError(f"Value for attr 'padding' of \"{padding}\" is not in the list of "
                         f"allowed values: \"SAME\", \"VALID\"")
    out = _spatial_out(x.shape, f.shape[:2], window_attrs(strides, rates, padding))
    return (x.shape[0],) + tuple(out) + (x.shape[3],)


def _dilation_infer(avals, strides, rates, padding):
    x, f = avals
    dt = check_same_dtype(avals)
    return AVal(_check(x, f, strides, rates, padding), dt)


def _backprop_infer(which):
    def infer(avals, strides, rates, padding):
        x, f, dy = avals
        dt = check_same_dtype(avals)
        out = _check(x, f, strides, rates, padding)
        if len(dy.shape) != 4 or any(_differ(a, b) for a, b in zip(out, dy.shape)):
            raise InferError(f"out_backprop has incompatible size: {list(dy.shape)}, the "
                             f"output's is {list(out)}")
        return AVal(tuple(x.shape if which == "input" else f.shape), dt)
    return infer


def _rows(attrs, flags, in_avals, out_avals):
    """Row b of the output (or input gradient) reads row b of the input and output gradient
    alone, the filter shared."""
    return not flags[1]


defop("Dilation2D", _dilation_infer, arity=2, attrs=dict(ATTRS), same_dtype=(0, 1),
      keeps_rows=_rows)
defop("Dilation2DBackpropInput", _backprop_infer("input"), arity=3, attrs=dict(ATTRS),
      same_dtype=(0, 1, 2), keeps_rows=_rows)
defop("Dilation2DBackpropFilter", _backprop_infer("filter"), arity=3, attrs=dict(ATTRS),
      same_dtype=(0, 1, 2))
