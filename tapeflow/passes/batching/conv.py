"""Batching rules of the convolution and pooling ops.

Where only the data (the input, or the output gradient of an input-gradient op) is batched,
the batch folds into N: one op on [B * N, ...], reshaped back. Where a filter or a filter
gradient is batched, the batch moves into the channels as groups: ``x`` [B, N, .., C] becomes
[N, .., B * C] and the filter [B, .., C, O] becomes [.., C, B * O], a grouped convolution of B
groups (ir/defs/conv.py allows groups as TensorFlow does), whose output channels [B * O] move
back to the front; a depthwise filter [B, .., C, M] becomes [.., B * C, M] (each channel keeps
its M filters). MaxPoolWithArgmax counting the batch in its indices has no rule: vectorize
loops over the batch.
"""
from ...ir.defs.conv import DEPTHWISE, SPATIAL
from .registry import batching


def _fold(b, v, flag, shape):
    """A value as [B * N, ...]: batched ones reshaped, shared ones broadcast first."""
    v = b.broadcast(v, flag, shape)
    return b.reshape(v, (b.size * shape[0],) + tuple(shape[1:]))


def _unfold(b, v):
    s = tuple(v.aval.shape)
    return b.reshape(v, (b.size, s[0] // b.size) + s[1:])


def _known(shape):
    return all(d is not None for d in shape)


def _channels_in(b, v, flag, shape):
    """[B, N, ..., C] (or shared [N, ..., C]) as [N, ..., B * C]."""
    v = b.broadcast(v, flag, shape)
    r = len(shape)
    v = b.emit1("Transpose", [v], {"perm": tuple(range(1, r)) + (0, r)})
    return b.reshape(v, tuple(shape[:-1]) + (b.size * shape[-1],))


def _channels_out(b, v):
    """[N, ..., B * O] as [B, N, ..., O]."""
    s = tuple(v.aval.shape)
    v = b.reshape(v, s[:-1] + (b.size, s[-1] // b.size))
    r = len(s)
    return b.emit1("Transpose", [v], {"perm": (r - 1,) + tuple(range(r - 1)) + (r,)})


def _filter_in(b, w, flag, shape):
    """A filter [B, .., Cg, O] (or shared) as [.., Cg, B * O]."""
    w = b.broadcast(w, flag, shape)
    r = len(shape)
    w = b.emit1("Transpose", [w], {"perm": tuple(range(1, r)) + (0, r)})
    return b.reshape(w, tuple(shape[:-1]) + (b.size * shape[-1],))


def _dw_filter_in(b, w, flag, shape):
    """A depthwise filter [B, kh, kw, C, M] (or shared) as [kh, kw, B * C, M]: the batch
    joins the channels, each channel keeping its M filters."""
    w = b.broadcast(w, flag, shape)
    w = b.emit1("Transpose", [w], {"perm": (1, 2, 0, 3, 4)})
    return b.reshape(w, (shape[0], shape[1], b.size * shape[2], shape[3]))


def _dw_filter_out(b, v):
    """[kh, kw, B * C, M] as [B, kh, kw, C, M]."""
    kh, kw, bc, m = v.aval.shape
    v = b.reshape(v, (kh, kw, b.size, bc // b.size, m))
    return b.emit1("Transpose", [v], {"perm": (2, 0, 1, 3, 4)})


def _forward(b, node, inputs, batched):
    (x, w), (fx, fw) = inputs, batched
    xs, ws = node.inputs[0].aval.shape, node.inputs[1].aval.shape
    if not fw:
        return [(_unfold(b, b.emit1(node.op, [_fold(b, x, fx, xs), w], node.attrs)), True)]
    if not (_known(xs) and _known(ws)):
        return None
    filt = _dw_filter_in if node.op in DEPTHWISE else _filter_in
    y = b.emit1(node.op, [_channels_in(b, x, fx, xs), filt(b, w, fw, ws)], node.attrs)
    return [(_channels_out(b, y), True)]


def _backprop_input(b, node, inputs, batched):
    w, dy = inputs[:2]
    fw, fdy = batched[:2]
    ws, dys = node.inputs[1].aval.shape[:0] or node.inputs[0].aval.shape, node.inputs[1].aval.shape
    xs = tuple(node.outputs[0].aval.shape)
    attrs = dict(node.attrs)
    if not fw:
        if not _known(xs):
            return None
        attrs["input_sizes"] = (b.size * xs[0],) + xs[1:]
        y = b.emit1(node.op, [w, _fold(b, dy, fdy, dys)], attrs)
        return [(_unfold(b, y), True)]
    if not (_known(xs) and _known(ws) and _known(dys)):
        return None
    attrs["input_sizes"] = xs[:-1] + (b.size * xs[-1],)
    filt = _dw_filter_in if node.op in DEPTHWISE else _filter_in
    y = b.emit1(node.op, [filt(b, w, fw, ws), _channels_in(b, dy, fdy, dys)], attrs)
    return [(_channels_out(b, y), True)]


def _backprop_filter(b, node, inputs, batched):
    x, dy = inputs[:2]
    fx, fdy = batched[:2]
    xs, dys = node.inputs[0].aval.shape, node.inputs[1].aval.shape
    ws = tuple(node.outputs[0].aval.shape)
    if not (_known(xs) and _known(ws) and _known(dys)):
        return None
    if node.op in DEPTHWISE:
        attrs = dict(node.attrs, filter_sizes=(ws[0], ws[1], b.size * ws[2], ws[3]))
        y = b.emit1(node.op, [_channels_in(b, x, fx, xs), _channels_in(b, dy, fdy, dys)], attrs)
        return [(_dw_filter_out(b, y), True)]
    attrs = dict(node.attrs, filter_sizes=ws[:-1] + (b.size * ws[-1],))
    y = b.emit1(node.op, [_channels_in(b, x, fx, xs), _channels_in(b, dy, fdy, dys)], attrs)
    return [(_channels_out(b, y), True)]


def _pool(b, node, inputs, batched):
    """Every input is [N, ...] with its rows independent: all fold into N."""
    if node.attrs.get("include_batch_in_index"):
        return None
    shapes = [x.aval.shape for x in node.inputs]
    if len(inputs) > 1 and not all(_known(s) for s in shapes):
        return None
    args = [_fold(b, v, f, s) for v, f, s in zip(inputs, batched, shapes)]
    attrs = dict(node.attrs)
    if "orig_input_shape" in attrs:
        s = tuple(node.outputs[0].aval.shape)
        if not _known(s):
            return None
        attrs["orig_input_shape"] = (b.size * s[0],) + s[1:]
    outs = b.emit(node.op, args, attrs)
    return [(_unfold(b, o), True) for o in outs]


_FORWARD = ("Conv2D", "Conv3D", "DepthwiseConv2dNative")
_INPUT = ("Conv2DBackpropInput", "Conv3DBackpropInputV2", "DepthwiseConv2dNativeBackpropInput")
_FILTER = ("Conv2DBackpropFilter", "Conv3DBackpropFilterV2",
           "DepthwiseConv2dNativeBackpropFilter")
batching(*_FORWARD)(_forward)
batching(*_INPUT)(_backprop_input)
batching(*_FILTER)(_backprop_filter)
batching(*(op for op in SPATIAL if op not in _FORWARD + _INPUT + _FILTER))(_pool)
