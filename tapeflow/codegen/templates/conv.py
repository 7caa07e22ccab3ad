"""Convolution and pooling (runtime/kernels/conv.py) as calls of the jitted loops of
``codegen/conv_loops.py`` on 5-D channels-last views (a 2-D op gets a unit depth).

Sizes are read from the arrays; the padding before each dimension is written as the size
expression ``ir.defs.conv.window`` gives (SAME padding depends on the input size), so one
source serves every batch and image size. A float convolution whose window holds at least
``GEMM_MIN_WIDTH`` values per group (kh * kw * input channels per group) is im2col + GEMM;
one with fewer (a first layer on one channel), an integer one and a depthwise one are
direct loops: a size class (``sizeclass.choose``) the dump shows.
"""
from ...ir.defs.conv import DEPTHWISE, SPATIAL, geometry, window
from ..emitter import shape_lit
from ..sizeclass import choose
from .registry import stmt_op

GEMM_MIN_WIDTH = 8


def _view(em, expr, shape, lead=1, out=False):
    """``expr`` (a channels-last array of rank 4 or 5) as a 5-D C-contiguous view; an input
    is made contiguous first, an output (an array the template allocated) is one already."""
    shape = tuple(shape)
    src = expr if out else f"np.ascontiguousarray({expr})"
    if len(shape) == 5:
        return src
    five = shape[:lead] + (1,) + shape[lead:] if lead else (1,) + shape
    v = em.fresh("cv")
    em.line(f"{v} = {src}.reshape({shape_lit(five)})")
    return v


def _filter_view(em, expr, shape, out=False):
    return _view(em, expr, shape, lead=0, out=out)


def _pads_before(in_shape, ksize, attrs):
    """The padding before each spatial dimension as source: SAME's is
    ``max((out - 1) * stride + keff - size, 0) // 2`` written as an expression of the sizes,
    so no size is decided on (one program for odd and even sizes)."""
    n = len(in_shape) - 2
    if attrs["padding"] != "SAME":
        return tuple(b for _, b, _ in geometry(in_shape, ksize, attrs))
    dil = attrs.get("dilations") or (1,) * (n + 2)
    out = []
    for i in range(n):
        size, s, keff = in_shape[i + 1], attrs["strides"][i + 1], (ksize[i] - 1) * dil[i + 1] + 1
        o = window(size, ksize[i], s, dil[i + 1], "SAME", pads=False)[0]
        out.append(f"max({(o - 1) * s + keff - size}, 0) // 2")
    return tuple(out)


def _geometry(in_shape, ksize, attrs):
    """(strides, dilations, pads before) as 3 source texts each, depth first."""
    n = len(in_shape) - 2
    s = tuple(attrs["strides"][1:-1])
    d = tuple((attrs.get("dilations") or (1,) * (n + 2))[1:-1])
    p = _pads_before(in_shape, ksize, attrs)
    if n == 2:
        s, d, p = (1,) + s, (1,) + d, (0,) + p
    return ", ".join(str(v) for v in s + d + p)


def _gemm(node, dtype, width):
    if node.op in DEPTHWISE or not dtype.is_floating:
        return False
    return choose(lambda: f"{node.op}: window width {width}",
                  [("window values per group", width, ">=", GEMM_MIN_WIDTH, "GEMM_MIN_WIDTH")],
                  "im2col+GEMM", "direct loops")


def _width(wshape):
    n = len(wshape) - 2
    w = 1
    for k in wshape[:n + 1]:
        w = w * k
    return w


@stmt_op("Conv2D", "Conv3D", "DepthwiseConv2dNative")
def _conv(em, node, **attrs):
    x, w = node.inputs
    (y,) = node.outputs
    n = SPATIAL[node.op]
    geo = _geometry(x.aval.shape, w.aval.shape[:n], attrs)
    out = em.alloc(y)
    xv = _view(em, em.ref(x), x.aval.shape)
    wv = _filter_view(em, em.ref(w), w.aval.shape)
    yv = _view(em, out, y.aval.shape, out=True)
    if _gemm(node, y.aval.dtype, _width(w.aval.shape)):
        em.line(f"rt.conv_gemm({xv}, {wv}, {yv}, {geo})")
    else:
        em.line(f"rt.conv_direct_fwd({xv}, {wv}, {yv}, {node.op in DEPTHWISE}, {geo})")


