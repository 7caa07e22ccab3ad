"""Convolution and pooling ops (TensorFlow's Conv2D, Conv3D, DepthwiseConv2dNative, MaxPool,
AvgPool, ... with their gradient ops), channels-last (NHWC / NDHWC) only.

TensorFlow's CPU runs ``NCHW`` by transposing around the NHWC kernel; the public functions
(ops/conv.py) do the same, so no op here carries a ``data_format``.

Window geometry (``window``) is shared by every op, the NumPy kernels and the codegen
templates: it works on plain ints and on codegen's symbolic sizes alike (only ``+ - * //``
and comparisons), so a compiled program reads its sizes from its arguments.

The input-gradient ops (``Conv2DBackpropInput``, ``AvgPoolGrad``, ...) take the shape of the
tensor they rebuild as an attribute (``input_sizes``), as TensorFlow's take a shape tensor;
a gradient rule instead passes that tensor itself as an optional last input (``like``) and
an empty attribute: its sizes give the output's, so a compiled gradient reads them from its
arguments and its source is the same text for every size.
"""
from ...errors import InferError
from ..opdef import AVal, FLOATS, check_dtype, check_same_dtype, defop
from .. import dtypes as D

PADDINGS = ("SAME", "VALID", "EXPLICIT")
CONV_DTYPES = FLOATS + (D.int32,)
POOL_DTYPES = FLOATS
MAX_POOL_DTYPES = FLOATS + (D.int8, D.int16, D.int32, D.int64, D.uint8)

# op name -> number of spatial dimensions
SPATIAL = {}


def _check_window_attrs(op, rank, strides, padding, explicit_paddings=(), dilations=None,
                        ksize=None):
    n = rank - 2
    if len(strides) != rank:
        raise InferError(f"Sliding window strides field must specify {rank} dimensions")
    if strides[0] != 1 or strides[-1] != 1:
        raise InferError("Current implementation does not yet support strides in the batch "
                         "and depth dimensions.")
    if any(s < 1 for s in strides[1:-1]):
        raise InferError("Row and column strides should be larger than 0." if n == 2 else
                         "Spatial strides should be larger than 0.")
    if ksize is not None:
        if len(ksize) != rank:
            raise InferError(f"Sliding window ksize field must specify {rank} dimensions")
        if ksize[0] != 1 or ksize[-1] != 1:
            raise InferError("Pooling is not yet supported on the batch dimension."
                             if ksize[0] != 1 else
                             "Pooling is not yet supported on the depth dimension.")
        if any(k < 1 for k in ksize[1:-1]):
            raise InferError(f"Sliding window ksize for dimension must be positive: {list(ksize)}")
    if dilations is not None:
        if len(dilations) != rank:
            raise InferError(f"Sliding window dilations field must specify {rank} dimensions")
        if dilations[0] != 1 or dilations[-1] != 1:
            raise InferError("Current implementation does not yet support dilations in the "
                             "batch and depth dimensions.")
        if any(d < 1 for d in dilations[1:-1]):
            raise InferError("Dilated rates should be larger than 0.")
    if padding not in PADDINGS:
        raise InferError(f"Value for attr 'padding' of \"{padding}\" is not in the list of "
                         f"allowed values: \"SAME\", \"VALID\", \"EXPLICIT\"")
    if padding == "EXPLICIT":
        if len(explicit_paddings) != 2 * rank:
            raise InferError(f"explicit_paddings attribute must contain {2 * rank} values, but "
                             f"got: {len(explicit_paddings)}")
        if any(p < 0 for p in explicit_paddings):
            raise InferError("All elements of explicit_paddings must be nonnegative")
        if any(explicit_paddings[i] for i in (0, 1, 2 * rank - 2, 2 * rank - 1)):
            raise InferError("Nonzero explicit padding in the batch or depth dimensions is not "
                             "supported")
    elif explicit_paddings:
        raise InferError("explicit_paddings attribute must be empty if the padding attribute "
                         "is not EXPLICIT")


def window(size, k, stride, dilation, padding, explicit=(0, 0), pads=True):
    """(output size, padding before, padding after) of one spatial dimension, TensorFlow's
    GetWindowedOutputSizeVerbose: SAME gives ceil(size / stride) outputs and pads the
    difference, the smaller half before; VALID pads nothing; EXPLICIT pads as told.
    ``pads=False``: (output size, None, None), deciding nothing on the sizes for SAME (shape
    inference; a compiled program writes SAME's padding as an expression, templates/conv.py)."""
    keff = (k - 1) * dilation + 1
    if padding == "SAME":
        out = (size + stride - 1) // stride
        if not pads:
            return out, None, None
        need = (out - 1) * stride + keff - size
        total = need if need > 0 else 0
        return out, total // 2, total - total // 2
    before, after = explicit if padding == "EXPLICIT" else (0, 0)
    out = (size + before + after - keff + stride) // stride
    if out < 0:
        raise InferError(f"Computed output size would be negative: {out} [input_size: {size}, "
                         f"effective_filter_size: {keff}, stride: {stride}]")
    return out, before, after


