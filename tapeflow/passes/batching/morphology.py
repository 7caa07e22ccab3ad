"""Batching rule of Dilation2D and its backprop ops: every channel is its own problem, so
the batch joins the channels of every input ([B, N, H, W, C] -> [N, H, W, B * C], a filter
[B, kh, kw, C] -> [kh, kw, B * C]) and leaves the output's channels ([.., B * C] ->
[B, .., C])."""
from .conv import _channels_in, _channels_out, _known
from .registry import batching


@batching("Dilation2D", "Dilation2DBackpropInput", "Dilation2DBackpropFilter")
def _morphology(b, node, inputs, batched):
    shapes = [tuple(v.aval.shape) for v in node.inputs]
    if not all(_known(s) for s in shapes):
        return None
    args = [_channels_in(b, v, f, s) for v, f, s in zip(inputs, batched, shapes)]
    y = b.emit1(node.op, args, dict(node.attrs))
    return [(_channels_out(b, y), True)]