@stmt_op("Conv2DBackpropInput", "Conv3DBackpropInputV2", "DepthwiseConv2dNativeBackpropInput")
def _conv_input(em, node, **attrs):
    w, dy = node.inputs[:2]
    (dx,) = node.outputs
    n = SPATIAL[node.op]
    geo = _geometry(dx.aval.shape, w.aval.shape[:n], attrs)
    out = em.alloc(dx)
    wv = _filter_view(em, em.ref(w), w.aval.shape)
    dyv = _view(em, em.ref(dy), dy.aval.shape)
    xv = _view(em, out, dx.aval.shape, out=True)
    if _gemm(node, dx.aval.dtype, _width(w.aval.shape)):
        em.line(f"rt.conv_input_gemm({wv}, {dyv}, {xv}, {geo})")
    else:
        em.line(f"rt.conv_direct_input({xv}, {wv}, {dyv}, {node.op in DEPTHWISE}, {geo})")


@stmt_op("Conv2DBackpropFilter", "Conv3DBackpropFilterV2", "DepthwiseConv2dNativeBackpropFilter")
def _conv_filter(em, node, **attrs):
    x, dy = node.inputs[:2]
    (dw,) = node.outputs
    n = SPATIAL[node.op]
    geo = _geometry(x.aval.shape, dw.aval.shape[:n], attrs)
    out = em.alloc(dw)
    xv = _view(em, em.ref(x), x.aval.shape)
    dyv = _view(em, em.ref(dy), dy.aval.shape)
    wv = _filter_view(em, out, dw.aval.shape, out=True)
    if _gemm(node, dw.aval.dtype, _width(dw.aval.shape)):
        em.line(f"rt.conv_filter_gemm({xv}, {dyv}, {wv}, {geo})")
    else:
        em.line(f"rt.conv_direct_filter({xv}, {wv}, {dyv}, {node.op in DEPTHWISE}, {geo})")


def _pool_geometry(in_shape, attrs):
    """(window sizes, strides, pads before) as source text, depth first."""
    n = len(in_shape) - 2
    k = tuple(attrs["ksize"][1:-1])
    s = tuple(attrs["strides"][1:-1])
    p = _pads_before(in_shape, k, attrs)
    if n == 2:
        k, s, p = (1,) + k, (1,) + s, (0,) + p
    return ", ".join(str(v) for v in k + s + p)


@stmt_op("MaxPool", "MaxPool3D", "MaxPoolWithArgmax")
def _max_pool(em, node, **attrs):
    x = node.inputs[0]
    geo = _pool_geometry(x.aval.shape, attrs)
    outs = [em.alloc(v) for v in node.outputs]
    xv = _view(em, em.ref(x), x.aval.shape)
    views = [_view(em, o, v.aval.shape, out=True) for o, v in zip(outs, node.outputs)]
    if node.op == "MaxPoolWithArgmax":
        batch = bool(attrs.get("include_batch_in_index"))
        em.line(f"rt.pool_max({xv}, {views[0]}, {views[1]}, 1, {geo}, {batch})")
    else:
        em.line(f"rt.pool_max({xv}, {views[0]}, {views[0]}, 0, {geo}, False)")


@stmt_op("MaxPoolGrad", "MaxPool3DGrad", "MaxPoolGradGrad", "MaxPool3DGradGrad")
def _max_pool_grad(em, node, **attrs):
    x, _, g = node.inputs
    (y,) = node.outputs
    geo = _pool_geometry(x.aval.shape, attrs)
    out = em.alloc(y)
    xv = _view(em, em.ref(x), x.aval.shape)
    gv = _view(em, em.ref(g), g.aval.shape)
    ov = _view(em, out, y.aval.shape, out=True)
    mode = 1 if node.op.endswith("GradGrad") else 0
    em.line(f"rt.pool_max_grad({xv}, {gv}, {ov}, {mode}, {geo})")


@stmt_op("AvgPool", "AvgPool3D")
def _avg_pool(em, node, **attrs):
    (x,), (y,) = node.inputs, node.outputs
    geo = _pool_geometry(x.aval.shape, attrs)
    out = em.alloc(y)
    xv = _view(em, em.ref(x), x.aval.shape)
    yv = _view(em, out, y.aval.shape, out=True)
    em.line(f"rt.pool_avg({xv}, {yv}, 0, {geo})")


@stmt_op("AvgPoolGrad", "AvgPool3DGrad")
def _avg_pool_grad(em, node, **attrs):
    g = node.inputs[0]
    (dx,) = node.outputs
    geo = _pool_geometry(dx.aval.shape, attrs)
    out = em.alloc(dx)
    gv = _view(em, em.ref(g), g.aval.shape)
    xv = _view(em, out, dx.aval.shape, out=True)
    em.line(f"rt.pool_avg({xv}, {gv}, 1, {geo})")