def geometry(in_shape, ksize, attrs):
    """Per spatial dimension (out, pad_before, pad_after) for an input of shape ``in_shape``
    (N, *spatial, C) and window sizes ``ksize`` (spatial only) under the op's ``attrs``."""
    n = len(in_shape) - 2
    strides = attrs["strides"]
    dil = attrs.get("dilations") or (1,) * (n + 2)
    padding = attrs["padding"]
    ex = attrs.get("explicit_paddings") or ()
    out = []
    for i in range(n):
        pair = (ex[2 * (i + 1)], ex[2 * (i + 1) + 1]) if padding == "EXPLICIT" else (0, 0)
        out.append(window(in_shape[i + 1], ksize[i], strides[i + 1], dil[i + 1], padding, pair))
    return out


def _known(*dims):
    return all(d is not None for d in dims)


def _differ(a, b):
    """Whether two known sizes differ, as a check that only raises: compared as plain ints,
    so codegen's symbolic sizes (codegen/dims.py) record no guard for it (a program's shapes
    are inferred again with plain sizes before it runs, and fail there)."""
    return a is not None and b is not None and int.__ne__(int(a) if type(a) is bool else a, b)


def _spatial_out(in_shape, ksize, attrs):
    """Output spatial sizes (None where the input's or the window's is unknown)."""
    n = len(in_shape) - 2
    strides = attrs["strides"]
    dil = attrs.get("dilations") or (1,) * (n + 2)
    ex = attrs.get("explicit_paddings") or ()
    res = []
    for i in range(n):
        if in_shape[i + 1] is None or ksize[i] is None:
            res.append(None)
            continue
        pair = (ex[2 * i + 2], ex[2 * i + 3]) if attrs["padding"] == "EXPLICIT" else (0, 0)
        res.append(window(in_shape[i + 1], ksize[i], strides[i + 1], dil[i + 1],
                          attrs["padding"], pair, pads=False)[0])
    return res


# -- convolutions ---------------------------------------------------------------------

def _rank_check(aval, rank, what):
    if len(aval.shape) != rank:
        raise InferError(f"{what} must be {rank}-dimensional: {list(aval.shape)}")


def _conv_out(x_shape, w_shape, attrs, depthwise):
    """The output shape of a convolution of ``x_shape`` by ``w_shape``."""
    n = len(x_shape) - 2
    cin, wc, wo = x_shape[-1], w_shape[-2], w_shape[-1]
    if depthwise:
        if _differ(cin, wc):
            raise InferError(f"input and filter must have the same depth: {cin} vs {wc}")
        cout = cin * wo if _known(cin, wo) else None
    else:
        if _known(cin, wc):
            if wc == 0 or cin % wc:
                raise InferError(f"input depth must be evenly divisible by filter depth: "
                                 f"{cin} vs {wc}")
            groups = cin // wc
            if _known(wo) and wo % groups:
                raise InferError(f"output depth must be evenly divisible by number of groups: "
                                 f"{wo} vs {groups}")
        cout = wo
    return (x_shape[0],) + tuple(_spatial_out(x_shape, w_shape[:n], attrs)) + (cout,)


def _conv_attrs_check(name, rank, attrs):
    _check_window_attrs(name, rank, attrs["strides"], attrs["padding"],
                        attrs.get("explicit_paddings") or (), attrs.get("dilations"))


def _conv_infer(name, rank, depthwise):
    def infer(avals, **attrs):
        x, w = avals
        dt = check_same_dtype(avals)
        check_dtype(x, CONV_DTYPES if not depthwise else FLOATS)
        _rank_check(x, rank, "input" if rank == 4 else "input")
        _rank_check(w, rank, "filter")
        _conv_attrs_check(name, rank, attrs)
        return AVal(_conv_out(x.shape, w.shape, attrs, depthwise), dt)
    return infer


def _sizes_from(avals, attr_sizes, what):
    """The rebuilt tensor's shape: the ``like`` input's when given, else the attribute's."""
    if len(avals) == 3:
        like = avals[2].shape
        if attr_sizes and (len(like) != len(attr_sizes) or any(
                _differ(a, b) for a, b in zip(attr_sizes, like))):
            raise InferError(f"{what} {list(attr_sizes)} does not match the shape "
                             f"{list(like)} of the tensor given for it")
        return tuple(like)
    return tuple(attr_sizes)


def _backprop_input_infer(name, rank, depthwise):
    def infer(avals, **attrs):
        if len(avals) not in (2, 3):
            raise InferError(f"takes the filter, the output gradient and optionally a tensor "
                             f"of the input's shape; got {len(avals)} inputs")
        w, dy = avals[:2]
        dt = check_same_dtype(avals[:2])
        check_dtype(w, CONV_DTYPES if not depthwise else FLOATS)
        sizes = attrs["input_sizes"]
        if len(sizes) != rank and not (len(avals) == 3 and not sizes):
            raise InferError(f"input_sizes must be {rank}-dimensional, got {list(sizes)}")
        _rank_check(w, rank, "filter")
        _rank_check(dy, rank, "out_backprop")
        _conv_attrs_check(name, rank, attrs)
        shape = _sizes_from(avals, sizes, "input_sizes")
        want = _conv_out(shape, w.shape, attrs, depthwise)
        _check_backprop_shape(want, dy.shape, "out_backprop")
        return AVal(shape, dt)
    return infer


def _backprop_filter_infer(name, rank, depthwise):
    def infer(avals, **attrs):
        if len(avals) not in (2, 3):
            raise InferError(f"takes the input, the output gradient and optionally a tensor "
                             f"of the filter's shape; got {len(avals)} inputs")
        x, dy = avals[:2]
        dt = check_same_dtype(avals[:2])
        check_dtype(x, CONV_DTYPES if not depthwise else FLOATS)
        sizes = attrs["filter_sizes"]
        if len(sizes) != rank and not (len(avals) == 3 and not sizes):
            raise InferError(f"filter_sizes must be {rank}-dimensional, got {list(sizes)}")
        _rank_check(x, rank, "input")
        _rank_check(dy, rank, "out_backprop")
        _conv_attrs_check(name, rank, attrs)
        shape = _sizes_from(avals, sizes, "filter_sizes")
        want = _conv_out(x.shape, shape, attrs, depthwise)
        _check_backprop_shape(want, dy.shape, "out_backprop")
        return AVal(shape, dt)
    return infer


def _check_backprop_shape(want, got, what):
    if len(want) != len(got) or any(_differ(a, b) for a, b in zip(want, got)):
        raise InferError(f"Conv{len(want) - 2}DBackprop: {what} has shape {list(got)}, but the "
                         f"forward convolution's output has shape {list(want)}")


def _batch_rows(attrs, flags, in_avals, out_avals):
    """Row b of the output is a function of row b of the batched input alone (the filter
    shared)."""
    return flags[0] and not any(flags[1:])


def _backprop_input_rows(attrs, flags, in_avals, out_avals):
    return flags[1] and not flags[0]


_CONV_ATTRS = {"strides": "ints", "padding": "str", "explicit_paddings": "ints",
               "dilations": "ints"}
_CONV3_ATTRS = {"strides": "ints", "padding": "str", "dilations": "ints"}


def _def_conv(fwd, bin_, bfil, rank, depthwise, attrs):
    SPATIAL.update({fwd: rank - 2, bin_: rank - 2, bfil: rank - 2})
    defop(fwd, _conv_infer(fwd, rank, depthwise), arity=2, attrs=dict(attrs), same_dtype=(0, 1),
          keeps_rows=_batch_rows)
    defop(bin_, _backprop_input_infer(bin_, rank, depthwise), arity=None,
          attrs=dict(attrs, input_sizes="shape"), keeps_rows=_backprop_input_rows)
    defop(bfil, _backprop_filter_infer(bfil, rank, depthwise), arity=None,
          attrs=dict(attrs, filter_sizes="shape"))


_def_conv("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", 4, False, _CONV_ATTRS)
_def_conv("Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2", 5, False, _CONV3_ATTRS)
_def_conv("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
          "DepthwiseConv2dNativeBackpropFilter", 4, True, _CONV_ATTRS)
DEPTHWISE = ("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
             "DepthwiseConv2dNativeBackpropFilter")

# -- pooling --------------------------------------------------------------------------


def _pool_attrs_check(rank, attrs):
    _check_window_attrs("pool", rank, attrs["strides"], attrs["padding"],
                        attrs.get("explicit_paddings") or (), None, attrs["ksize"])


def _pool_out(shape, attrs):
    n = len(shape) - 2
    return (shape[0],) + tuple(_spatial_out(shape, attrs["ksize"][1:-1], attrs)) + (shape[-1],)


def _pool_infer(rank, allowed):
    def infer(avals, **attrs):
        (x,) = avals
        check_dtype(x, allowed)
        _rank_check(x, rank, "input")
        _pool_attrs_check(rank, attrs)
        return AVal(_pool_out(x.shape, attrs), x.dtype)
    return infer


def _same_shape(a, b, what):
    if len(a) != len(b) or any(_differ(p, q) for p, q in zip(a, b)):
        raise InferError(f"{what}: shapes {list(a)} and {list(b)} must be equal")


def _max_pool_grad_infer(rank, grad_grad):
    def infer(avals, **attrs):
        x, y, g = avals
        dt = check_same_dtype(avals)
        check_dtype(x, MAX_POOL_DTYPES)
        for a, what in zip(avals, ("orig_input", "orig_output", "grad")):
            _rank_check(a, rank, what)
        _pool_attrs_check(rank, attrs)
        out = _pool_out(x.shape, attrs)
        _same_shape(out, y.shape, "orig_output")
        _same_shape(x.shape if grad_grad else out, g.shape, "grad")
        return AVal(out if grad_grad else x.shape, dt)
    return infer


def _avg_pool_grad_infer(rank):
    def infer(avals, **attrs):
        if len(avals) not in (1, 2):
            raise InferError(f"takes the output gradient and optionally a tensor of the "
                             f"input's shape; got {len(avals)} inputs")
        g = avals[0]
        check_dtype(g, POOL_DTYPES)
        _rank_check(g, rank, "grad")
        _pool_attrs_check(rank, attrs)
        sizes = attrs["orig_input_shape"]
        if len(sizes) != rank and not (len(avals) == 2 and not sizes):
            raise InferError(f"orig_input_shape must be {rank}-dimensional, got {list(sizes)}")
        shape = (tuple(avals[1].shape) if len(avals) == 2 else tuple(sizes))
        if len(avals) == 2:
            _sizes_from([None, None, avals[1]], sizes, "orig_input_shape")
        _same_shape(_pool_out(shape, attrs), g.shape, "grad")
        return AVal(shape, g.dtype)
    return infer


def _pool_rows(attrs, flags, in_avals, out_avals):
    return True


_POOL_ATTRS = {"ksize": "ints", "strides": "ints", "padding": "str", "explicit_paddings": "ints"}
_POOL3_ATTRS = {"ksize": "ints", "strides": "ints", "padding": "str"}

for _rank, _sfx, _attrs in ((4, "", _POOL_ATTRS), (5, "3D", _POOL3_ATTRS)):
    SPATIAL.update({f"MaxPool{_sfx}": _rank - 2, f"MaxPool{_sfx}Grad": _rank - 2,
                    f"MaxPool{_sfx}GradGrad": _rank - 2, f"AvgPool{_sfx}": _rank - 2,
                    f"AvgPool{_sfx}Grad": _rank - 2})
    defop(f"MaxPool{_sfx}", _pool_infer(_rank, MAX_POOL_DTYPES if _rank == 4 else FLOATS),
          attrs=dict(_attrs), keeps_rows=_pool_rows)
    defop(f"MaxPool{_sfx}Grad", _max_pool_grad_infer(_rank, False), arity=3,
          attrs=dict(_attrs), same_dtype=(0, 1, 2), keeps_rows=_pool_rows)
    defop(f"MaxPool{_sfx}GradGrad", _max_pool_grad_infer(_rank, True), arity=3,
          attrs=dict(_attrs), same_dtype=(0, 1, 2), keeps_rows=_pool_rows)
    defop(f"AvgPool{_sfx}", _pool_infer(_rank, POOL_DTYPES), attrs=dict(_attrs),
          keeps_rows=_pool_rows)
    defop(f"AvgPool{_sfx}Grad", _avg_pool_grad_infer(_rank), arity=None,
          attrs=dict(_attrs, orig_input_shape="shape"), keeps_rows=_pool_rows)


def _argmax_infer(avals, ksize, strides, padding, Targmax, include_batch_in_index=False):
    (x,) = avals
    check_dtype(x, MAX_POOL_DTYPES)
    _rank_check(x, 4, "input")
    attrs = {"ksize": ksize, "strides": strides, "padding": padding}
    if padding not in ("SAME", "VALID"):
        raise InferError(f"Value for attr 'padding' of \"{padding}\" is not in the list of "
                         f"allowed values: \"SAME\", \"VALID\"")
    _pool_attrs_check(4, attrs)
    if D.as_dtype(Targmax) not in (D.int32, D.int64):
        raise InferError(f"Targmax must be int32 or int64, got {D.as_dtype(Targmax).name}")
    out = _pool_out(x.shape, attrs)
    return AVal(out, x.dtype), AVal(out, D.as_dtype(Targmax))


SPATIAL["MaxPoolWithArgmax"] = 2
defop("MaxPoolWithArgmax", _argmax_infer, multi_output=True,
      attrs={"ksize": "ints", "strides": "ints", "padding": "str", "Targmax": "dtype",
             "include_batch_in_index": "bool"}, keeps_rows=_pool_rows)
